// Descriptor and GEMM parameters of the CUDA backend's layers, and the workspace policy (see layer_plan.hpp).
#include "exec/cuda/layer_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>

#include "core/error.hpp"

namespace scaletwin::exec::cuda {
namespace {

int to_int(int64_t v, const std::string& layer, const char* what) {
  if (v < 0 || v > INT_MAX)
    throw InputError(fmt::format("layer '{}': {} = {} is outside the int range of cuDNN's descriptors", layer,
                                 what, v));
  return static_cast<int>(v);
}

const std::string& layer_name(const LayerDesc& desc) {
  ST_ASSERT(desc.layer != nullptr && desc.batch > 0 && !desc.in_shapes.empty(), "layer description incomplete");
  return desc.layer->name;
}

// cuDNN's output size of a window geometry with symmetric padding (floor mode).
int64_t floor_output(int64_t in, int64_t window, int64_t stride, int64_t pad) {
  return (in + 2 * pad - window) / stride + 1;
}

}  // namespace

TensorDims packed_nchw(int64_t n, int64_t c, int64_t h, int64_t w, const std::string& layer) {
  to_int(n * c * h * w, layer, "tensor elements");
  TensorDims t;
  t.n = to_int(n, layer, "batch");
  t.c = to_int(c, layer, "channels");
  t.h = to_int(h, layer, "height");
  t.w = to_int(w, layer, "width");
  t.stride_w = 1;
  t.stride_h = t.w;
  t.stride_c = t.h * t.w;
  t.stride_n = t.c * t.h * t.w;
  return t;
}

ConvPlan plan_conv(const LayerDesc& desc) {
  const std::string& name = layer_name(desc);
  const models::ConvParams& p = desc.layer->conv;
  const models::Shape& in = desc.in_shapes[0];
  const models::Shape& out = desc.out_shape;
  ST_ASSERT(p.groups >= 1 && in.c % p.groups == 0 && out.c % p.groups == 0, "bad conv groups in " + name);
  ConvPlan plan;
  plan.x = packed_nchw(desc.batch, in.c, in.h, in.w, name);
  plan.y = packed_nchw(desc.batch, out.c, out.h, out.w, name);
  plan.bias = packed_nchw(1, out.c, 1, 1, name);
  plan.w = {to_int(out.c, name, "filters"), to_int(in.c / p.groups, name, "channels per group"),
            to_int(p.kernel_h, name, "kernel height"), to_int(p.kernel_w, name, "kernel width")};
  plan.pad_h = to_int(p.pad_h, name, "padding");
  plan.pad_w = to_int(p.pad_w, name, "padding");
  plan.stride_h = to_int(p.stride_h, name, "stride");
  plan.stride_w = to_int(p.stride_w, name, "stride");
  plan.dilation_h = to_int(p.dilation_h, name, "dilation");
  plan.dilation_w = to_int(p.dilation_w, name, "dilation");
  plan.groups = to_int(p.groups, name, "groups");
  plan.has_bias = p.bias;
  plan.weight_count = out.c * (in.c / p.groups) * p.kernel_h * p.kernel_w;
  const int64_t window_h = (p.kernel_h - 1) * p.dilation_h + 1, window_w = (p.kernel_w - 1) * p.dilation_w + 1;
  if (floor_output(in.h, window_h, p.stride_h, p.pad_h) != out.h ||
      floor_output(in.w, window_w, p.stride_w, p.pad_w) != out.w)
    throw InputError(fmt::format("layer '{}': output {}×{} needs asymmetric padding, which the CUDA backend "
                                 "(cuDNN) does not support",
                                 name, out.h, out.w));
  return plan;
}

ConvShapeKey conv_shape_key(const ConvPlan& p, bool training) {
  ConvShapeKey key;
  for (const TensorDims& t : {p.x, p.y})
    key.insert(key.end(), {t.n, t.c, t.h, t.w, t.stride_n, t.stride_c, t.stride_h, t.stride_w});
  key.insert(key.end(), {p.w.k, p.w.c, p.w.r, p.w.s, p.pad_h, p.pad_w, p.stride_h, p.stride_w, p.dilation_h,
                         p.dilation_w, p.groups, training ? 1 : 0});
  return key;
}

PoolPlan plan_pool(const LayerDesc& desc) {
  const std::string& name = layer_name(desc);
  const models::Layer& layer = *desc.layer;
  const models::Shape& in = desc.in_shapes[0];
  const models::Shape& out = desc.out_shape;
  models::PoolParams p = layer.pool;
  if (layer.kind == models::LayerKind::kGlobalAvgPool) p = {in.h, in.w, 1, 1, 0, 0, false, true};
  PoolPlan plan;
  plan.x = packed_nchw(desc.batch, in.c, in.h, in.w, name);
  plan.y = packed_nchw(desc.batch, out.c, out.h, out.w, name);
  plan.mode = layer.kind == models::LayerKind::kMaxPool ? PoolMode::kMax
              : p.count_include_pad                     ? PoolMode::kAverageIncludePad
                                                        : PoolMode::kAverageExcludePad;
  plan.window_h = to_int(p.kernel_h, name, "window");
  plan.window_w = to_int(p.kernel_w, name, "window");
  plan.pad_h = to_int(p.pad_h, name, "padding");
  plan.pad_w = to_int(p.pad_w, name, "padding");
  plan.stride_h = to_int(p.stride_h, name, "stride");
  plan.stride_w = to_int(p.stride_w, name, "stride");
  if (floor_output(in.h, p.kernel_h, p.stride_h, p.pad_h) != out.h ||
      floor_output(in.w, p.kernel_w, p.stride_w, p.pad_w) != out.w)
    throw InputError(fmt::format("layer '{}': ceil-mode pooling to {}×{} needs more padding on the right than on "
                                 "the left, which the CUDA backend (cuDNN) does not support",
                                 name, out.h, out.w));
  return plan;
}

BatchNormPlan plan_batchnorm(const LayerDesc& desc) {
  const std::string& name = layer_name(desc);
  const models::Shape& s = desc.in_shapes[0];
  BatchNormPlan plan;
  plan.x = packed_nchw(desc.batch, s.c, s.h, s.w, name);
  plan.param = packed_nchw(1, s.c, 1, 1, name);
  plan.eps = desc.layer->bn_eps;
  plan.momentum = desc.layer->bn_momentum;
  plan.count = desc.batch * s.h * s.w;
  return plan;
}

FcPlan plan_fc(const LayerDesc& desc) {
  const std::string& name = layer_name(desc);
  FcPlan plan;
  plan.batch = to_int(desc.batch, name, "batch");
  plan.in = to_int(desc.in_shapes[0].elements(), name, "input features");
  plan.out = to_int(desc.out_shape.elements(), name, "output features");
  to_int(desc.batch * std::max(desc.in_shapes[0].elements(), desc.out_shape.elements()), name, "matrix elements");
  to_int(desc.in_shapes[0].elements() * desc.out_shape.elements(), name, "weights");
  plan.has_bias = desc.layer->fc.bias;
  const int n = plan.batch, in = plan.in, out = plan.out;
  plan.forward = {true, false, out, n, in, in, in, out};
  plan.backward_input = {false, false, in, n, out, in, out, in};
  plan.backward_weight = {false, true, in, out, n, in, out, in};
  return plan;
}

int64_t workspace_limit_bytes(int64_t requested_bytes, int64_t free_device_bytes) {
  if (requested_bytes > 0) return requested_bytes;
  constexpr int64_t kMiB = int64_t{1} << 20;
  return std::max(16 * kMiB, std::min(1024 * kMiB, free_device_bytes / 8));
}

size_t choose_algorithm(const std::vector<AlgorithmOption>& options, int64_t limit_bytes) {
  size_t smallest = options.size();
  for (size_t i = 0; i < options.size(); ++i) {
    if (!options[i].ok) continue;
    if (options[i].workspace_bytes <= limit_bytes) return i;
    if (smallest == options.size() || options[i].workspace_bytes < options[smallest].workspace_bytes) smallest = i;
  }
  ST_ASSERT(smallest < options.size(), "cuDNN offered no usable algorithm");
  return smallest;
}

HalfScratchLayout half_scratch_layout(int64_t x_elements, int64_t w_elements, int64_t y_elements) {
  ST_ASSERT(x_elements >= 0 && w_elements >= 0 && y_elements >= 0, "negative scratch");
  constexpr int64_t kAlign = 128;  // 2-byte elements per 256 bytes
  const auto up = [](int64_t n) { return (n + kAlign - 1) / kAlign * kAlign; };
  HalfScratchLayout l;
  l.w_offset = up(x_elements);
  l.y_offset = l.w_offset + up(w_elements);
  l.elements = l.y_offset + up(y_elements);
  return l;
}

HalfScratchLayout half_scratch_layout(const ConvPlan& plan) {
  return half_scratch_layout(plan.x.elements(), plan.weight_count, plan.y.elements());
}

HalfScratchLayout half_scratch_layout(const FcPlan& plan) {
  return half_scratch_layout(int64_t{plan.batch} * plan.in, int64_t{plan.out} * plan.in,
                             int64_t{plan.batch} * plan.out);
}

}  // namespace scaletwin::exec::cuda
