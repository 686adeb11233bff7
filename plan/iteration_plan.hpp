// The IterationPlan: what one training iteration does on every endpoint, lowered from a Scenario.
//
// plan::lower turns (scenario, model, cluster, GPU count) into per-endpoint programs of items. An item is either a
// compute op (a layer's forward, input-gradient, weight-gradient or update, on that endpoint) or this endpoint's
// part of a collective (a CollectiveInstance: a Schedule plus the endpoints that play its ranks 0..p-1; the rank an
// endpoint plays is its position among the participants, rank_in()). Endpoints whose programs are identical item for
// item share one program (program_of): the data-parallel workers of a flat scheme all run one. An item
// may start once the items listed in its deps (indices into the same endpoint's program) have completed; compute
// items run one at a time per endpoint (one compute stream), communication items run concurrently with compute
// (one communication engine per endpoint). Cross-endpoint ordering comes only from collectives.
//
// Sync plans: every endpoint runs its program once per iteration; the collectives couple them.
// Async plans (ps async, and between nodes for mixed_async): a CollectiveInstance with on_demand = true is started
// by its initiator (participants[0]) alone; the server endpoints serve such requests in arrival order and do not
// list them in their programs. Staleness is measured by the backends.
//
// lower() is deterministic: the same inputs give the same plan and the same hash(); both backends print it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/model.hpp"
#include "plan/rounds.hpp"
#include "plan/scenario.hpp"
#include "plan/schedule.hpp"
#include "topology/cluster.hpp"

namespace scaletwin::plan {

enum class EndpointKind { kWorker, kServer };

struct Endpoint {
  EndpointKind kind = EndpointKind::kWorker;
  std::string name;       // "w3" (worker 3), "ps1" (server shard 1)
  int node = 0;           // cluster node
  int device = -1;        // local device index, -1: the node's host CPU
  int worker_index = -1;  // 0..workers-1 for workers
};

enum class Phase { kData, kForward, kBackwardInput, kBackwardWeight, kUpdate, kServerUpdate };
const char* phase_name(Phase p);  // "data", "forward", "backward_input", "backward_weight", "update", "server_update"

// An SGD-with-momentum update's memory traffic per byte of gradient it applies: it reads the weights, the gradient
// and the momentum and writes the weights and the momentum. Update ops carry that traffic in `bytes`.
inline constexpr double kUpdateTrafficPerGradientByte = 5.0;

struct ComputeOp {
  Phase phase = Phase::kForward;
  int layer = -1;              // index in Model::layers, -1 when not tied to a layer
  models::LayerClass layer_class = models::LayerClass::kMemory;
  double flops = 0.0;          // for this endpoint's share (batch and model-parallel slice applied)
  double bytes = 0.0;          // memory traffic, for the roofline
  int64_t samples = 0;         // samples processed by this op
  // The op's shape, for shape-aware efficiency (sim/calibration.hpp). As a GEMM (implicit for convolutions) the op
  // computes parallel_elements independent outputs (M x N), each a dot product of flops / (2 parallel_elements)
  // terms: forward M x N = output elements, backward-input = input elements, backward-weight = weights.
  int kernel_hw = 0;               // convolution: kernel height x width (0 for other layers)
  int stride = 1;                  // convolution: the larger of its strides
  double parallel_elements = 0.0;  // 0: not a GEMM-like op
  int out_h = 0, out_w = 0;        // convolution: output height and width (Winograd's tiles cover them)
  int64_t in_channels = 0, out_channels = 0;  // convolution: its channels (a Winograd workspace's size)
  // A grouped convolution (groups > 1): the fewer of its input and output channels per group (1: depthwise). Tensor
  // cores need several channels per group (sim/calibration.hpp: cuda_core_op); 0 for every other layer (an ungrouped
  // convolution with few channels, a stem's 3, pads them for the tensor cores).
  int64_t channels_per_group = 0;
  // The kernels the op launches, each paying the device's per-kernel cost: 1, or 3 for a tensor-core convolution
  // that transposes its NCHW input and output (Kernels::nchw_transposes).
  int kernels = 1;
  // The largest single tensor the op reads or writes (an activation or its gradient, the batch included, at the run's
  // element size): whether its data can stay in the device's L2 cache between one kernel and the next
  // (sim/calibration.hpp: l2_gain). 0 when not a layer op.
  double tensor_bytes = 0.0;
};

enum class CollectivePurpose { kGradients, kPsPushPull, kActivationGather, kGradientScatter, kLocalAggregation };
const char* collective_purpose_name(CollectivePurpose p);

struct CollectiveInstance {
  int schedule = -1;               // index in IterationPlan::schedules
  std::vector<int> participants;   // endpoint index playing each schedule rank
  CollectivePurpose purpose = CollectivePurpose::kGradients;
  std::string label;               // "bucket 2", "fc6 all-gather"
  std::vector<int> layers;         // layers whose data it carries
  bool on_demand = false;          // async: started by participants[0] alone, served in arrival order
  // For a push served on demand: what every server participant computes once its part of the collective has
  // completed (applying the update to its shard), before it serves the next request. phase == kServerUpdate.
  bool has_serve_compute = false;
  ComputeOp serve_compute;
};

struct Item {
  enum class Kind { kCompute, kComm } kind = Kind::kCompute;
  ComputeOp compute;               // kCompute
  int collective = -1;             // kComm: index in IterationPlan::collectives (the rank: rank_in())
  std::vector<int> deps;           // indices of earlier items of the same endpoint
};
bool operator==(const ComputeOp& a, const ComputeOp& b);
bool operator==(const Item& a, const Item& b);

struct EndpointProgram {
  std::vector<Item> items;
};

enum class SyncKind { kSync, kAsync, kMixedAsync };

// Added (issue 5): the generator call that builds a schedule (plan/collectives.hpp: make_collective(collective,
// algorithm, ranks, elements, element_bytes, {ranks_per_node, intra, inter, servers, root})). Every schedule of a
// plan has one; a plan lowered with materialize_schedules = false holds only the shell of each schedule (name,
// collective, ranks, elements, element_bytes; no programs), and the fast simulation mode times the recipe.
struct ScheduleRecipe {
  Collective collective = Collective::kAllReduce;
  Algorithm algorithm = Algorithm::kRing;
  int ranks = 0;             // make_collective's ranks (parameter servers: the workers; the schedule adds servers)
  int64_t elements = 0;
  int64_t element_bytes = 4;
  int ranks_per_node = 0;
  Algorithm intra = Algorithm::kRing, inter = Algorithm::kRing;
  int servers = 1;
  int root = 0;
  std::vector<int64_t> shard_sizes;  // parameter server: elements per shard (empty: equal parts)
};
Schedule make_schedule(const ScheduleRecipe& recipe);
// The rounds of make_schedule(recipe) (collective_rounds: symbolic where the generator registers a form).
CollectiveRounds recipe_rounds(const ScheduleRecipe& recipe);

struct LowerOptions {
  bool materialize_schedules = true;  // false: schedule shells + recipes (no O(GPUs²) steps; no GPU limit)
};

struct IterationPlan {
  SyncKind sync = SyncKind::kSync;
  int workers = 1;
  int nodes = 1;
  int64_t batch_per_worker = 0;
  int64_t global_batch = 0;
  std::vector<Endpoint> endpoints;
  std::vector<EndpointProgram> programs;   // the distinct programs, each stored once
  std::vector<int> program_of;             // per endpoint: its program's index in `programs`
  std::vector<Schedule> schedules;
  std::vector<CollectiveInstance> collectives;
  std::vector<ScheduleRecipe> recipes;  // added (issue 5): one per schedule

  bool materialized() const;  // every schedule holds its programs
  const EndpointProgram& program(int endpoint) const {
    return programs[static_cast<size_t>(program_of.at(static_cast<size_t>(endpoint)))];
  }
  // Sum of the items of every endpoint's program (shared programs counted once per endpoint).
  size_t total_items() const;

  uint64_t hash() const;  // deterministic over everything above
};

// The rank `endpoint` plays in collective c: its position among c.participants; -1 when it is not one.
int rank_in(const CollectiveInstance& c, int endpoint);
// For every endpoint, for every item of its program: the rank it plays in the item's collective (-1 for compute
// items). Linear in the plan's participants and items.
std::vector<std::vector<int>> item_ranks(const IterationPlan& plan);

// The model of a scenario, with its input and classes overrides; errors name the scenario file and its "/model"
// (Scenario::path_of: a measured run's own field).
models::Model load_scenario_model(const Scenario& scenario);
// Nodes a plan for `gpus` GPUs occupies: the workers' nodes plus one node per dedicated parameter server.
int cluster_nodes_needed(const Scenario& scenario, int devices_per_node, int gpus);
// The nodes the workers of a plan for `gpus` GPUs occupy: the scenario's gpus_per_node on each, else the cluster's
// `devices_per_node`.
int worker_nodes(const Scenario& scenario, int devices_per_node, int gpus);
// The parameter servers of the plan for `gpus` GPUs (0 without servers): the scheme's count, or with "servers":
// "per_node" one per node its workers occupy (the nodes from the scenario's gpus_per_node, else its cluster's),
// with "per_gpu" one per worker. The second form takes the cluster's devices per node, known (loaded once).
int servers_at(const Scenario& scenario, int gpus);
int servers_at(const Scenario& scenario, int devices_per_node, int gpus);
// The cluster file a scenario names; errors name the scenario file and its "/cluster".
topology::ClusterSpec load_scenario_cluster_spec(const Scenario& scenario);
// The cluster of a scenario instantiated with cluster_nodes_needed() nodes.
topology::Cluster load_scenario_cluster(const Scenario& scenario, int gpus);

// One GPU count of a scenario, ready for a backend: the scenario, its model, its cluster (with
// cluster_nodes_needed() nodes) and the plan lowered from them. The one place where a scenario becomes what the
// simulator (sim::simulate) and the executor (exec::train) run.
struct Point {
  Scenario scenario;
  int gpus = 0;
  models::Model model;
  topology::Cluster cluster;
  IterationPlan plan;
};
Point prepare(const Scenario& scenario, int gpus, const LowerOptions& options = {});

// Throws InputError when the scheme cannot be lowered for this GPU count (e.g. more GPUs than the cluster has).
IterationPlan lower(const Scenario& scenario, const models::Model& model, const topology::Cluster& cluster, int gpus);
// Added (issue 5): with options; the overload above materializes every schedule.
IterationPlan lower(const Scenario& scenario, const models::Model& model, const topology::Cluster& cluster, int gpus,
                    const LowerOptions& options);

}  // namespace scaletwin::plan
