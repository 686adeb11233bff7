// The fitted parameters: which fields of a sim::Calibration `calibrate` moves, their bounds, and their names.
//
// Names are JSON paths into the calibration file ("devices/Tesla K80 (one GK210)/conv",
// "links/pcie/bandwidth_factor", "ps_cost_per_byte_s"), so a report line points at the value it explains. Every
// parameter is positive and fitted in log space (relative steps, scale-free across 1e-10 s/B and 0.4).
//
// Compute parameters change only the workers' compute ops (an analytic sum, see surrogate.hpp); communication
// parameters change what the simulator does between them (link factors, per-message overhead, the parameter
// server's cost) and are linearised from simulations.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sim/calibration.hpp"

namespace scaletwin::calibrate {

enum class ParameterKind { kCompute, kComm };

struct Parameter {
  std::string name;
  ParameterKind kind = ParameterKind::kCompute;
  double lower = 0.0;  // natural units, > 0
  double upper = 0.0;
  std::function<double&(sim::Calibration&)> field;
  // Where a fit starts when the calibration has the value at or below `lower` (a parameter whose default is
  // 0, "no such effect": in log space a fit could not leave the lower bound, the objective is flat there).
  double start_if_unset = 0.0;
  // Which runs a communication parameter can move: the fit linearises it only on those (the others' slope is 0
  // exactly). Any run that communicates; only runs spanning nodes (the network's costs); only runs of 2 or more
  // workers (the compute jitter's wait). `stack` non-empty: only runs of that software stack (for_run applies only
  // the run's stack costs).
  enum class Reach { kCommunicating, kMultiNode, kMultiWorker };
  Reach reach = Reach::kCommunicating;
  std::string stack = {};

  double get(const sim::Calibration& c) const { return field(const_cast<sim::Calibration&>(c)); }
  void set(sim::Calibration& c, double v) const { field(c) = v; }
};

// What the measured runs exercise, which decides the free parameters.
struct Exercised {
  std::set<std::string> devices;            // device type names (Calibration::devices keys)
  std::set<std::pair<std::string, std::string>> device_models;  // (device, Model::name) pairs that ran
  std::set<sim::LinkClass> link_classes;    // classes on the routes of some collective
  std::set<std::string> shared_devices;     // devices that ran with other workers computing on their node
  bool real_data = false;         // real-data runs on a stack without its own input cost (the top-level one applies)
  bool parameter_server = false;  // PS runs on a stack without its own server cost (the top-level one applies)
  bool collectives = false;       // collectives on a stack without its own message overhead
  // Per software stack (sim/stacks.hpp) that ran: what its runs exercise of its own costs.
  struct StackUse {
    bool collectives = false;       // messages were sent
    bool network = false;           // some crossed a NIC link (edge kind "network")
    bool parameter_server = false;
    bool real_data = false;         // some run read real data (its input pipeline ran)
    int nodes = 0, gpus = 0;        // the largest node and GPU counts of its runs
  };
  std::map<std::string, StackUse> stacks;
  std::set<std::string> winograd_devices;                     // devices that ran 3x3 stride-1 convolutions
  // Devices whose runs have several workers waiting for each other (synchronous collectives), and those of them
  // whose compute jitter some run measured (calibrate/jitter.hpp copies it): the others' jitter is fitted.
  std::set<std::string> synchronous_devices;
  std::set<std::string> measured_jitter_devices;
  std::map<std::string, std::set<int64_t>> device_batches;    // batch sizes per device
  std::map<std::string, double> gpu_peak_flops;               // GPU device types: their FP32 peak (their width)
  // The units each device's convolutions and GEMMs ran on (sim/compute_model.hpp): "fp32" (CUDA cores at FP32),
  // "tf32" and "tensor" (tensor cores at TF32, at fp16/bf16), "depthwise" and "grouped" (CUDA cores, few channels
  // per group): which efficiencies its runs can tell.
  std::map<std::string, std::set<std::string>> device_units;
  std::set<std::string> l2_devices;  // devices with an L2 size in the catalogue whose ops' tensors fit in it

};

struct ParameterChoice {
  std::set<sim::LinkClass> fixed_links;  // link classes set from collective benchmarks: not fitted
  bool model_factors = false;            // per-model factors on conv and matmul (only when asked: see fit.hpp)
  // Only the factors are fitted (FitOptions::only_model_factors): one model's factor then stands alone, where with
  // the device's efficiencies beside it a single model's factor would be their duplicate.
  bool only_model_factors = false;
  // --fit NAME: a stack's fixed cost (stacks/*.json "fit": false) is a parameter too where one of these names it
  // (parameter_named) and its runs exercise it; it must have a value of its own and a lower bound above 0.
  std::vector<std::string> fit;
};

// Whether `names` (of --fit, --fix, --free) name the parameter: its full name or its last component(s)
// ("memory", "mxnet/message_overhead_s").
bool parameter_named(const std::string& parameter, const std::vector<std::string>& names);

// The parameters to fit for `what`, minus the link factors named in choice.fixed_links (set from benchmarks), plus
// the stacks' fixed costs choice.fit names.
std::vector<Parameter> choose_parameters(const Exercised& what, const ParameterChoice& choice);

// Makes sure `c` has an entry for every device of `what` (a copy of the "default" entry when missing) and that
// every value sits inside its parameter's bounds (clamped), so that a fit starts from a valid point.
void prepare_start(sim::Calibration& c, const Exercised& what, const std::vector<Parameter>& params);

}  // namespace scaletwin::calibrate
