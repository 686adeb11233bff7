// The fitted parameters and their bounds (see parameters.hpp).
//
// Bounds: efficiencies may exceed 1 (cuDNN's Winograd and FFT convolutions do fewer FLOPs than the direct
// count the models use), up to 4; the conv knee spans 0.1-10^4 FLOP/byte (1x1 convolutions sit near 25, wide 3x3
// ones near 500); the shared-node slowdown 1e-4 (none) to 4 per co-runner; overheads from 10 ns to 10 ms; link factors from 1/20 to 2 on bandwidth and 0.1-1000 on latency.
#include "calibrate/parameters.hpp"

#include <algorithm>

namespace scaletwin::calibrate {

namespace {

using sim::Calibration;

Parameter device_parameter(const std::string& device, const std::string& key, double lo, double hi,
                           double sim::DeviceEfficiency::*member) {
  return Parameter{"devices/" + device + "/" + key, ParameterKind::kCompute, lo, hi,
                   [device, member](Calibration& c) -> double& { return c.devices[device].*member; }};
}

Parameter link_parameter(sim::LinkClass k, const std::string& key, double lo, double hi,
                         double sim::LinkFactors::*member) {
  return Parameter{std::string("links/") + sim::link_class_name(k) + "/" + key, ParameterKind::kComm, lo, hi,
                   [k, member](Calibration& c) -> double& { return c.links[k].*member; }};
}

}  // namespace

std::vector<Parameter> choose_parameters(const Exercised& what, const std::set<sim::LinkClass>& fixed_links) {
  using sim::DeviceEfficiency;
  std::vector<Parameter> out;
  for (const std::string& d : what.devices) {
    out.push_back(device_parameter(d, "conv", 0.01, 4.0, &DeviceEfficiency::conv));
    out.push_back(device_parameter(d, "conv_knee_flops_per_byte", 0.1, 1e4, &DeviceEfficiency::conv_knee_flops_per_byte));
    out.push_back(device_parameter(d, "matmul", 0.01, 4.0, &DeviceEfficiency::matmul));
    out.push_back(device_parameter(d, "memory", 0.01, 2.0, &DeviceEfficiency::memory));
    out.push_back(device_parameter(d, "op_overhead_s", 1e-8, 1e-2, &DeviceEfficiency::op_overhead_s));
  }
  // Per-model factors where a device ran several models (one model: the class efficiencies say it all).
  for (const std::string& d : what.devices) {
    std::vector<std::string> models;
    for (const auto& [dev, model] : what.device_models)
      if (dev == d) models.push_back(model);
    if (models.size() < 2) continue;
    for (const std::string& m : models)
      out.push_back(Parameter{"devices/" + d + "/model_factors/" + m, ParameterKind::kCompute, 0.1, 10.0,
                              [d, m](Calibration& c) -> double& { return c.devices[d].model_factors[m]; }});
  }
  // Processes sharing a node's cores (they talk through shared memory): the slowdown per other busy worker, where
  // some runs have such co-runners (one-rank runs alone cannot see it). GPUs of a node keep their own memory.
  if (what.link_classes.count(sim::LinkClass::kShm) != 0)
    for (const std::string& d : what.shared_devices)
    {
      out.push_back(device_parameter(d, "shared_node_slowdown", 1e-4, 4.0, &DeviceEfficiency::shared_node_slowdown));
      out.back().start_if_unset = 0.1;
    }
  if (what.real_data)
    out.push_back(Parameter{"input_cost_per_image_s", ParameterKind::kCompute, 1e-8, 1e-2,
                            [](Calibration& c) -> double& { return c.input_cost_per_image_s; }});
  for (sim::LinkClass k : what.link_classes) {
    if (fixed_links.count(k) != 0) continue;
    out.push_back(link_parameter(k, "bandwidth_factor", 0.05, 2.0, &sim::LinkFactors::bandwidth_factor));
  }
  if (what.collectives)
    out.push_back(Parameter{"message_overhead_s", ParameterKind::kComm, 1e-8, 1e-2,
                            [](Calibration& c) -> double& { return c.message_overhead_s; }});
  if (what.parameter_server)
    out.push_back(Parameter{"ps_cost_per_byte_s", ParameterKind::kComm, 1e-13, 1e-8,
                            [](Calibration& c) -> double& { return c.ps_cost_per_byte_s; }});
  return out;
}

void prepare_start(sim::Calibration& c, const Exercised& what, const std::vector<Parameter>& params) {
  for (const std::string& d : what.devices)
    if (c.devices.count(d) == 0) c.devices[d] = c.device(d);
  for (const auto& [d, m] : what.device_models)
    if (c.devices[d].model_factors.count(m) == 0) c.devices[d].model_factors[m] = 1.0;
  for (const Parameter& p : params)
    p.set(c, p.start_if_unset > 0.0 && p.get(c) <= p.lower ? p.start_if_unset : std::clamp(p.get(c), p.lower, p.upper));
}

}  // namespace scaletwin::calibrate
