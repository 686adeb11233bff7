// Helpers shared by the oneDNN kernels of the CPU backend: plain and blocked memory descriptors, the block the
// convolutions prefer, wrapping caller pointers, and the right padding that reproduces a given output size (floor or ceil mode).
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

memory::desc activation_md(const memory::dims& nchw, int block) {
  ST_ASSERT(nchw.size() == 4, "a blocked activation is 4-D");
  switch (block) {
    case 0:
      return plain_md(nchw);
    case 8:
      return memory::desc(nchw, memory::data_type::f32, memory::format_tag::nChw8c);
    case 16:
      return memory::desc(nchw, memory::data_type::f32, memory::format_tag::nChw16c);
    default:
      ST_ASSERT(false, "unsupported activation block");
      return {};
  }
}

int preferred_block(const DnnlContext& ctx) {
  // What a typical 3 × 3 convolution picks for its destination when left free.
  const memory::dims src{2, 64, 8, 8}, weights{64, 64, 3, 3};
  const auto any = [](const memory::dims& d) { return memory::desc(d, memory::data_type::f32, memory::format_tag::any); };
  const dnnl::convolution_forward::primitive_desc pd(
      {dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, any(src), any(weights), any(src),
       {1, 1}, {1, 1}, {1, 1}},
      ctx.engine);
  for (int block : {16, 8})
    if (pd.dst_desc() == activation_md(src, block)) return block;
  return 0;
}

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
