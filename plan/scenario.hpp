// A scenario: model + cluster + parallel scheme + batch + sweep + training options, typed and validated, SI units.
//
// Only plan/ reads scenario JSON (load_scenario); sim/ and exec/ receive these structs. The JSON format is
// documented in scenarios/README.md; the scheme vocabulary is the one of ../shared/spec.md.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <optional>
#include <string>
#include <vector>

#include "core/json_reader.hpp"
#include "plan/algorithm.hpp"

namespace scaletwin::plan {

enum class SchemeKind { kPs, kAllReduce, kHybrid };
enum class PsMode { kSync, kAsync, kMixedAsync };
enum class PsPlacement { kHostCpu, kDevice, kColocated, kDedicated };
// How a parameter server's tensors (a layer's parameters) are spread over the servers:
//   sliced   every tensor split evenly over all servers (scaletwin's executor);
//   whole    each tensor whole on one server, the least loaded by bytes at its creation, in the network's order
//            (tf_cnn_benchmarks: ParamServerDeviceSetter / GreedyLoadBalancingStrategy);
//   kvstore  MXNet's ps-lite: a tensor above 10^6 elements split evenly, a smaller one whole on server
//            (key * 9973) mod servers, its key its index among the network's parameter tensors (KVStoreDist);
//   largest_first
//            each tensor whole on one server, the largest first, each on the least loaded by bytes (MXNet's
//            device kvstore: CommDevice::InitMergeBuffer places each key's merge buffer so on the GPUs).
enum class TensorPlacement { kSliced, kWhole, kKvstore, kLargestFirst };

const char* ps_mode_name(PsMode m);
const char* ps_placement_name(PsPlacement p);
const char* tensor_placement_name(TensorPlacement t);
// "sliced", "whole", "kvstore", "largest_first": the names a scheme's "tensors" and a stack's "ps_tensors" take, and
// the placement of one of them (a name outside the list is the caller's error to report: JsonObject::get_enum with
// these names).
const std::vector<std::string>& tensor_placement_names();
TensorPlacement tensor_placement_named(const std::string& name);

struct PsScheme {
  PsMode mode = PsMode::kSync;
  int servers = 1;
  // "servers": "per_node" or "per_gpu": one server per worker node (as tf_cnn_benchmarks' distributed runs and
  // MXNet's launcher start them) or per worker GPU (tf_cnn_benchmarks' parameter servers on the GPUs) at every
  // point of a sweep; `servers` is then unused. count() resolves it.
  enum class Per { kFixed, kNode, kGpu };
  Per servers_per = Per::kFixed;
  bool servers_stated = false;  // the scheme said "servers"; else the spec's default, 1, or the stack's
  std::string servers_by;       // the stack whose default made it a server per node ("mxnet"), or ""
  PsPlacement placement = PsPlacement::kColocated;
  bool local_aggregation = false;
  bool local_aggregation_stated = false;  // the scheme said "local_aggregation"; else the spec's default, false,
                                          // or the stack's (sim::apply_stack_defaults)
  std::string local_aggregation_by;       // the stack whose default made local_aggregation true ("mxnet"), or ""
  TensorPlacement tensors = TensorPlacement::kSliced;
  bool tensors_stated = false;  // the scheme said "tensors"; else sliced, or the stack's (sim::apply_stack_defaults)
  std::string tensors_by;       // the stack whose default set `tensors`, or ""

  // The number of servers of a point of `gpus` workers on `worker_nodes` nodes.
  int count(int worker_nodes, int gpus) const {
    return servers_per == Per::kNode ? worker_nodes : servers_per == Per::kGpu ? gpus : servers;
  }
};

struct AllReduceScheme {
  // ring | interval_pairing | halving_doubling | double_binary_tree | direct | hierarchical
  Algorithm algorithm = Algorithm::kRing;
  Algorithm intra = Algorithm::kRing;  // hierarchical only: an algorithm with a reduce-scatter form
  Algorithm inter = Algorithm::kRing;  // hierarchical only: one of flat_allreduce_algorithms()
  int64_t bucket_bytes = 25'000'000;
  bool overlap = true;
};

struct Scheme {
  SchemeKind kind = SchemeKind::kAllReduce;
  // For kPs and kAllReduce, the scheme itself. For kHybrid, `data_parallel` says which of the two the replicated
  // layers use, and model_parallel_layers lists the layers split by output neurons (empty + model_parallel_fc
  // means "every fully connected layer").
  SchemeKind data_parallel = SchemeKind::kAllReduce;
  PsScheme ps;
  AllReduceScheme allreduce;
  std::vector<std::string> model_parallel_layers;
  bool model_parallel_fc = true;

  // Whether the plan has parameter-server processes: a PS scheme, or a hybrid whose replicated layers use one.
  bool has_servers() const {
    return kind == SchemeKind::kPs || (kind == SchemeKind::kHybrid && data_parallel == SchemeKind::kPs);
  }
  std::string describe() const;  // "allreduce(ring, 25 MB buckets, overlap)"
  Json to_json() const;          // in the spec's vocabulary
};

// Reads a scheme object (spec vocabulary) at obj; errors name obj.file() and the path. A key outside the
// vocabulary is an error, unless `ignored` is given: then its JSON path is appended there and the key is left
// alone (a measured run keeps unknown fields, ../shared/spec.md; a scenario does not).
Scheme parse_scheme(const JsonObject& obj, std::vector<std::string>* ignored = nullptr);

// The convergence model of a model + dataset + optimizer + learning-rate rule (sim/convergence.hpp): images to
// reach the target accuracy at global batch B with mean staleness tau,
//   E(B, tau) = images_min * rho(B) * (1 + B / critical_batch) * (1 + staleness_cost * tau * lr(B) / lr(B_ref))
// (McCandlish et al. 2018, "An Empirical Model of Large-Batch Training", eq. 2.11, with the learning-rate rule's
// factor rho and a staleness cost; sim/convergence.hpp).
struct Convergence {
  double images_min = 0.0;      // images to the target at a small batch, synchronous
  double critical_batch = 0.0;  // B_crit: beyond it, doubling the batch no longer halves the steps
  double staleness_cost = 0.0;  // extra images per unit of mean staleness times the rate's ratio to the reference
  double log_sd = 0.0;          // cross-validated spread of log(predicted / measured images to target)
  double target_accuracy = 0.0; // the accuracy these parameters were fitted for
  std::string source;           // the file it came from, or "scenario"
  // The optimizer critical_batch was fitted for ("" any: the scenario's is not checked), and the critical batch of
  // other optimizers fitted on other data ("sgd" from Goyal et al.'s rows beside "lars" from MLPerf's RCPs): a
  // scenario naming an optimizer that is in neither is refused.
  std::string optimizer;
  std::map<std::string, double> critical_batch_by_optimizer;
  // The learning-rate warm-up's cost: the fraction of each warm-up epoch that makes no progress toward the target
  // (linear warm-up from about 0: about half of it; fitted in [0, 1]), and the training set's size that converts
  // those epochs to images (0: unknown; the warm-up is then not counted).
  double warmup_cost = 0.0;
  double dataset_images = 0.0;
  // Beyond the update batches it was fitted on ([batch_low, batch_high]; 0, 0: not stated), the interval widens
  // by the critical batch's standard error (log scale) as the prediction leans on it (sim/convergence.hpp).
  double batch_low = 0.0, batch_high = 0.0;
  double se_log_critical_batch = 0.0;
  // What it was fitted on ("" not stated: not checked), its recipe's warm-up at each fitted batch ({batch, epochs}:
  // the warm-up of a published run that states none), and the evaluation period its data were read at (0: not stated).
  std::string model;
  std::vector<std::pair<double, double>> warmup_by_batch;
  double eval_every_epochs = 0.0;
};

// Reads a calibrate --convergence file (format "scaletwin-convergence/1"); InputError naming the file and field.
Convergence load_convergence(const std::string& path);
// The same from a parsed document (a shipped fit embedded in the binary); `file` names it in errors and as source.
Convergence parse_convergence(const Json& doc, const std::string& file);

// What a run trains on, and the arithmetic of its compute: parsed once from their names ("synthetic" | "real";
// "fp32" | "tf32" | "bf16" | "fp16"), written back by name. bf16 and fp16 are mixed precision (automatic mixed
// precision, "amp_bf16" and "amp_fp16" as published tables write them: 2-byte activations and tensor-core math,
// fp32 master weights); tf32 keeps fp32 tensors with TF32 tensor-core math; fp32 is the stack's FP32, which runs
// as TF32 on devices that have it where the stack enables it (sim::effective_precision), as frameworks do by default.
enum class Data { kSynthetic, kReal };
enum class Precision { kFp32, kTf32, kBf16, kFp16 };
const char* data_name(Data d);
const char* precision_name(Precision p);
Data data_from_name(const std::string& name);            // a name get_enum has checked
Precision precision_from_name(const std::string& name);  // idem (the aliases amp_fp16 and amp_bf16 included)
// The software stacks a scenario may name as its "framework" (stacks/*.json: sim/stacks.hpp checks they agree).
const std::vector<std::string>& framework_names();
// The names get_enum accepts: fp32, tf32, bf16, fp16, amp_bf16, amp_fp16.
const std::vector<std::string>& precision_names();
// Bytes of one activation value: 2 under mixed precision (bf16, fp16), else 4.
int activation_element_bytes(Precision p);

struct Training {
  Data data = Data::kSynthetic;
  std::string dataset;              // "fashion-mnist" | "cifar10" (real data); default from the model's input
  std::string dataset_path;         // directory holding the files; default: Debian's location
  int64_t epochs = 0;               // 0: use iterations
  int64_t iterations = 20;
  int64_t warmup_iterations = 3;    // excluded from images/s
  double learning_rate = 0.01;      // for the reference global batch below, scaled by lr_scaling
  int64_t lr_reference_batch = 256;
  // How the rate follows the global batch B: "linear" (lr × B / reference, Goyal et al. 2017), "sqrt"
  // (lr × sqrt(B / reference), Krizhevsky 2014), "none" (lr at every batch) or "tuned" (a recipe tuned per batch,
  // as MLPerf's reference convergence points: predict only, the convergence model's rule factor is then 1).
  std::string lr_scaling = "linear";
  int64_t lr_warmup_epochs = 0;
  // "sgd" (with momentum: what `run` trains with) or "lars" (layer-wise adaptive rates, You et al. 2017: MLPerf's
  // ResNet-50 recipe; predict only): picks the convergence model's critical batch.
  std::string optimizer = "sgd";
  double momentum = 0.9;
  double weight_decay = 5e-4;
  uint64_t seed = 1;
  Precision precision = Precision::kFp32;
  // Time to accuracy (run --target-accuracy, predict): the test accuracy to reach (0: none), the epochs a run may
  // take at most to reach it, and how often it evaluates, in epochs (a fraction evaluates within an epoch).
  double target_accuracy = 0.0;
  int64_t max_epochs = 30;
  double eval_every_epochs = 0.25;
  // predict: the epoch of the first evaluation (0: eval_every_epochs; MLPerf ResNet-50 evaluates every 4 epochs from
  // an offset), the validation set's size in images (each evaluation's time at the simulated inference rate; 0: not
  // counted) and a fixed time per epoch (data loader restarts, checkpoints: 0 by default), in seconds.
  // "varies" (eval_offset_varies): the offset differs between runs, as in MLPerf's, and a target is read on average
  // half an evaluation period after it is crossed.
  double eval_offset_epochs = 0.0;
  bool eval_offset_varies = false;
  int64_t eval_images = 0;
  double epoch_overhead_s = 0.0;
  // predict: the training set's size in images (with epochs and no target: the time of those epochs; 0: none) and
  // the convergence model's parameters (sim/convergence.hpp): inline, or the path of a calibrate --convergence file.
  int64_t dataset_images = 0;
  std::optional<Convergence> convergence;
};

// What-if faults (issue 10), applied by the simulator only (`run` ignores them). Links are selected by kind (the
// cluster's link kinds: "pcie", "nvlink", "nvswitch", "network", "uplink", ...; "" any), node (the links of one
// node: its intra-node links and its NIC links; -1 every node) and endpoint (a vertex name such as "node0/gpu1"
// or "node2/nic0": the links that touch it; "" any). Every given field must match.
struct LinkSelector {
  std::string kind;
  int node = -1;
  std::string endpoint;
};

struct Fault {
  enum class Kind { kDegradedLink, kFailedLink, kStraggler };
  Kind kind = Kind::kDegradedLink;
  LinkSelector link;               // degraded_link, failed_link
  double bandwidth_factor = 1.0;   // degraded_link: in (0, 1]
  int gpu = -1;                    // straggler: the worker (GPU) index, from 0
  double slowdown = 1.0;           // straggler: compute times multiplied by it, >= 1
  std::string json_path;           // "/faults/2", for errors found later (a selector matching no link)
};

// How the software stack runs a layer's kernels on a GPU (sim::apply_stack_defaults fills it from stacks/*.json and a
// measured run's software fields; plan::lower reads it). Fused layers have no kernels of their own: cuDNN's batch
// norm + activation kernels (MXNet's fused BN-ReLU, PaddlePaddle's fuse_bn_act_ops, XLA) run a ReLU inside the batch
// norm's kernels, and the batch norm + add + activation ones (MXNet's BatchNormAddRelu, fuse_bn_add_act_ops) the
// residual sum and its ReLU too. nchw_transposes: activations kept NCHW while the tensor cores want NHWC, so cuDNN
// transposes each convolution's input and output in both directions around its tensor-core kernel.
struct Kernels {
  bool fuse_bn_relu = false;
  bool fuse_bn_add_relu = false;
  bool nchw_transposes = false;
  // The input pipeline copies each batch to the device ahead of its step, on a copy engine beside the kernels
  // (PyTorch's DataLoader with pinned memory, DALI, MXNet's and TensorFlow's prefetching to the GPU): the upload is off
  // the step's critical path. false: each step uploads its batch before computing (TensorFlow 1.x's feeds of 2017).
  bool prefetch_input = false;
  std::string source;  // what set them ("stack pytorch, container 20.06"), for describe
};

struct Scenario {
  std::string file;                 // where it came from ("" for built-in)
  // Where its fields sit in that file: "" for a scenario file, "/runs/3" for a measured run (calibrate's
  // scenario_of), so that errors found by lower() name the run's own field.
  std::string json_path;
  std::string name;
  std::string description;
  std::string model;                // built-in name or path (resolved relative to the scenario file)
  std::optional<std::vector<int64_t>> input;  // override: [C, H, W]
  std::optional<int64_t> classes;   // override
  std::string cluster;              // built-in name or path (or, with cluster_json, the synthesized cluster's name)
  // A cluster given as its file's JSON instead of a name (a published run resolved to a synthesized cluster:
  // calibrate/systems.hpp); load_scenario_cluster_spec reads it in place of `cluster`.
  std::optional<Json> cluster_json;
  int nodes = 1;
  int gpus_per_node = 0;            // 0: all devices of the node
  int64_t batch_per_gpu = 32;
  Scheme scheme;
  // The software stack that moves the bytes (sim/stacks.hpp): "tensorflow" (1.x gRPC parameter servers and
  // replicated copies), "mxnet" (kvstore), "mpi", "nccl"; "" = the default of the scheme and cluster.
  std::string framework;
  std::vector<int> sweep_gpus;      // GPU counts for predict; empty: nodes * gpus_per_node only
  // predict: the global batch at each point of sweep_gpus (empty: batch_per_gpu × GPUs everywhere), as a recipe sets
  // it per scale; each must be a multiple of the point's GPU count.
  std::vector<int64_t> sweep_global_batch;
  // predict: the learning-rate warm-up at each point (empty: training.lr_warmup_epochs everywhere), as a recipe
  // lengthens it with the batch.
  std::vector<int64_t> sweep_lr_warmup_epochs;
  Training training;
  std::vector<Fault> faults;        // what-if faults for predict (issue 10); empty: a healthy cluster
  Kernels kernels;                  // the stack's kernels (above); set by sim::apply_stack_defaults
  // The framework's release where it matters (an NGC container "20.06"; a measured run's container), and whether
  // TensorFlow compiles with XLA: the stack's rules for kernels read them (stacks/*.json). "" and false: unknown.
  std::string framework_version;
  bool xla = false;

  // The JSON path of one of its fields ("/nodes" -> "/runs/3/nodes" for a measured run).
  std::string path_of(const std::string& field) const { return json_path + field; }
  // Where a GPU count comes from: the sweep of a scenario file, the nodes of a measured run (nodes x gpus_per_node).
  std::string gpus_path() const { return json_path.empty() ? "/sweep/gpus" : json_path + "/nodes"; }
};

// The scenario at a point of its sweep: batch_per_gpu from sweep_global_batch and training.lr_warmup_epochs from
// sweep_lr_warmup_epochs where the sweep sets them for `gpus`, else the scenario's.
Scenario with_point_batch(const Scenario& s, int gpus);

// Loads and validates a scenario file; every error is an InputError naming the file, the JSON path and what was
// expected. Unknown keys are errors.
Scenario load_scenario(const std::string& path);
Scenario parse_scenario(const Json& json, const std::string& file);
// The scenario `scaletwin demo` runs when given none.
Scenario default_scenario();

}  // namespace scaletwin::plan
