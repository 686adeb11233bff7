// predict --layers: the per-op costs of one worker's step (see layer_costs.hpp).
#include "sim/layer_costs.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "sim/compute_model.hpp"
#include "sim/stacks.hpp"

namespace scaletwin::sim {

namespace {

std::string unit_of(const plan::ComputeOp& op, plan::Precision precision) {
  if (op.layer_class == models::LayerClass::kMemory || op.flops <= 0.0) return "memory";
  if (cuda_core_op(op)) return op.channels_per_group == 1 ? "depthwise" : "grouped";
  return precision == plan::Precision::kFp32 ? "fp32" : precision == plan::Precision::kTf32 ? "tf32" : "tensor";
}

}  // namespace

std::vector<OpCost> layer_costs(const plan::Scenario& scenario, const Calibration& calibration) {
  const WorkerStep step = worker_step(scenario, calibration);
  const plan::Point& point = step.point;
  const Processor p =
      endpoint_processor(point.plan.endpoints.at(0), point.cluster, scenario_arithmetic(point.scenario));
  const ComputeModel model(step.run, point.scenario.training.data == plan::Data::kReal);
  const DeviceEfficiency& eff = step.run.device(p.name, p.family);
  std::vector<OpCost> out;
  for (const plan::Item& item : point.plan.program(0).items) {
    if (item.kind != plan::Item::Kind::kCompute) continue;
    const plan::ComputeOp& op = item.compute;
    OpCost c;
    if (op.layer >= 0) {
      const models::Layer& L = point.model.layers.at(static_cast<size_t>(op.layer));
      c.layer = L.name;
      c.kind = models::layer_kind_name(L.kind);
    } else {
      c.kind = plan::phase_name(op.phase);
    }
    c.phase = plan::phase_name(op.phase);
    c.unit = unit_of(op, p.precision);
    c.flops = op.flops;
    c.bytes = op.bytes;
    const OpParts parts = model.op_parts(op, p, eff);
    c.math_s = parts.math_s;
    c.memory_s = parts.memory_s;
    c.overhead_s = parts.overhead_s;
    c.total_s = parts.total_s;
    const double peak = cuda_core_op(op) && p.vector_flops > 0.0 ? p.vector_flops : p.peak_flops;
    const bool arithmetic = c.unit != "memory";
    if (c.total_s > 0.0)
      c.efficiency = arithmetic ? op.flops / (c.total_s * peak) : op.bytes / (c.total_s * p.memory_bandwidth_Bps);
    c.bound = c.math_s >= std::max(c.memory_s, c.overhead_s) ? "math"
              : c.memory_s >= c.overhead_s                 ? "memory"
                                                           : "overhead";
    out.push_back(std::move(c));
  }
  return out;
}

Json layer_costs_json(const std::vector<OpCost>& costs) {
  Json ops = Json::array();
  for (const OpCost& c : costs)
    ops.push_back({{"layer", c.layer}, {"kind", c.kind}, {"phase", c.phase}, {"unit", c.unit}, {"flops", c.flops},
                   {"bytes", c.bytes}, {"math_s", c.math_s}, {"memory_s", c.memory_s}, {"overhead_s", c.overhead_s},
                   {"time_s", c.total_s}, {"efficiency", c.efficiency}, {"bound", c.bound}});
  return ops;
}

std::string format_layer_costs(const std::vector<OpCost>& costs) {
  size_t w = 5;
  for (const OpCost& c : costs) w = std::max(w, c.layer.size());
  std::string out = fmt::format("{:<{}}  {:<15}  {:<9}  {:>10}  {:>10}  {:>10}  {:>10}  {:>10}  {:>6}  {}\n", "layer", w,
                                "phase", "unit", "MFLOP", "MB", "math ms", "memory ms", "fixed ms", "eff", "bound");
  double total = 0.0, math = 0.0, memory = 0.0, fixed = 0.0;
  for (const OpCost& c : costs) {
    out += fmt::format("{:<{}}  {:<15}  {:<9}  {:>10.2f}  {:>10.2f}  {:>10.4f}  {:>10.4f}  {:>10.4f}  {:>6.3f}  {}\n",
                       c.layer.empty() ? c.kind : c.layer, w, c.phase, c.unit, c.flops / 1e6, c.bytes / 1e6,
                       c.math_s * 1e3, c.memory_s * 1e3, c.overhead_s * 1e3, c.efficiency, c.bound);
    total += c.total_s, math += c.math_s, memory += c.memory_s, fixed += c.overhead_s;
  }
  out += fmt::format("step: {:.2f} ms ({} ops): arithmetic {:.2f} ms, memory traffic {:.2f} ms, fixed costs {:.2f} ms\n",
                     total * 1e3, costs.size(), math * 1e3, memory * 1e3, fixed * 1e3);
  return out;
}

}  // namespace scaletwin::sim
