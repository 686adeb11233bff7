// The per-layer view of one worker's step (predict --layers): every op of worker 0's program at one GPU, what it
// computes and moves, how long the compute model says it takes, split into its arithmetic, its memory traffic and its
// fixed costs, and which of them bounds it.
#pragma once

#include <string>
#include <vector>

#include "core/json_reader.hpp"
#include "sim/predict.hpp"

namespace scaletwin::sim {

struct OpCost {
  std::string layer;     // the layer's name ("" for the data and update ops)
  std::string kind;      // its type ("conv", "batchnorm", ...; "data", "update")
  std::string phase;     // plan::phase_name
  std::string unit;      // what runs its arithmetic: "tensor", "tf32", "fp32", "depthwise", "grouped", "memory"
  double flops = 0.0;
  double bytes = 0.0;
  double math_s = 0.0;      // flops / (peak · efficiency): 0 for a memory-bound op
  double memory_s = 0.0;    // bytes / (bandwidth · memory efficiency)
  double overhead_s = 0.0;  // the device's per-kernel cost and the framework's dispatch
  double total_s = 0.0;     // as the compute model charges it
  double efficiency = 0.0;  // achieved: flops / (total_s · peak) for arithmetic ops, bytes / (total_s · bandwidth) else
  std::string bound;        // "math", "memory" or "overhead": the largest of the three
};

// The ops of worker 0's step for `scenario` at one GPU, under `calibration` as predict applies it.
std::vector<OpCost> layer_costs(const plan::Scenario& scenario, const Calibration& calibration);
Json layer_costs_json(const std::vector<OpCost>& costs);
std::string format_layer_costs(const std::vector<OpCost>& costs);

}  // namespace scaletwin::sim
