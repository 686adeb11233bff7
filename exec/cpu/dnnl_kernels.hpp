// Internal to the CPU backend: the oneDNN context shared by the kernels, small helpers, and one factory per
// family of layers (dnnl_conv_fc.cpp, dnnl_norm_pool.cpp, plain_kernels.cpp).
#pragma once

#include <memory>
#include <oneapi/dnnl/dnnl.hpp>

#include "exec/backend.hpp"

namespace scaletwin::exec::cpu {

struct DnnlContext {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
};

// A plain (row-major, "abcd...") memory descriptor of these dims.
dnnl::memory::desc plain_md(const dnnl::memory::dims& dims);
dnnl::memory::dims nchw_dims(int64_t batch, const models::Shape& s);
// An activation of these NCHW dims in layout `block` (LayerDesc::in_blocks): plain, nChw8c or nChw16c.
dnnl::memory::desc activation_md(const dnnl::memory::dims& nchw, int block);
// The channel block of the blocked layout oneDNN's convolutions choose on this CPU (16, 8, or 0 for plain).
int preferred_block(const DnnlContext& ctx);
// A memory object over a caller's pointer (oneDNN takes non-const handles; inputs are never written).
dnnl::memory wrap(const DnnlContext& ctx, const dnnl::memory::desc& md, const float* data);
// Right padding that makes a window of extent `window` (dilation included) with `stride` and left padding
// `pad_l` produce exactly `out` outputs from `in` (covers floor and ceil modes).
int64_t right_padding(int64_t in, int64_t out, int64_t window, int64_t stride, int64_t pad_l);

std::unique_ptr<LayerKernel> make_conv_kernel(const DnnlContext& ctx, const LayerDesc& desc);
std::unique_ptr<LayerKernel> make_fc_kernel(const DnnlContext& ctx, const LayerDesc& desc);
std::unique_ptr<LayerKernel> make_batchnorm_kernel(const DnnlContext& ctx, const LayerDesc& desc);
std::unique_ptr<LayerKernel> make_pool_kernel(const DnnlContext& ctx, const LayerDesc& desc);
std::unique_ptr<LayerKernel> make_relu_kernel(const DnnlContext& ctx, const LayerDesc& desc);
// add, concat, flatten, dropout, drop_path, softmax cross-entropy, max pooling
std::unique_ptr<LayerKernel> make_plain_kernel(const LayerDesc& desc);
// sigmoid, silu, hardswish, mul (activation_kernels.cpp), in any activation layout
std::unique_ptr<LayerKernel> make_activation_kernel(const LayerDesc& desc);

}  // namespace scaletwin::exec::cpu
