// Helpers shared by the oneDNN kernels of the CPU backend: plain memory descriptors, wrapping caller pointers,
// and the right padding that reproduces a given output size (floor or ceil mode).
#include "core/error.hpp"
#include "exec/cpu/dnnl_kernels.hpp"

namespace scaletwin::exec::cpu {

using dnnl::memory;

memory::desc plain_md(const memory::dims& dims) {
  static constexpr memory::format_tag kTags[] = {memory::format_tag::undef, memory::format_tag::a,
                                                 memory::format_tag::ab,    memory::format_tag::abc,
                                                 memory::format_tag::abcd,  memory::format_tag::abcde};
  ST_ASSERT(!dims.empty() && dims.size() <= 5, "unsupported tensor rank");
  return memory::desc(dims, memory::data_type::f32, kTags[dims.size()]);
}

memory::dims nchw_dims(int64_t batch, const models::Shape& s) { return {batch, s.c, s.h, s.w}; }

memory wrap(const DnnlContext& ctx, const memory::desc& md, const float* data) {
  return memory(md, ctx.engine, const_cast<float*>(data));
}

int64_t right_padding(int64_t in, int64_t out, int64_t window, int64_t stride, int64_t pad_l) {
  // out = floor((in + pad_l + pad_r - window) / stride) + 1; the smallest pad_r >= -pad_l giving `out`.
  int64_t pad_r = (out - 1) * stride + window - in - pad_l;
  ST_ASSERT((in + pad_l + pad_r - window) / stride + 1 == out, "inconsistent window geometry");
  return pad_r;
}

}  // namespace scaletwin::exec::cpu
