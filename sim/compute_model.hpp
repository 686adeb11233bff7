// The compute model: how long one ComputeOp of an IterationPlan takes on a device or a host CPU.
//
//   t_math   = flops / (peak * efficiency[layer class](flops / bytes)), the peak and efficiency of the op's units: the
//              precision's (tensor cores for tf32, bf16, fp16), or the FP32 CUDA cores' for a depthwise or narrow
//              grouped convolution (calibration.hpp: cuda_core_op)
//   t_memory = bytes / (memory_bandwidth * efficiency.memory)
//   t_device = t_math + t_memory + k · op_overhead_s       a convolution or GEMM on a device (a GPU)
//   t_device = max(t_math, t_memory) + k · op_overhead_s   any other op, and every op on a host CPU
//   (k: the kernels the op launches, plan::ComputeOp::kernels)
//   t = t_device + dispatch_s
//
// A GPU's convolution and GEMM kernels stream their operands and results through DRAM (a K80's L2 holds 1.5 MB,
// one layer's activations tens of MB) without hiding the traffic behind the arithmetic, so the two add, as in
// Paleo (Qi, Sparks and Talwalkar, ICLR 2017: a layer's time is reading its inputs + computing + writing its
// outputs). A memory-bound op (batch norm, relu, pooling) is its traffic. On a host CPU a layer's operands sit in
// its caches and the roofline's larger term bounds the op. Fitted on the published K80 runs, the sum predicts
// held-out runs better than the maximum (docs/results/k80-calibration.md).
//
// op_overhead_s is the device's own cost per op (its kernels' launches and drains); dispatch_s the framework's
// cost per op that the device does not overlap (its stack's op_overhead_s, DeviceEfficiency::dispatch_s): the
// host's work between one layer-phase's kernels and the next's (a framework's graph ops, its synchronisation with
// host-resident variables and their copies), added to every op, on a device as on a host CPU (where the thread
// that dispatches also computes). The published K80 runs choose this over a floor under each op's time (a host
// that dispatches the next op while the device runs this one): the floor fits their two batch sizes, but fitted
// at one it predicts the other 11-18% off where the sum is 7-13% off (docs/results/k80-calibration.md).
// times (1 + shared_node_slowdown * co_runners) (the other busy workers on the processor's node), plus, for server
// updates, bytes * ps_cost_per_byte_s. The data phase with real data is the batch's upload from host memory,
// bytes / upload_Bps on a device (its share of the PCIe route, note_upload_links; the device's memory write of the
// same bytes is the roofline's term), not hidden behind compute, plus samples * input_cost_per_image_s for what the
// host's input pipeline leaves exposed (0 where it keeps up: decoding runs on the host's threads ahead of the
// device). Reductions inside collectives (RecvReduce) read two operands and write one:
// 3 * bytes / (memory_bandwidth * efficiency.memory); copies move 2 * bytes the same way.
#pragma once

#include <string>
#include <vector>

#include "plan/iteration_plan.hpp"
#include "sim/calibration.hpp"
#include "topology/cluster.hpp"

namespace scaletwin::sim {

// What a processor offers to the compute model.
struct Processor {
  std::string name;  // the device's name (Calibration::device looks it up, then its family)
  double peak_flops = 0.0;  // convolutions' and GEMMs' peak at the run's effective precision (its tensor cores')
  double memory_bandwidth_Bps = 0.0;
  bool is_cpu = false;
  int co_runners = 0;  // other workers computing on the same node at the same time (see note_co_runners)
  // A parameter server on a host CPU: the plan's servers on that CPU, itself included (see note_co_runners). A
  // synchronous step's pushes reach them together, so they sum and apply their shards at the same time on the
  // node's cores and memory, each at 1/k of the rate one server alone has.
  int sharing_servers = 1;
  // A device worker's share of its route from the node's host memory, over which a real-data batch is uploaded
  // each iteration (see note_upload_links); 0: none (a host CPU's batch is already in its memory).
  double upload_Bps = 0.0;
  std::string family = "";      // the device's architecture family ("ampere"; "" for a host CPU or an unnamed one)
  plan::Precision precision = plan::Precision::kFp32;  // the effective precision of its convolutions and GEMMs
  double vector_flops = 0.0;    // its FP32 CUDA-core peak: depthwise and grouped convolutions (cuda_core_op)
  double l2_bytes = 0.0;        // its L2 cache: an op whose tensors fit moves them at the L2's gain (l2_gain)
};

// The arithmetic of a run: its precision (plan::Precision), and whether its software stack runs fp32 convolutions and
// GEMMs as TF32 on devices that have TF32 tensor cores (stacks/*.json "fp32_math": PyTorch, TensorFlow and MXNet do by
// default on Ampere and later, as scaletwin's own CUDA executor does).
struct Arithmetic {
  plan::Precision precision = plan::Precision::kFp32;
  bool fp32_as_tf32 = true;
};
// The precision a device computes a run's convolutions and GEMMs in: fp32 becomes tf32 where the device has TF32 and
// the stack enables it; the others are what the run says.
plan::Precision effective_precision(const topology::DeviceType& d, const Arithmetic& a);
// The device's dense peak for that precision (FP32 for fp32, its tensor cores' rate for the others); 0 when it has
// none (a V100's TF32, a K80's FP16).
double peak_flops_for(const topology::DeviceType& d, plan::Precision p);
Processor device_processor(const topology::DeviceType& d, const Arithmetic& a = {});
Processor cpu_processor(const topology::HostCpu& c);
// The processor an endpoint computes on: its node's device type, or the node's host CPU (device -1).
Processor endpoint_processor(const plan::Endpoint& ep, const topology::Cluster& cluster, const Arithmetic& a = {});
// Sets co_runners of every worker endpoint on a device: the other such workers of the plan on its node (servers
// mostly wait and are not counted), and sharing_servers of every server on a host CPU. `per_endpoint` is indexed
// like plan.endpoints.
void note_co_runners(std::vector<Processor>& per_endpoint, const plan::IterationPlan& plan);
// Sets upload_Bps of every worker endpoint on a device: along the route from its node's host CPU to the device,
// each link's bandwidth divided by the number of the node's device workers whose routes cross it, the least of
// these (the board switch two K80s share, a PCIe uplink). The batches of real data go that way every iteration.
void note_upload_links(std::vector<Processor>& per_endpoint, const plan::IterationPlan& plan,
                       const topology::Cluster& cluster);

// One op's time and its parts (ComputeModel::op_parts): total_s is what op_time_s charges.
struct OpParts {
  double math_s = 0.0;      // the arithmetic at the op's unit's peak and efficiency
  double memory_s = 0.0;    // its traffic at the memory's bandwidth and efficiency
  double overhead_s = 0.0;  // the device's per-kernel cost and the framework's dispatch
  double total_s = 0.0;
};

class ComputeModel {
 public:
  ComputeModel(Calibration calibration, bool real_data) : calibration_(std::move(calibration)), real_data_(real_data) {}

  double op_time_s(const plan::ComputeOp& op, const Processor& p) const;
  // The same with p's efficiencies already looked up (calibration().device(p.name)): for loops over many ops.
  double op_time_s(const plan::ComputeOp& op, const Processor& p, const DeviceEfficiency& eff) const;
  OpParts op_parts(const plan::ComputeOp& op, const Processor& p, const DeviceEfficiency& eff) const;
  const Calibration& calibration() const { return calibration_; }
  // Time to reduce `bytes` into a buffer (RecvReduce) on p; `server` adds the parameter-server cost per byte (and on
  // a host CPU shares it with the servers beside it: Processor::sharing_servers).
  double reduce_time_s(double bytes, const Processor& p, bool server) const;
  double copy_time_s(double bytes, const Processor& p) const;

 private:
  Calibration calibration_;
  bool real_data_;
};

}  // namespace scaletwin::sim
