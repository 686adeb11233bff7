// The device-memory planner (see memory_plan.hpp).
#include "exec/cuda/memory_plan.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"
#include "exec/cuda/layer_plan.hpp"
#include "exec/network_layout.hpp"

namespace scaletwin::exec::cuda {
namespace {

constexpr int64_t kFloat = 4;

std::string gigabytes(int64_t bytes) { return fmt::format("{:.2f} GB", static_cast<double>(bytes) / 1e9); }

}  // namespace

int64_t MemoryEstimate::total_bytes() const {
  return weights_bytes + gradients_bytes + momentum_bytes + state_bytes + activations_bytes +
         activation_gradients_bytes + scratch_bytes + kernels_bytes + workspace_bytes + context_bytes +
         half_scratch_bytes;
}

std::string MemoryEstimate::breakdown() const {
  return fmt::format("weights {}, gradients {}, momentum {}, activations {}, activation gradients {}, scratch {}, "
                     "batch-norm state and kernel buffers {}, cuDNN workspace {}, CUDA context {}{}",
                     gigabytes(weights_bytes), gigabytes(gradients_bytes), gigabytes(momentum_bytes),
                     gigabytes(activations_bytes), gigabytes(activation_gradients_bytes), gigabytes(scratch_bytes),
                     gigabytes(state_bytes + kernels_bytes), gigabytes(workspace_bytes), gigabytes(context_bytes),
                     half_scratch_bytes > 0 ? ", half-precision copies " + gigabytes(half_scratch_bytes) : "");
}

MemoryEstimate estimate_training_memory(const models::Model& model, int64_t batch, int64_t workspace_bytes,
                                        bool half) {
  ST_ASSERT(batch > 0, "memory estimate for a non-positive batch");
  const detail::Layout layout = detail::make_layout(model, {});
  MemoryEstimate e;
  e.weights_bytes = e.gradients_bytes = e.momentum_bytes = layout.param_count * kFloat;
  e.state_bytes = layout.state_count * kFloat;
  int64_t max_elements = model.input.elements();
  size_t max_inputs = 1;
  e.kernels_bytes = batch * kFloat;  // labels
  for (size_t i = 0; i < layout.layers.size(); ++i) {
    const detail::LayerGeometry& g = layout.layers[i];
    const int64_t bytes = batch * g.out_shape.elements() * kFloat;
    e.activations_bytes += bytes;
    if (i > 0) e.activation_gradients_bytes += bytes;
    max_elements = std::max(max_elements, g.out_shape.elements());
    max_inputs = std::max(max_inputs, model.layers[i].inputs.size());
    using models::LayerKind;
    if (model.layers[i].kind == LayerKind::kBatchNorm) e.kernels_bytes += 2 * g.out_shape.c * kFloat;
    if (model.layers[i].kind == LayerKind::kFullyConnected) e.kernels_bytes += batch * kFloat;
    const bool gemm = model.layers[i].kind == LayerKind::kConv || model.layers[i].kind == LayerKind::kFullyConnected;
    if (half && gemm && !g.in_shapes.empty()) {
      const HalfScratchLayout h = half_scratch_layout(batch * g.in_shapes.front().elements(), g.weight_count,
                                                      batch * g.out_shape.elements());
      e.half_scratch_bytes = std::max(e.half_scratch_bytes, h.elements * 2);
    }
  }
  e.scratch_bytes = static_cast<int64_t>(max_inputs) * batch * max_elements * kFloat;
  e.workspace_bytes = workspace_bytes;
  e.context_bytes = kContextAllowanceBytes;
  return e;
}

int64_t max_batch_that_fits(const models::Model& model, int64_t workspace_bytes, int64_t device_bytes, bool half) {
  const auto fits = [&](int64_t b) {
    return estimate_training_memory(model, b, workspace_bytes, half).total_bytes() <= device_bytes;
  };
  if (!fits(1)) return 0;
  int64_t lo = 1, hi = 2;
  while (fits(hi)) {
    lo = hi;
    hi *= 2;
  }
  while (hi - lo > 1) {  // fits(lo), !fits(hi)
    const int64_t mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

void check_fits(const models::Model& model, int64_t batch, int64_t workspace_bytes, int64_t device_bytes,
                const std::string& device_name, bool half) {
  const MemoryEstimate e = estimate_training_memory(model, batch, workspace_bytes, half);
  if (e.total_bytes() <= device_bytes) return;
  const int64_t best = max_batch_that_fits(model, workspace_bytes, device_bytes, half);
  throw InputError(fmt::format("model '{}' at batch {} per GPU needs about {} of device memory ({}), but {} has {}: "
                               "{}",
                               model.name, batch, gigabytes(e.total_bytes()), e.breakdown(), device_name,
                               gigabytes(device_bytes),
                               best > 0 ? fmt::format("use a batch of at most {}", best)
                                        : std::string("the model does not fit even at batch 1")));
}

}  // namespace scaletwin::exec::cuda
