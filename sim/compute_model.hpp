// The compute model: how long one ComputeOp of an IterationPlan takes on a device or a host CPU.
//
//   t = max(flops / (peak_flops * efficiency[layer class](flops / bytes)),
//           bytes / (memory_bandwidth * efficiency.memory)) + op_overhead_s
//
// plus, for the data phase with real data, samples * input_cost_per_image_s, and for server updates,
// bytes * ps_cost_per_byte_s. Reductions inside collectives (RecvReduce) read two operands and write one:
// 3 * bytes / (memory_bandwidth * efficiency.memory); copies move 2 * bytes the same way.
#pragma once

#include <string>

#include "plan/iteration_plan.hpp"
#include "sim/calibration.hpp"
#include "topology/cluster.hpp"

namespace scaletwin::sim {

// What a processor offers to the compute model.
struct Processor {
  std::string name;  // the key into Calibration::devices
  double peak_flops = 0.0;
  double memory_bandwidth_Bps = 0.0;
  bool is_cpu = false;
};

Processor device_processor(const topology::DeviceType& d, bool half_precision);
Processor cpu_processor(const topology::HostCpu& c);

class ComputeModel {
 public:
  ComputeModel(Calibration calibration, bool real_data) : calibration_(std::move(calibration)), real_data_(real_data) {}

  double op_time_s(const plan::ComputeOp& op, const Processor& p) const;
  // Time to reduce `bytes` into a buffer (RecvReduce) on p; `server` adds the parameter-server cost per byte.
  double reduce_time_s(double bytes, const Processor& p, bool server) const;
  double copy_time_s(double bytes, const Processor& p) const;
  const Calibration& calibration() const { return calibration_; }

 private:
  Calibration calibration_;
  bool real_data_;
};

}  // namespace scaletwin::sim
