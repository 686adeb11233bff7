// The software stacks that move a training job's bytes (stacks/*.json, embedded at build time): TensorFlow 1.x's
// gRPC parameter servers, MXNet's kvstore, scaletwin's own MPI executor, NCCL. Each file names the stack's costs
// (sim/calibration.hpp, StackCosts), and for each its start or fixed value, its bounds, whether `calibrate` fits
// it, and where the number comes from. A run's stack is its scenario's "framework", or the default of its scheme
// and cluster (run_stack).
//
//   {"format": "scaletwin-stack/1", "name": "tensorflow", "description": "...", "source": "...",
//    "link_factors": {"value": false, "source": "..."},
//    "ps_local_aggregation": {"value": false, "source": "..."},
//    "parameters": {"network_Bps": {"value": 6e8, "fit": true, "lower": 5e7, "upper": 2e10, "source": "..."}}}
//
// "value": null means the stack has no such cost of its own (the calibration's top-level value applies, or, for
// network_Bps, no ceiling). The parameters are op_overhead_s, message_overhead_s, network_Bps,
// server_update_s_per_byte, conv_workspace_bytes and input_cost_per_image_s (calibration.hpp says what each is).
// A fitted one has a lower bound above 0 (the fit searches its logarithm); a fixed one may be 0.
//
// "models" (optional) names the network a measured run of this stack means by a built-in model name, where the
// framework's benchmark script builds a different one: {"alexnet": {"model": "alexnet_mxnet", "source": "..."}}
// (MXNet's "alexnet" is Krizhevsky's widths, not tf_cnn_benchmarks' single-tower variant). Measured runs are
// resolved through it (calibrate/measurements.hpp); a scenario names its network itself.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "plan/scenario.hpp"
#include "sim/calibration.hpp"
#include "sim/compute_model.hpp"
#include "topology/cluster.hpp"

namespace scaletwin::sim {

struct StackParameter {
  std::string key;                 // "network_Bps"
  std::optional<double> value;     // start (fitted) or fixed value; nullopt: none of its own
  bool fit = false;
  double lower = 0.0, upper = 0.0;
  std::string source;              // "source" or "assumption" of the file
};

struct StackDescription {
  std::string name;
  std::string description;
  std::vector<StackParameter> parameters;
  std::map<std::string, std::string> models;  // a built-in model name -> the network this stack's runs mean by it
  // "link_factors": whether the stack's runs calibrate the links' bandwidth factors (mpi, nccl: schedules of
  // point-to-point messages, whose transport inefficiency a factor on the wire carries). A framework with a cost
  // model of its own (tensorflow, mxnet) carries what is not the wire in that model, never in a link factor.
  bool link_factors = false;
  // "ps_local_aggregation": whether the framework sums the gradients of a node's GPUs before they leave the node
  // for parameter servers reached over the network (MXNet's dist kvstore: one push per key and node), where a
  // scheme does not say (apply_stack_defaults).
  bool ps_local_aggregation = false;
  // "ps_servers_per_node" (optional, false when absent): whether the framework's launcher starts one parameter
  // server per worker node where a scheme does not state "servers" (MXNet's tools/launch.py), as "per_node" does.
  bool ps_servers_per_node = false;
  // "ps_tensors" (optional, "sliced" when absent): how the framework spreads its tensors over parameter servers
  // (plan::TensorPlacement: tensorflow "whole", mxnet "kvstore") where a scheme does not say "tensors"; its
  // optional "device", how it spreads them over servers on the GPUs (placement "device") where that differs (mxnet
  // "largest_first": its device kvstore's merge buffers).
  plan::TensorPlacement ps_tensors = plan::TensorPlacement::kSliced;
  std::optional<plan::TensorPlacement> ps_tensors_on_devices;
  // "ps_device_servers_per_gpu" (optional, false when absent): whether the framework spreads parameters held on the
  // GPUs (placement "device") over every worker GPU where a scheme does not state "servers", as "per_gpu" does
  // (tf_cnn_benchmarks' ParamServerDeviceSetter, MXNet's device kvstore).
  bool ps_device_servers_per_gpu = false;
  // "fp32_as_tf32" (optional, true when absent): whether the framework lets cuDNN and cuBLAS run fp32 convolutions
  // and GEMMs as TF32 on devices with TF32 tensor cores (PyTorch's torch.backends.cudnn.allow_tf32, TensorFlow 2.4's
  // default, NVIDIA's NGC containers; sim::Arithmetic).
  bool fp32_as_tf32 = true;
  // "kernels" (optional; none fused, no transposes when absent): how the framework runs a layer's kernels on a GPU
  // (plan::Kernels), and rules by release and XLA: {"value": {"fuse_bn_relu": b, "fuse_bn_add_relu": b,
  // "nchw_transposes": b}, "source": "...", "rules": [{"version_before": "20.12" | "version_from": "18.12" | "xla":
  // b, "fuse_bn_relu": b, ..., "source": "..."}]}: each rule whose condition the run's framework_version (an NGC
  // container's YY.MM) and xla meet replaces the fields it names, in order; a release "" (unknown) meets no
  // version rule.
  struct KernelRule {
    std::string version_before, version_from;
    std::optional<bool> xla;
    std::optional<bool> fuse_bn_relu, fuse_bn_add_relu, nchw_transposes, prefetch_input;
  };
  plan::Kernels kernels;
  std::vector<KernelRule> kernel_rules;
  // The kernels of a run of this stack at a release and with or without XLA.
  plan::Kernels kernels_for(const std::string& version, bool xla) const;
  StackCosts costs() const;        // the values as a calibration's stack entry
  // The built-in model a measured run of this stack that names `model` trained: models' entry, else `model`.
  std::string network(const std::string& model) const;
  // The parameter `key` (one of stack_parameter_keys(): every stack has each).
  const StackParameter& parameter(const std::string& key) const;
};

const std::vector<std::string>& stack_parameter_keys();
// The built-in stacks, sorted by name.
const std::vector<StackDescription>& builtin_stacks();
std::vector<std::string> builtin_stack_names();  // their names, in that order
// The stack named `name`; InputError naming `file` and `path` when there is none.
const StackDescription& find_stack(const std::string& name, const std::string& file = "",
                                   const std::string& path = "/framework");
StackDescription parse_stack_description(const Json& json, const std::string& file);
// The stack of a scenario on its cluster: its "framework", else "mpi" on a cluster of CPU cores (scaletwin's own
// executor), "tensorflow" for parameter servers (the PS of the measured era), "nccl" for all-reduce schemes.
std::string run_stack(const plan::Scenario& scenario, const topology::Cluster& cluster);
// A scenario's scheme completed by its stack where the scheme is silent: a parameter-server scheme whose servers
// are reached over the network (placement colocated or dedicated) and that does not state "local_aggregation"
// takes the named stack's ps_local_aggregation (MXNet: true), noted in PsScheme::local_aggregation_by, and one
// that does not state "servers" its ps_servers_per_node (MXNet: a server per node), noted in servers_by; one with
// its servers on the GPUs (placement "device") that does not state "servers" a server per worker GPU where the
// stack's ps_device_servers_per_gpu says so (TensorFlow, MXNet), noted in servers_by; any parameter-server scheme
// that does not state "tensors" takes ps_tensors (ps_tensors_on_devices on the GPUs where the stack has one),
// noted in tensors_by. Only a stack the scenario names ("framework") counts: the defaults of run_stack (mpi,
// tensorflow, nccl) do what the scheme says. Returns whether it changed the scheme. predict, run, describe and every
// measured run apply it.
// It also sets the scenario's kernels (plan::Scenario::kernels) from its named stack at its release and XLA
// (apply_stack_kernels); a scenario without a framework keeps the defaults (no fusion, no transposes).
bool apply_stack_defaults(plan::Scenario& scenario);
void apply_stack_kernels(plan::Scenario& scenario);
// The arithmetic a scenario's run computes in: its precision, and its stack's fp32_as_tf32 (the named framework's;
// true for the defaults of run_stack, as scaletwin's own CUDA executor runs fp32 convolutions as TF32).
Arithmetic scenario_arithmetic(const plan::Scenario& scenario);
// The field of a StackCosts by key.
std::optional<double>& stack_field(StackCosts& costs, const std::string& key);

}  // namespace scaletwin::sim
