// The training-memory lower bound (see memory_fit.hpp).
#include "sim/memory_fit.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "sim/compute_model.hpp"
#include "sim/stacks.hpp"

namespace scaletwin::sim {

MemoryBound training_memory_bound(const models::Model& model, const plan::Scenario& scenario,
                                  int activation_element_bytes) {
  const bool mixed = activation_element_bytes < 4;
  const bool hybrid = scenario.scheme.kind == plan::SchemeKind::kHybrid;
  MemoryBound b;
  for (const models::Layer& l : model.layers) {
    const models::LayerClass c = l.layer_class();
    if (c == models::LayerClass::kMemory) continue;
    // fp32 weights, fp32 gradients, one fp32 optimizer state; the half copy under mixed precision.
    if (!(hybrid && c == models::LayerClass::kMatmul))
      b.weight_state_bytes += static_cast<double>(l.params) * (12.0 + (mixed ? 2.0 : 0.0));
    b.activation_bytes += static_cast<double>(l.activation_bytes) / 4.0 * activation_element_bytes;
  }
  b.activation_bytes *= static_cast<double>(scenario.batch_per_gpu);
  return b;
}

void check_memory_fit(const plan::Scenario& scenario, const models::Model& model, const topology::NodeSpec& node) {
  if (node.device_prefix != "gpu" || node.device.memory_bytes <= 0.0) return;
  const Arithmetic a = scenario_arithmetic(scenario);
  const int element_bytes = a.precision == plan::Precision::kFp16 || a.precision == plan::Precision::kBf16 ? 2 : 4;
  const MemoryBound b = training_memory_bound(model, scenario, element_bytes);
  if (b.total_bytes() <= node.device.memory_bytes) return;
  // The largest batch the bound leaves room for.
  const double per_sample = b.activation_bytes / static_cast<double>(scenario.batch_per_gpu);
  const double room = node.device.memory_bytes - b.weight_state_bytes;
  const long long largest = room > 0.0 && per_sample > 0.0 ? static_cast<long long>(room / per_sample) : 0;
  throw InputError(
      scenario.file, scenario.path_of("/batch_per_gpu"),
      fmt::format("a batch per GPU that fits in the {:.0f} GB of a {}: {} at batch {} in {} needs at least {:.1f} GB "
                  "(weights, gradients and optimizer state {:.2f} GB; the convolutions' and fully connected layers' "
                  "outputs kept for the backward pass {:.1f} GB), so at most batch {} (a lower bound: "
                  "sim/memory_fit.hpp)",
                  node.device.memory_bytes / 1e9, node.device.name, model.name, scenario.batch_per_gpu,
                  plan::precision_name(a.precision), b.total_bytes() / 1e9, b.weight_state_bytes / 1e9,
                  b.activation_bytes / 1e9, largest));
}

}  // namespace scaletwin::sim
