// Shape inference and per-sample costs of one layer (see the cost conventions in builder.hpp).
//
// Every check that can fail on user input throws InputError(origin, "/layers/<i-1>", expectation), the
// expectation naming the layer and the numbers involved, so that a bad model file points at the faulty layer.
#include <fmt/format.h>

#include <initializer_list>
#include <string>
#include <utility>

#include "core/error.hpp"
#include "models/builder.hpp"

namespace scaletwin::models {

namespace {

struct LayerContext {
  const Model& model;
  const Layer& layer;
  int index;
  const std::string& origin;

  [[noreturn]] void fail(const std::string& expected) const {
    throw InputError(origin, layer_json_path(index),
                     fmt::format("{} layer \"{}\": {}", layer_kind_name(layer.kind), layer.name, expected));
  }
  const Shape& in(size_t i = 0) const { return model.layers[static_cast<size_t>(layer.inputs[i])].out; }
};

std::string shape_text(const Shape& s) { return fmt::format("{}×{}×{}", s.c, s.h, s.w); }

void check_positive(const LayerContext& ctx, int64_t value, const char* what) {
  if (value < 1) ctx.fail(fmt::format("{} >= 1 (got {})", what, value));
}

// Hostile sizes: a conv with 1e9 channels must be an input error, not a parameter count that wraps around. Every
// count a layer produces (output elements per sample, parameters) stays below kMaxCount (2^36: 256 GiB of fp32),
// window parameters (kernel, stride, padding, dilation) below kMaxWindow, so that no product here overflows.
constexpr int64_t kMaxCount = int64_t{1} << 36;
constexpr int64_t kMaxWindow = int64_t{1} << 20;

void check_window(const LayerContext& ctx, int64_t value, const char* what) {
  if (value > kMaxWindow) ctx.fail(fmt::format("{} at most {} (got {})", what, kMaxWindow, value));
}

// The product of non-negative factors, or an error when it exceeds kMaxCount.
int64_t checked_product(const LayerContext& ctx, std::initializer_list<int64_t> factors, const char* what) {
  int64_t out = 1;
  for (int64_t f : factors)
    if (__builtin_mul_overflow(out, f, &out) || out > kMaxCount)
      ctx.fail(fmt::format("{} of at most {} (2^36)", what, kMaxCount));
  return out;
}

void check_shape(const LayerContext& ctx, const Shape& s) {
  (void)checked_product(ctx, {s.c, s.h, s.w}, "an output size per sample");
}

void check_input_count(const LayerContext& ctx) {
  const size_t n = ctx.layer.inputs.size();
  const LayerKind k = ctx.layer.kind;
  if (k == LayerKind::kAdd || k == LayerKind::kConcat) {
    if (n < 2) ctx.fail(fmt::format("at least 2 inputs (got {})", n));
  } else if (k == LayerKind::kMul) {
    if (n != 2) ctx.fail(fmt::format("exactly 2 inputs, the tensor and its scale (got {})", n));
  } else if (n != 1) {
    ctx.fail(fmt::format("exactly 1 input (got {})", n));
  }
  for (int from : ctx.layer.inputs)
    if (from < 0 || from >= ctx.index)
      ctx.fail(fmt::format("inputs that are earlier layers (index 0..{}, got {})", ctx.index - 1, from));
}

// Output size of a convolution or pooling window along one axis.
int64_t window_out(const LayerContext& ctx, const char* axis, int64_t size, int64_t kernel, int64_t stride,
                   int64_t pad, int64_t dilation, bool ceil_mode) {
  const int64_t effective = dilation * (kernel - 1) + 1;
  const int64_t padded = size + 2 * pad;
  if (effective > padded)
    ctx.fail(fmt::format("a kernel {} ({} effective) no larger than the padded input {} ({} + 2·{})", axis,
                         effective, padded, size, pad));
  int64_t out = (padded - effective) / stride + 1;
  if (ceil_mode) {
    out = (padded - effective + stride - 1) / stride + 1;
    // As PyTorch: the last window must start inside the input or the left padding.
    if ((out - 1) * stride >= size + pad) --out;
  }
  return out;
}

void infer_conv(const LayerContext& ctx, Layer& l) {
  const ConvParams& p = l.conv;
  const Shape& in = ctx.in();
  check_positive(ctx, p.out_channels, "out_channels");
  check_positive(ctx, p.kernel_h, "kernel height");
  check_positive(ctx, p.kernel_w, "kernel width");
  check_positive(ctx, p.stride_h, "stride height");
  check_positive(ctx, p.stride_w, "stride width");
  check_positive(ctx, p.dilation_h, "dilation height");
  check_positive(ctx, p.dilation_w, "dilation width");
  check_positive(ctx, p.groups, "groups");
  if (p.pad_h < 0 || p.pad_w < 0) ctx.fail(fmt::format("padding >= 0 (got {}×{})", p.pad_h, p.pad_w));
  const std::pair<int64_t, const char*> limits[] = {
      {p.kernel_h, "kernel height"},     {p.kernel_w, "kernel width"},     {p.stride_h, "stride height"},
      {p.stride_w, "stride width"},      {p.dilation_h, "dilation height"}, {p.dilation_w, "dilation width"},
      {p.pad_h, "padding height"},       {p.pad_w, "padding width"}};
  for (const auto& [v, what] : limits) check_window(ctx, v, what);
  if (in.c % p.groups != 0 || p.out_channels % p.groups != 0)
    ctx.fail(fmt::format("groups ({}) dividing both the input channels ({}) and out_channels ({})", p.groups, in.c,
                         p.out_channels));
  l.out.c = p.out_channels;
  l.out.h = window_out(ctx, "height", in.h, p.kernel_h, p.stride_h, p.pad_h, p.dilation_h, false);
  l.out.w = window_out(ctx, "width", in.w, p.kernel_w, p.stride_w, p.pad_w, p.dilation_w, false);
  check_shape(ctx, l.out);
  const int64_t weights = checked_product(ctx, {p.out_channels, in.c / p.groups, p.kernel_h, p.kernel_w}, "weights");
  l.params = weights + (p.bias ? p.out_channels : 0);
  const double macs = static_cast<double>(weights) * static_cast<double>(l.out.h * l.out.w);
  const double bias_flops = p.bias ? static_cast<double>(l.out.elements()) : 0.0;
  l.fwd_flops = 2.0 * macs + bias_flops;
  l.bwd_input_flops = 2.0 * macs;
  l.bwd_weight_flops = 2.0 * macs + bias_flops;
}

void infer_pool(const LayerContext& ctx, Layer& l) {
  const PoolParams& p = l.pool;
  const Shape& in = ctx.in();
  check_positive(ctx, p.kernel_h, "kernel height");
  check_positive(ctx, p.kernel_w, "kernel width");
  check_positive(ctx, p.stride_h, "stride height");
  check_positive(ctx, p.stride_w, "stride width");
  const std::pair<int64_t, const char*> limits[] = {{p.kernel_h, "kernel height"}, {p.kernel_w, "kernel width"},
                                                    {p.stride_h, "stride height"}, {p.stride_w, "stride width"},
                                                    {p.pad_h, "padding height"},   {p.pad_w, "padding width"}};
  for (const auto& [v, what] : limits) check_window(ctx, v, what);
  if (p.pad_h < 0 || p.pad_w < 0 || 2 * p.pad_h > p.kernel_h || 2 * p.pad_w > p.kernel_w)
    ctx.fail(fmt::format("padding between 0 and half the kernel (got {}×{} for a {}×{} kernel)", p.pad_h, p.pad_w,
                         p.kernel_h, p.kernel_w));
  l.out.c = in.c;
  l.out.h = window_out(ctx, "height", in.h, p.kernel_h, p.stride_h, p.pad_h, 1, p.ceil_mode);
  l.out.w = window_out(ctx, "width", in.w, p.kernel_w, p.stride_w, p.pad_w, 1, p.ceil_mode);
  check_shape(ctx, l.out);
  const double e = static_cast<double>(l.out.elements());
  const double window = static_cast<double>(p.kernel_h * p.kernel_w);
  l.fwd_flops = window * e;
  l.bwd_input_flops = l.kind == LayerKind::kMaxPool ? e : window * e;
}

void infer_fc(const LayerContext& ctx, Layer& l) {
  check_positive(ctx, l.fc.out_features, "out_features");
  const int64_t in = ctx.in().elements();
  l.out = Shape{l.fc.out_features, 1, 1};
  check_shape(ctx, l.out);
  l.params = checked_product(ctx, {in, l.fc.out_features}, "weights") + (l.fc.bias ? l.fc.out_features : 0);
  const double macs = static_cast<double>(in) * static_cast<double>(l.fc.out_features);
  const double bias_flops = l.fc.bias ? static_cast<double>(l.fc.out_features) : 0.0;
  l.fwd_flops = 2.0 * macs + bias_flops;
  l.bwd_input_flops = 2.0 * macs;
  l.bwd_weight_flops = 2.0 * macs + bias_flops;
}

void infer_add(const LayerContext& ctx, Layer& l) {
  l.out = ctx.in(0);
  for (size_t i = 1; i < l.inputs.size(); ++i)
    if (!(ctx.in(i) == l.out))
      ctx.fail(fmt::format("inputs of the same shape (\"{}\" is {}, \"{}\" is {})",
                           ctx.model.layers[static_cast<size_t>(l.inputs[0])].name, shape_text(l.out),
                           ctx.model.layers[static_cast<size_t>(l.inputs[i])].name, shape_text(ctx.in(i))));
  l.fwd_flops = static_cast<double>(l.inputs.size() - 1) * static_cast<double>(l.out.elements());
}

// y = x · s with s of x's shape, or C×1×1 (one scale per channel, broadcast over the positions: the excitation of
// squeeze-and-excitation). Backward: dx = dy · s (e), and ds = dy · x (e) summed over the positions where s is
// broadcast (e more).
void infer_mul(const LayerContext& ctx, Layer& l) {
  l.out = ctx.in(0);
  const Shape& s = ctx.in(1);
  const bool same = s == l.out;
  if (!same && !(s.c == l.out.c && s.h == 1 && s.w == 1))
    ctx.fail(fmt::format("a second input of the first's shape or {}×1×1, one scale per channel (\"{}\" is {}, \"{}\" "
                         "is {})",
                         l.out.c, ctx.model.layers[static_cast<size_t>(l.inputs[0])].name, shape_text(l.out),
                         ctx.model.layers[static_cast<size_t>(l.inputs[1])].name, shape_text(s)));
  const double e = static_cast<double>(l.out.elements());
  l.fwd_flops = e;
  l.bwd_input_flops = same ? 2.0 * e : 3.0 * e;
}

void infer_concat(const LayerContext& ctx, Layer& l) {
  l.out = Shape{0, ctx.in(0).h, ctx.in(0).w};
  for (size_t i = 0; i < l.inputs.size(); ++i) {
    const Shape& s = ctx.in(i);
    if (s.h != l.out.h || s.w != l.out.w)
      ctx.fail(fmt::format("inputs of the same height and width (\"{}\" is {}, \"{}\" is {})",
                           ctx.model.layers[static_cast<size_t>(l.inputs[0])].name, shape_text(ctx.in(0)),
                           ctx.model.layers[static_cast<size_t>(l.inputs[i])].name, shape_text(s)));
    l.out.c += s.c;
  }
  check_shape(ctx, l.out);
}

// Layers whose output has the shape of their input, with per-element costs.
void infer_elementwise(const LayerContext& ctx, Layer& l) {
  l.out = ctx.in();
  const double e = static_cast<double>(l.out.elements());
  switch (l.kind) {
    case LayerKind::kBatchNorm:
      if (!(l.bn_eps > 0.0)) ctx.fail(fmt::format("eps > 0 (got {})", l.bn_eps));
      if (!(l.bn_momentum >= 0.0 && l.bn_momentum <= 1.0))
        ctx.fail(fmt::format("momentum in [0, 1] (got {})", l.bn_momentum));
      l.params = 2 * l.out.c;
      l.fwd_flops = 8.0 * e;
      l.bwd_input_flops = 6.0 * e;
      l.bwd_weight_flops = 3.0 * e;
      break;
    case LayerKind::kDropout:
    case LayerKind::kDropPath:
      if (!(l.dropout_rate >= 0.0 && l.dropout_rate < 1.0))
        ctx.fail(fmt::format("rate in [0, 1) (got {})", l.dropout_rate));
      [[fallthrough]];
    case LayerKind::kRelu:
      l.fwd_flops = e;
      l.bwd_input_flops = e;
      break;
    case LayerKind::kSigmoid:  // exp, add, divide, (negate); backward dy · y · (1 − y)
      l.fwd_flops = 4.0 * e;
      l.bwd_input_flops = 3.0 * e;
      break;
    case LayerKind::kSilu:  // sigmoid and a multiply; backward dy · s · (1 + x · (1 − s)), s recomputed
      l.fwd_flops = 5.0 * e;
      l.bwd_input_flops = 9.0 * e;
      break;
    case LayerKind::kHardSwish:  // add, clamp, multiply, divide; backward a piecewise-linear slope times dy
      l.fwd_flops = 4.0 * e;
      l.bwd_input_flops = 3.0 * e;
      break;
    case LayerKind::kSoftmaxCrossEntropy:
      if (l.out.elements() != ctx.model.classes)
        ctx.fail(fmt::format("an input of `classes` = {} elements (got {}: {})", ctx.model.classes,
                             l.out.elements(), shape_text(l.out)));
      l.fwd_flops = 5.0 * e;
      l.bwd_input_flops = e;
      break;
    default: ST_ASSERT(false, "not an element-wise layer");
  }
}

void infer_costs_by_kind(const LayerContext& ctx, Layer& l) {
  switch (l.kind) {
    case LayerKind::kInput: ctx.fail("no input layer other than the first (it is implicit in a model file)");
    case LayerKind::kConv: infer_conv(ctx, l); break;
    case LayerKind::kMaxPool:
    case LayerKind::kAvgPool: infer_pool(ctx, l); break;
    case LayerKind::kGlobalAvgPool:
      l.out = Shape{ctx.in().c, 1, 1};
      l.fwd_flops = static_cast<double>(ctx.in().elements());
      l.bwd_input_flops = l.fwd_flops;
      break;
    case LayerKind::kFullyConnected: infer_fc(ctx, l); break;
    case LayerKind::kAdd: infer_add(ctx, l); break;
    case LayerKind::kConcat: infer_concat(ctx, l); break;
    case LayerKind::kFlatten: l.out = Shape{ctx.in().elements(), 1, 1}; break;
    case LayerKind::kMul: infer_mul(ctx, l); break;
    case LayerKind::kBatchNorm:
    case LayerKind::kRelu:
    case LayerKind::kDropout:
    case LayerKind::kSoftmaxCrossEntropy:
    case LayerKind::kSigmoid:
    case LayerKind::kSilu:
    case LayerKind::kHardSwish:
    case LayerKind::kDropPath: infer_elementwise(ctx, l); break;
  }
}

void infer_input(const Model& model, Layer& l, const std::string& origin) {
  const Shape& s = model.input;
  if (s.c < 1 || s.h < 1 || s.w < 1)
    throw InputError(origin, "/input", fmt::format("a positive [C, H, W] (got [{}, {}, {}])", s.c, s.h, s.w));
  if (s.h > kMaxCount / s.c || s.w > kMaxCount / (s.c * s.h))  // s.c * s.h * s.w > kMaxCount, without overflow
    throw InputError(origin, "/input",
                     fmt::format("an input of at most {} (2^36) elements per sample (got [{}, {}, {}])", kMaxCount,
                                 s.c, s.h, s.w));
  if (model.classes < 1) throw InputError(origin, "/classes", fmt::format("an integer >= 1 (got {})", model.classes));
  if (!l.inputs.empty()) throw InputError(origin, "/input", "an input layer without inputs");
  l.out = s;
}

}  // namespace

std::string layer_json_path(int index) { return index == 0 ? "/input" : fmt::format("/layers/{}", index - 1); }

void infer_layer(Model& model, int index, const std::string& origin) {
  ST_ASSERT(index >= 0 && index < static_cast<int>(model.layers.size()), "layer index out of range");
  Layer& l = model.layers[static_cast<size_t>(index)];
  l.out = Shape{};
  l.params = 0;
  l.fwd_flops = l.bwd_input_flops = l.bwd_weight_flops = 0.0;
  if (index == 0) {
    if (l.kind != LayerKind::kInput)
      throw InputError(origin, "/layers", "the first layer of a Model to be the input layer");
    infer_input(model, l, origin);
  } else {
    const LayerContext ctx{model, l, index, origin};
    if (l.name.empty()) ctx.fail("a non-empty name");
    check_input_count(ctx);
    infer_costs_by_kind(ctx, l);
    if (l.out.c < 1 || l.out.h < 1 || l.out.w < 1)
      ctx.fail(fmt::format("a non-empty output (got {})", shape_text(l.out)));
    bool only_data = true;
    for (int from : l.inputs) only_data = only_data && from == 0;
    if (only_data) l.bwd_input_flops = 0.0;
  }
  l.activation_bytes = 4 * l.out.elements();
  l.weight_bytes = 4 * l.params;
}

}  // namespace scaletwin::models
