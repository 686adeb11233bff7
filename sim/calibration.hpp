// The simulator's fitted parameters: compute efficiencies per device type, link factors per link class,
// per-message and parameter-server costs, and the input pipeline cost. `calibrate` fits them; `predict` reads them.
//
// File format (strict: unknown keys are errors), all times in seconds, rates in SI units:
//
//   {
//     "format": "scaletwin-calibration/1",
//     "devices": {                              // keyed by topology::DeviceType::name / HostCpu::name, or "cpu"
//       "Tesla K80 (one GK210)": {"conv": 0.36, "matmul": 0.45, "memory": 0.60, "op_overhead_s": 2e-5,
//                                 "conv_knee_flops_per_byte": 0, "matmul_knee_flops_per_byte": 0,
//                                 "model_factors": {"inception_v3": 0.8}, "shared_node_slowdown": 0.1,
//                                 "compute_jitter": 0.05}
//     },
//     "links": {                                // link classes: pcie, nvlink, network, shm
//       "pcie": {"latency_factor": 1.0, "bandwidth_factor": 0.85}
//     },
//     "message_overhead_s": 5e-6,               // software cost per message, on the sender
//     "ps_cost_per_byte_s": 1e-10,              // a host server's threads, per byte of gradient (below)
//     "input_cost_per_image_s": 2e-4            // input pipeline per image, real data only
//   }
//
//     "stacks": {"tensorflow": {"op_overhead_s": 3e-5, "message_overhead_s": 1e-4, "network_Bps": 6e8,
//                               "server_update_s_per_byte": 2e-10, "conv_workspace_bytes": 4294967296,
//                               "input_cost_per_image_s": 0}},
//
// "stacks" holds the costs of each software stack (stacks/*.json says what each is, with sources, bounds and which
// are fitted; sim/stacks.hpp): a run of stack S uses S's values where present, the top-level ones otherwise
// (Calibration::for_run). A stack's op_overhead_s is the framework's dispatch per op that the device does not
// overlap (DeviceEfficiency::dispatch_s), added to each op's time; a device's op_overhead_s is its own cost per op
// (kernel launches and drains), added to every op too; network_Bps caps what one node's transport moves per
// direction through each NIC link (kind "network"): gRPC's or ZMQ's throughput over TCP, below the wire's rate on fast
// links and above it on slow ones, so a slow link is never made slower than its wire; server_update_s_per_byte replaces
// ps_cost_per_byte_s; conv_workspace_bytes caps the workspace of the convolution algorithms the framework lets cuDNN
// pick, so a 3x3 convolution whose Winograd transforms need more runs without the Winograd gain
// (DeviceEfficiency::workspace_limit_bytes, winograd_workspace_bytes); input_cost_per_image_s replaces the top-level
// one (a framework whose input pipeline prefetches on the host's threads exposes none of it).
//
// Every key but "format" is optional; missing ones keep the defaults (default_calibration()). conv/matmul are
// fractions of the device's peak FLOP/s reached by that layer class; memory is the fraction of memory bandwidth
// reached by every layer's memory traffic (the roofline's other roof). A device type absent from "devices"
// uses the "default" entry. The knees make conv/matmul efficiency a curve over the op's arithmetic intensity
// I = flops / bytes: eff(I) = eff * I / (I + knee), so small-channel layers (1x1 convolutions, I ~ 25 FLOP/B) run
// further below the class efficiency than wide 3x3 ones (I ~ 500); knee 0 (the default) is a flat efficiency.
// winograd_gain: 3x3 stride-1 convolutions (cuDNN runs them as Winograd transforms, which do fewer
// multiplications than the direct count) reach conv x winograd_gain of the peak per direct FLOP, times the share of
// the computed 2x2 output tiles that the output covers (winograd_tile_coverage: F(2x2, 3x3), Lavin & Gray 2016; a
// 7x7 output is computed as 8x8, 49/64); 0 = no gain, the conv efficiency. F(2x2, 3x3) does 2.25x fewer
// multiplications, in 16 small GEMMs that run no faster per multiplication than a convolution's implicit GEMM, so
// the gain lies in [1, 2.25] (the fit's bounds). Files written before the gain was a ratio give the 3x3
// efficiency itself as "conv_winograd" (read as winograd_gain = conv_winograd / conv). parallel_half_elements
// makes conv and matmul efficiency grow with the op's parallel work P (independent outputs of its GEMM,
// plan::ComputeOp::parallel_elements): eff * P / (P + parallel_half_elements), half the efficiency at P =
// parallel_half_elements (a GPU needs tens of thousands of outputs in flight to fill its cores; batch 1 leaves
// most idle); 0 = no such effect. reduction_half_length makes them grow with the op's reduction length K (the
// multiply-adds behind each output: input channels x kernel forward, output channels x kernel backward-input,
// samples x output positions backward-weight; flops / (2 parallel_elements)): eff * K / (K + reduction_half_length),
// a GEMM tile's fixed work (index set-up, the first loads' latency, writing the tile) against its main loop over
// K, so a 1x1 convolution over 64 channels runs further below the class efficiency than a 3x3 over 256; 0 = none.
// model_factors multiply the conv and matmul efficiencies when that model (Model::name) runs on the device: the
// kernels a library picks per network (Winograd for 3x3 convolutions, FFT, implicit GEMM for 1x7 ones) change
// the time per FLOP in ways FLOP counts do not show. Calibration::for_model(name) applies them; whoever
// simulates a model calls it (absent models: factor 1). shared_node_slowdown: a processor whose node has k other
// busy workers computing at the same time (CPU cores sharing caches, memory bandwidth and the package's clock)
// takes (1 + shared_node_slowdown * k) times as long per op (Processor::co_runners; default 0, no slowdown).
// compute_jitter: the coefficient of variation of a worker's compute time from one iteration to the next, as the
// executor measures it (run record "compute_jitter"; calibrate copies it, it is not fitted); workers coupled by
// synchronous collectives wait for the slowest of them every iteration (sim/jitter.hpp; default 0, none).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/json_reader.hpp"
#include "models/model.hpp"
#include "plan/iteration_plan.hpp"

namespace scaletwin::sim {

// Tensor cores need several channels per group: cuDNN runs fp16 convolutions on them when the channels per group are
// a multiple of 8 (its NHWC fp16 requirement); a depthwise or narrow grouped convolution (ResNeXt's 4 per group) runs on
// the CUDA cores.
inline constexpr int64_t kTensorCoreChannels = 8;
// Whether `op` runs on the CUDA cores whatever the precision: a convolution with fewer channels per group.
bool cuda_core_op(const plan::ComputeOp& op);

// Winograd's output tile (F(2x2, 3x3)), and the share of the tiles' outputs an out_h x out_w output uses: odd
// sizes compute a partial tile in full. The tile of 4 (F(4x4, 3x3)) predicted the cross-validation's held-out
// runs to 14.1% against 8.6% on the model of the time (docs/results/k80-calibration.md).
inline constexpr int kWinogradTile = 2;
double winograd_tile_coverage(int out_h, int out_w);
// Whether `op` has Winograd's shape: a 3x3 stride-1 convolution (the ops winograd_gain applies to).
bool winograd_shape(const plan::ComputeOp& op);
// The workspace of a 3x3 stride-1 convolution run as Winograd F(2x2, 3x3) transforms (cuDNN's non-fused Winograd:
// the input, the filters and the output transformed into 4x4 tiles in the workspace, fp32): per 2x2 output tile 16
// values for each input and each output channel of each sample, and 16 per filter:
// 4 B x 16 x (tiles x samples x (in + out channels) + in x out channels), tiles = ceil(out_h/2) x ceil(out_w/2).
double winograd_workspace_bytes(const plan::ComputeOp& op);

struct DeviceEfficiency {
  double conv = 0.35;
  double matmul = 0.45;
  double memory = 0.60;
  double op_overhead_s = 20e-6;
  double conv_knee_flops_per_byte = 0.0;
  double matmul_knee_flops_per_byte = 0.0;
  std::map<std::string, double> model_factors = {};  // Model::name -> factor on conv and matmul efficiency
  double shared_node_slowdown = 0.0;                  // per other busy worker on the node (see above)
  double compute_jitter = 0.0;                        // CV of compute time per iteration (see above)

  double winograd_gain = 0.0;                         // 3x3 stride-1 convolutions over conv; 0: none (see above)
  // Convolutions and GEMMs on tensor cores, as fractions of the precision's peak: mixed precision (fp16, bf16) and
  // TF32; 0: conv (and matmul) as above. Convolutions with fewer than kTensorCoreChannels channels per group do not
  // use tensor cores: depthwise ones (one channel per group) reach `depthwise` and other grouped ones `grouped` of
  // the FP32 CUDA-core peak; 0: conv.
  // An op whose largest tensor fits in the device's L2 cache (plan::ComputeOp::tensor_bytes <= its l2) moves its
  // traffic (1 + l2_gain) times as fast: the tensor its producer just wrote is read from the L2 rather than DRAM
  // (an A100's 40 MB hold a 7x7 or 14x14 stage of ResNet-50 at batch 256 in fp16, not a 56x56 one). 0: no gain.
  double l2_gain = 0.0;
  double conv_tensor = 0.0;
  double conv_tf32 = 0.0;
  double depthwise = 0.0;
  double grouped = 0.0;
  double parallel_half_elements = 0.0;                // see above; 0: none
  double reduction_half_length = 0.0;                 // see above; 0: none
  // The framework's dispatch per op (its stack's op_overhead_s, set by Calibration::for_run; not in the file's device
  // entries): its cost between one op and the next that the device does not overlap, added to each op's time
  // (sim/compute_model.hpp).
  double dispatch_s = 0.0;
  // The framework's cap on a convolution's workspace (its stack's conv_workspace_bytes, set by for_run; not in the
  // file's device entries): a 3x3 convolution whose Winograd transforms need more (winograd_workspace_bytes) runs
  // without the Winograd gain, as the library's autotuner then picks among the algorithms that fit. 0: no cap.
  double workspace_limit_bytes = 0.0;
  // Fields whose value comes from a source (a datasheet, a measured copy rate, a derivation: sim/calibration.cpp),
  // not from a fit: calibrate keeps them unless asked to fit one (--fit, --free). The file's "sourced".
  std::set<std::string> sourced = {};

  double for_class(models::LayerClass c) const;
  // The efficiency of one op of class c moving `bytes` for `flops`: for_class(c) scaled by the intensity curve.
  double for_op(models::LayerClass c, double flops, double bytes) const;
  // The efficiency of `op` with its shape: the 3x3 stride-1 efficiency where it applies, the intensity curve, the
  // parallel-work curve and the reduction-length curve; in `precision` (the device's effective one: its tensor-core
  // efficiencies for tf32, bf16, fp16; its CUDA-core ones for depthwise and grouped convolutions).
  double for_op(const plan::ComputeOp& op, plan::Precision precision = plan::Precision::kFp32) const;
  // Whether `op`'s Winograd workspace fits under workspace_limit_bytes (always, without a cap).
  bool winograd_fits(const plan::ComputeOp& op) const;
};

// One software stack's costs in a calibration (see above); absent: the top-level value (or no ceiling).
struct StackCosts {
  std::optional<double> op_overhead_s;
  std::optional<double> message_overhead_s;
  std::optional<double> network_Bps;
  std::optional<double> server_update_s_per_byte;
  std::optional<double> conv_workspace_bytes;
  std::optional<double> input_cost_per_image_s;
  bool operator==(const StackCosts&) const = default;
};

struct LinkFactors {
  double latency_factor = 1.0;
  double bandwidth_factor = 1.0;
};

enum class LinkClass { kPcie, kNvlink, kNetwork, kShm };
const char* link_class_name(LinkClass c);
// Maps a topology edge kind ("pcie", "board", "nvlink", "nvswitch", "nic", "network", "qpi", ...) to a class.
LinkClass link_class_of(const std::string& edge_kind);

struct Calibration {
  std::map<std::string, DeviceEfficiency> devices;  // "default" always present
  std::map<LinkClass, LinkFactors> links;            // every class present
  double message_overhead_s = 0.0;
  // A parameter server on a host CPU: its threads' cost per byte of gradient it receives (summing pushes) and per
  // byte it applies (the update), beyond the roofline of that memory traffic. A server on a device pays its
  // roofline only.
  double ps_cost_per_byte_s = 0.0;
  double input_cost_per_image_s = 0.0;
  std::map<std::string, StackCosts> stacks;          // by stack name (tensorflow, mxnet, mpi, nccl)
  double network_ceiling_Bps = 0.0;                  // the run's stack ceiling (for_run sets it); 0: none
  // The wire rate of the network links (edge kinds "network", NIC <-> switch, and "uplink", a fat tree's leaf <->
  // spine, sized from the NIC rate) times this, before
  // the link factor and the ceiling: predict and validate simulate the ends of a cluster's assumed NIC range with it
  // (NetworkRange, sim/predict.hpp). Not in calibration files; 1: the cluster's stated rate.
  double network_wire_scale = 1.0;
  // "prediction_interval": {"log_sd": s, ...}: the standard deviation of log(predicted / measured) over
  // cross-validated predictions (runs left out of the fit that predicted them: scripts/fit-calibrations); predict
  // gives 90% intervals x * exp(-+1.645 s). 0: unknown, no interval.
  double prediction_log_sd = 0.0;
  // "prediction_interval": {"dispatch_support": {"tensorflow": 0.21}}: the largest share of a worker's compute
  // that each stack's dispatch (fitted, docs/results/k80-calibration.md) adds on the runs the calibration was fitted on. A
  // step that leans on it further is predicted without the dispatch too, and its interval covers both
  // (sim/predict.hpp: dispatch_beyond_support). A stack without an entry: no such check.
  std::map<std::string, double> dispatch_support;
  // "prediction_interval": {"folds": [{"fold": "model!=vgg16", "runs": 16, "mape": 17.2, "log_sd": 0.17}, ...]}:
  // the cross-validation's folds (scripts/fit-calibrations), each the filter of the runs fitted, how many others it
  // predicted, their MAPE and the RMS of their log(predicted / measured). The folds that left a network out
  // ("model!=...") say how far off a network the fit never saw is predicted (sim/predict.hpp: unfitted_network).
  struct Fold {
    std::string fold;
    int runs = 0;
    double mape = 0.0;    // percent
    double log_sd = 0.0;  // 0: not recorded
  };
  std::vector<Fold> cross_validation_folds;
  // "fit": {"networks": {"Tesla K80 (one GK210)": ["alexnet", ...]}}: the networks (models::Model::name) of the runs
  // each device's values were fitted on (calibrate writes it; the rest of "fit" is for people). Empty: not known.
  std::map<std::string, std::set<std::string>> fitted_networks;
  // The ids of the runs it was fitted on ("fit"/"run_ids"; empty: not recorded): validate tells them from the others.
  std::set<std::string> fitted_runs;
  // "fit": {"scale": {"tensorflow": {"nodes": 8, "gpus": 64}}}: per software stack, the largest node and GPU counts
  // among the runs the calibration was fitted on (calibrate writes it). Empty: not known.
  struct Scale {
    int nodes = 0;
    int gpus = 0;
  };
  std::map<std::string, Scale> fitted_scale;

  const DeviceEfficiency& device(const std::string& device_name) const;
  // The entry a device of `family` uses: its own (by name), else its architecture family's ("family:ampere"), else
  // "default". A device is never matched by a name it does not have (calibration.hpp, issue 49).
  const DeviceEfficiency& device(const std::string& device_name, const std::string& family) const;
  // The key of that entry ("default" when neither exists).
  std::string device_key(const std::string& device_name, const std::string& family) const;
  // The entry a fit moves for the device: its own, else its family's, else a new one under its name (never the
  // default, which stands for devices nobody fitted).
  std::string fit_key(const std::string& device_name, const std::string& family) const;
  // The bandwidth the simulator gives a link of topology kind `edge_kind` whose wire moves wire_Bps: the class's
  // bandwidth factor, and for NIC links (kind "network") at most the stack's ceiling.
  double link_bandwidth_Bps(const std::string& edge_kind, double wire_Bps) const;
  const LinkFactors& link(LinkClass c) const { return links.at(c); }
  // A copy with every device's model factor for `model_name` folded into its conv and matmul efficiencies.
  Calibration for_model(const std::string& model_name) const;
  // for_model, then the costs of stack `stack` folded into the top-level fields (message_overhead_s,
  // ps_cost_per_byte_s, network_ceiling_Bps; its op_overhead_s into every device's dispatch_s) and the stacks cleared:
  // what a simulation of one run uses.
  Calibration for_run(const std::string& model_name, const std::string& stack) const;
};

// Defaults for the K80 and today's GPU families from published single-GPU throughput (derivation in calibration.cpp).
Calibration default_calibration();

// The calibrations shipped in calibrations/*.json (embedded at build time; fitted by scripts/fit-calibrations,
// whose data, command and commit each file records under "provenance"), sorted by name.
struct ShippedCalibration {
  std::string name;                  // "k80": the file calibrations/k80.json
  Calibration calibration;
  std::vector<std::string> devices;  // the device types it fitted (a parameter of theirs in "fit": "parameters")
  Json provenance;
};
const std::vector<ShippedCalibration>& shipped_calibrations();

// The calibration a prediction uses and how to name it. `choice`: "" (automatic: the shipped calibration that
// fitted `device_name`, else the built-in defaults), "none" (the built-in defaults), "shipped:NAME", or a file.
struct ChosenCalibration {
  Calibration calibration;
  std::string source;  // "calibrations/k80.json (shipped)", "built-in defaults", or the file's path
};
// Automatic: the shipped calibration that fitted the device by name, else one that fitted its family.
ChosenCalibration choose_calibration(const std::string& choice, const std::string& device_name,
                                     const std::string& family = "");
// A calibration with no factors and no overheads: efficiency 1, factors 1, every cost 0 (for exactness tests).
Calibration ideal_calibration();

Calibration load_calibration(const std::string& path);
Calibration parse_calibration(const Json& json, const std::string& file);
Json calibration_to_json(const Calibration& c);
void save_calibration(const std::string& path, const Calibration& c);

}  // namespace scaletwin::sim
