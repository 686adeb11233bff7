// The fitted parameters and their bounds (see parameters.hpp).
//
// Bounds: efficiencies may exceed 1 (cuDNN's Winograd and FFT convolutions do fewer FLOPs than the direct
// count the models use), up to 4 — where a device runs 3x3 stride-1 convolutions, those get their own efficiency
// (up to 2.25, Winograd's F(2x2, 3x3)) and the others at most 1; matmul (cuBLAS GEMMs) and memory at most 1;
// the conv knee spans 0.1-10^4 FLOP/byte (1x1 convolutions sit near 25, wide 3x3
// ones near 500); the shared-node slowdown 1e-4 (none) to 4 per co-runner; overheads from 10 ns to 10 ms; link factors from 1/20 to 2 on bandwidth and 0.1-1000 on latency.
#include "calibrate/parameters.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

#include "core/error.hpp"
#include "sim/stacks.hpp"

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
  Parameter p{std::string("links/") + sim::link_class_name(k) + "/" + key, ParameterKind::kComm, lo, hi,
              [k, member](Calibration& c) -> double& { return c.links[k].*member; }};
  if (k == sim::LinkClass::kNetwork) p.reach = Parameter::Reach::kMultiNode;
  return p;
}

// The fitted costs of each stack that ran (stacks/*.json says which are fitted, and their bounds), and the fixed
// ones --fit names, where its runs exercise them.
void add_stack_parameters(const Exercised& what, const ParameterChoice& choice, std::vector<Parameter>& out) {
  for (const auto& [name, use] : what.stacks) {
    for (const sim::StackParameter& sp : sim::find_stack(name).parameters) {
      const std::string full = "stacks/" + name + "/" + sp.key;
      const bool asked = !sp.fit && parameter_named(full, choice.fit);
      if (!sp.fit && !asked) continue;
      if (asked && (!sp.value || sp.lower <= 0.0))
        throw InputError("", "--fit",
                         fmt::format("a stack cost with a value of its own and a lower bound above 0 ({} has {}, "
                                     "stacks/{}.json)", full, sp.value ? "a lower bound of 0" : "none of its own: the "
                                     "calibration's top-level value is used", name));
      const bool exercised = sp.key == "op_overhead_s" || (sp.key == "message_overhead_s" && use.collectives) ||
                             (sp.key == "network_Bps" && use.network) ||
                             (sp.key == "server_update_s_per_byte" && use.parameter_server) ||
                             (sp.key == "input_cost_per_image_s" && use.real_data);
      if (!exercised) continue;
      const std::string stack = name, key = sp.key;
      out.push_back(Parameter{full,
                              key == "op_overhead_s" || key == "input_cost_per_image_s" ? ParameterKind::kCompute
                                                                                        : ParameterKind::kComm,
                              sp.lower,
                              sp.upper, [stack, key](Calibration& c) -> double& {
                                std::optional<double>& v = sim::stack_field(c.stacks[stack], key);
                                if (!v) v = 0.0;
                                return *v;
                              }});
      out.back().start_if_unset = *sp.value;
      out.back().stack = stack;
      if (key == "network_Bps") out.back().reach = Parameter::Reach::kMultiNode;
    }
  }
}

// The upper bound of a device's parallel_half_elements: 2.6x10^5 outputs on a K80 (its 26,624 resident threads,
// one to ten outputs each), scaled for a wider GPU by its FP32 peak against the K80's 4.37 TFLOP/s, which stands
// for its resident threads (an H100's 67 TFLOP/s is 15x a K80's, its 270,336 threads 10x). Host CPUs keep it.
double parallel_half_most(const Exercised& what, const std::string& device) {
  constexpr double kK80Most = 2.6e5;
  constexpr double kK80PeakFlops = 4.37e12;
  const auto peak = what.gpu_peak_flops.find(device);
  return peak == what.gpu_peak_flops.end() ? kK80Most : kK80Most * std::max(1.0, peak->second / kK80PeakFlops);
}

}  // namespace

bool parameter_named(const std::string& parameter, const std::vector<std::string>& names) {
  return std::any_of(names.begin(), names.end(),
                     [&](const std::string& f) { return parameter == f || parameter.ends_with("/" + f); });
}

namespace {

// The parameters of device entry `d` that the runs exercise.
void add_device_parameters(const Exercised& what, const std::string& d, std::vector<Parameter>& out) {
  using sim::DeviceEfficiency;
  // Physical bounds (the fit runs to them when the data leave it free, rather than to an unphysical corner):
  // a direct or GEMM convolution reaches at most the peak; Winograd's F(2x2, 3x3) does 2.25x fewer
  // multiplications than the direct count, in GEMMs no faster than the direct one's (a gain of 1 to 2.25 over
  // conv); memory traffic moves at most at the memory's bandwidth; a GPU is half full at between 10^3 and
  // 2.6x10^5 independent outputs on a K80 (26,624 resident threads, each computing a tile of one to ten
  // outputs), and a wider GPU holds proportionally more (parallel_half_most).
  // The efficiencies of the units the runs used (Exercised::device_units; devices noted before units were, in
  // tests, used FP32): CUDA-core convolutions (conv), tensor cores at TF32 and at fp16/bf16, depthwise and grouped
  // convolutions on the CUDA cores, each at most the unit's peak.
  const auto units = what.device_units.find(d);
  const auto used = [&](const char* unit) {
    return units == what.device_units.end() ? std::string(unit) == "fp32" : units->second.count(unit) != 0;
  };
  if (used("fp32"))
    out.push_back(device_parameter(d, "conv", 0.01, what.winograd_devices.count(d) != 0 ? 1.0 : 4.0,
                                   &DeviceEfficiency::conv));
  for (const auto& [unit, key, member, lo, start] :
       {std::tuple{"tensor", "conv_tensor", &DeviceEfficiency::conv_tensor, 0.01, 0.5},
        std::tuple{"tf32", "conv_tf32", &DeviceEfficiency::conv_tf32, 0.01, 0.5},
        std::tuple{"depthwise", "depthwise", &DeviceEfficiency::depthwise, 1e-3, 0.05},
        std::tuple{"grouped", "grouped", &DeviceEfficiency::grouped, 1e-3, 0.2}}) {
    if (!used(unit)) continue;
    out.push_back(device_parameter(d, key, lo, 1.0, member));
    out.back().start_if_unset = start;
  }
  out.push_back(device_parameter(d, "conv_knee_flops_per_byte", 0.1, 1e4, &DeviceEfficiency::conv_knee_flops_per_byte));
  if (what.winograd_devices.count(d) != 0) {
    out.push_back(device_parameter(d, "winograd_gain", 1.0, 2.25, &DeviceEfficiency::winograd_gain));
    out.back().start_if_unset = 1.5;
  }
  out.push_back(device_parameter(d, "matmul", 0.01, 1.0, &DeviceEfficiency::matmul));
  out.push_back(device_parameter(d, "memory", 0.01, 1.0, &DeviceEfficiency::memory));
  if (what.l2_devices.count(d) != 0) {
    // The L2's bandwidth over DRAM's is 2-4 on these GPUs (NVIDIA's architecture whitepapers): a gain of at most 3.
    out.push_back(device_parameter(d, "l2_gain", 0.01, 3.0, &DeviceEfficiency::l2_gain));
    out.back().start_if_unset = 1.0;
  }
  // The device's own cost per op (one layer in one phase): its kernels' launches and the GPU's drain between
  // dependent kernels (cuDNN's Winograd runs input, filter and output transforms around a batched GEMM; batch
  // norm a statistics kernel, then the normalisation), added to every op, as a framework's dispatch
  // (stacks/*.json) is: the runs of a stack whose dispatch is fixed (MXNet's) tell the device's apart.
  out.push_back(device_parameter(d, "op_overhead_s", 1e-8, 1e-2, &DeviceEfficiency::op_overhead_s));
  // The coefficient of variation of a worker's compute time, where no run measured it: synchronous workers
  // wait for the slowest (sim/jitter.hpp), which runs of 1, 2, 4, 8 workers tell apart (E[max] 0, 0.56, 1.03,
  // 1.42 sigma). Applied after the simulation, so linearised like the communication parameters.
  if (what.synchronous_devices.count(d) != 0 && what.measured_jitter_devices.count(d) == 0) {
    out.push_back(Parameter{"devices/" + d + "/compute_jitter", ParameterKind::kComm, 1e-3, 0.5,
                            [d](Calibration& c) -> double& { return c.devices[d].compute_jitter; }});
    out.back().start_if_unset = 0.03;
    out.back().reach = Parameter::Reach::kMultiWorker;
  }
  const auto batches = what.device_batches.find(d);
  if (batches != what.device_batches.end() && batches->second.size() >= 2) {
    out.push_back(device_parameter(d, "parallel_half_elements", 1e3, parallel_half_most(what, d),
                                   &DeviceEfficiency::parallel_half_elements));
    out.back().start_if_unset = 1e4;
    // A GEMM tile's fixed work against its loop over the reduction: half the efficiency at a reduction of 4 to
    // 1,024 multiply-adds per output (the K80's, derived from its SGEMM tile, is 16: sim/calibration.cpp).
    out.push_back(device_parameter(d, "reduction_half_length", 4.0, 1024.0, &DeviceEfficiency::reduction_half_length));
    out.back().start_if_unset = 64.0;
  }
}

}  // namespace

std::vector<Parameter> choose_parameters(const Exercised& what, const ParameterChoice& choice) {
  using sim::DeviceEfficiency;
  std::vector<Parameter> out;
  for (const std::string& d : what.devices) add_device_parameters(what, d, out);
  // Per-model factors, only when asked for (a user who measured that model): they leave any other model
  // unpredictable, so the shape-aware efficiencies above are the default.
  for (const std::string& d : what.devices) {
    std::vector<std::string> models;
    for (const auto& [dev, model] : what.device_models)
      if (dev == d) models.push_back(model);
    if (!choice.model_factors || models.size() < (choice.only_model_factors ? 1u : 2u)) continue;
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
  if (what.real_data) {
    out.push_back(Parameter{"input_cost_per_image_s", ParameterKind::kCompute, 1e-8, 1e-2,
                            [](Calibration& c) -> double& { return c.input_cost_per_image_s; }});
    out.back().start_if_unset = 1e-5;  // the default is 0 (a host pipeline that keeps up)
  }
  for (sim::LinkClass k : what.link_classes) {
    if (choice.fixed_links.count(k) != 0) continue;
    out.push_back(link_parameter(k, "bandwidth_factor", 0.05, 2.0, &sim::LinkFactors::bandwidth_factor));
  }
  if (what.collectives)
    out.push_back(Parameter{"message_overhead_s", ParameterKind::kComm, 1e-8, 1e-2,
                            [](Calibration& c) -> double& { return c.message_overhead_s; }});
  if (what.parameter_server)
    out.push_back(Parameter{"ps_cost_per_byte_s", ParameterKind::kComm, 1e-13, 1e-8,
                            [](Calibration& c) -> double& { return c.ps_cost_per_byte_s; }});
  add_stack_parameters(what, choice, out);
  return out;
}

void prepare_start(sim::Calibration& c, const Exercised& what, const std::vector<Parameter>& params) {
  for (const std::string& d : what.devices)
    if (c.devices.count(d) == 0) c.devices[d] = c.device(d);
  for (const auto& [d, m] : what.device_models) {
    const std::string name = "devices/" + d + "/model_factors/" + m;
    const bool fitted = std::any_of(params.begin(), params.end(), [&](const Parameter& p) { return p.name == name; });
    if (fitted && c.devices[d].model_factors.count(m) == 0) c.devices[d].model_factors[m] = 1.0;
  }
  for (const Parameter& p : params)
    p.set(c, p.start_if_unset > 0.0 && p.get(c) <= p.lower ? p.start_if_unset : std::clamp(p.get(c), p.lower, p.upper));
}

}  // namespace scaletwin::calibrate
