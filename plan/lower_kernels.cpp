// The ops of a layer's kernels as the scenario's software stack runs them (lower_internal.hpp: plan_kernels,
// kernel_op). layer_op gives a layer's FLOPs and the traffic of reading its inputs and writing its output; this adds
// what the kernels really move and launch:
//   - a point-wise layer's backward reads its output's gradient and its own input (or output) and writes its input's
//     gradient: three passes where layer_op counts two; the channel scale's (mul) backward is two kernels of two
//     passes each (dx = dy · s; ds = Σ dy · x);
//   - a residual add's and a flatten's gradient is their output's (frameworks pass it on without a kernel), and a
//     layer whose output several layers read sums their gradients: two reads and a write per extra reader, in its own
//     backward;
//   - layers fused into a batch norm's kernels (Scenario::kernels: ReLU, and a residual add and its ReLU) have no op;
//     the batch norm reads the add's other input besides its own;
//   - on NCHW activations a tensor-core convolution (mixed precision) transposes its input and its output, both ways:
//     two more reads and writes of each, in two more kernels.
#include <algorithm>

#include "plan/lower_internal.hpp"

namespace scaletwin::plan::detail {

namespace {

using models::LayerKind;

bool pointwise(LayerKind k) {
  return k == LayerKind::kRelu || k == LayerKind::kSigmoid || k == LayerKind::kSilu || k == LayerKind::kHardSwish ||
         k == LayerKind::kDropout || k == LayerKind::kDropPath;
}

}  // namespace

KernelPlan plan_kernels(const Kernels& kernels, const models::Model& model) {
  const size_t n = model.layers.size();
  KernelPlan k;
  k.fused.assign(n, false);
  k.fused_in_bytes.assign(n, 0.0);
  k.consumers.assign(n, 0);
  std::vector<int> only_reader(n, -1);
  for (size_t i = 1; i < n; ++i)
    for (int from : model.layers[i].inputs) {
      ++k.consumers[static_cast<size_t>(from)];
      only_reader[static_cast<size_t>(from)] = static_cast<int>(i);
    }
  const auto kind = [&](int i) { return model.layers[static_cast<size_t>(i)].kind; };
  const auto sole_bn_input = [&](int layer, int from) {
    return kind(from) == LayerKind::kBatchNorm && k.consumers[static_cast<size_t>(from)] == 1 &&
           only_reader[static_cast<size_t>(from)] == layer;
  };
  for (size_t i = 1; i < n; ++i) {
    const models::Layer& L = model.layers[i];
    const int me = static_cast<int>(i);
    if (kernels.fuse_bn_relu && L.kind == LayerKind::kRelu && sole_bn_input(me, L.inputs[0])) k.fused[i] = true;
    if (!kernels.fuse_bn_add_relu || L.kind != LayerKind::kAdd || L.inputs.size() != 2 || k.consumers[i] != 1) continue;
    const int relu = only_reader[i];
    if (relu < 0 || kind(relu) != LayerKind::kRelu) continue;
    for (int side = 0; side < 2; ++side) {
      const int bn = L.inputs[static_cast<size_t>(side)], other = L.inputs[static_cast<size_t>(1 - side)];
      if (!sole_bn_input(me, bn)) continue;
      k.fused[i] = k.fused[static_cast<size_t>(relu)] = true;
      k.fused_in_bytes[static_cast<size_t>(bn)] =
          static_cast<double>(model.layers[static_cast<size_t>(other)].activation_bytes);
      break;
    }
  }
  return k;
}

std::optional<ComputeOp> kernel_op(const Lowering& l, int layer, Phase phase, double samples, double fraction) {
  const models::Layer& L = l.model.layers.at(static_cast<size_t>(layer));
  const size_t u = static_cast<size_t>(layer);
  if (l.kernels.fused[u]) return std::nullopt;
  const bool input_gradient = phase == Phase::kBackwardInput;
  if (input_gradient && (L.kind == LayerKind::kAdd || L.kind == LayerKind::kFlatten)) return std::nullopt;
  const int element = l.element_bytes();
  ComputeOp op = layer_op(l.model, layer, phase, samples, fraction, element);
  const double scale = static_cast<double>(element) / 4.0;
  const double out = static_cast<double>(L.activation_bytes) * fraction * samples * scale;
  if (input_gradient && pointwise(L.kind)) op.bytes += out;
  if (input_gradient && L.kind == LayerKind::kMul) op.bytes += 2.0 * out;
  if (L.kind == LayerKind::kBatchNorm && phase != Phase::kBackwardWeight)
    op.bytes += l.kernels.fused_in_bytes[u] * samples * scale;
  if (input_gradient && l.kernels.consumers[u] > 1) op.bytes += 3.0 * (l.kernels.consumers[u] - 1) * out;
  if (L.kind == LayerKind::kConv && l.scenario.kernels.nchw_transposes && element < 4 && op.flops > 0.0) {
    double in = 0.0;
    for (int i : L.inputs) in += static_cast<double>(l.model.layers.at(static_cast<size_t>(i)).activation_bytes);
    op.bytes += 2.0 * (in * samples * scale + out);
    op.kernels = 3;
  }
  return op;
}

}  // namespace scaletwin::plan::detail
