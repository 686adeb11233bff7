// Internal to plan/lower*.cpp: the pieces lower() is made of. Not part of the public API.
//
// PlanBuilder holds the plan under construction: it appends items to each endpoint's program (compute items form a
// chain, one compute stream per endpoint; communication items depend on what the caller names), deduplicates
// identical schedules, and stores identical programs once. Programs grow in a prefix tree (hash-consed): an
// endpoint's program is a node, appending an item moves it to the child for that item, created only when no
// endpoint appended that item there before; finish() writes each distinct node reached as one program. The
// data-parallel workers of 65,536 GPUs thus hold one program, not 65,536 copies.
#pragma once

#include <map>
#include <string>
#include <unordered_map>
#include <tuple>
#include <optional>
#include <vector>

#include "plan/iteration_plan.hpp"

namespace scaletwin::plan::detail {

class PlanBuilder {
 public:
  explicit PlanBuilder(IterationPlan& plan, bool materialize = true) : plan_(plan), materialize_(materialize) {}

  int add_endpoint(Endpoint e);
  // Appends a compute item to endpoint e after its previous compute item and after `deps`; returns its index.
  int compute(int e, const ComputeOp& op, std::vector<int> deps = {});
  // Appends endpoint e's part of collective c after `deps` (e must play `rank` of c); returns its index.
  int comm(int e, int c, int rank, std::vector<int> deps = {});
  // Writes the distinct programs and program_of into the plan; call once, after the last item.
  void finish();
  // Registers a schedule under `key` (make() gives its recipe, called only the first time the key is seen; the
  // schedule is generated from it, or only its shell when not materializing); returns its index.
  template <typename Make>
  int schedule(const std::string& key, Make make) {
    auto it = schedule_index_.find(key);
    if (it != schedule_index_.end()) return it->second;
    plan_.recipes.push_back(make());
    plan_.schedules.push_back(materialize_ ? make_schedule(plan_.recipes.back()) : schedule_shell(plan_.recipes.back()));
    const int index = static_cast<int>(plan_.schedules.size()) - 1;
    schedule_index_.emplace(key, index);
    return index;
  }
  // Adds a collective over `participants` (endpoint per schedule rank). The caller adds the comm items.
  int collective(CollectiveInstance c);
  int last_compute(int e) const { return last_compute_.at(static_cast<size_t>(e)); }
  IterationPlan& plan() { return plan_; }

 private:
  struct Node {
    int parent = -1;
    int depth = 0;        // items from the root: the index of `item` + 1
    int next_same = -1;   // the next node whose (parent, item) hashes alike
    int first_child = -1; // the first child created: the one every twin follows, checked before hashing
    Item item;
  };
  int append(int e, Item item);  // deps sorted and made unique; returns the item's index in e's program
  static Schedule schedule_shell(const ScheduleRecipe& recipe);
  IterationPlan& plan_;
  bool materialize_ = true;
  std::vector<Node> nodes_{Node{}};              // node 0: the empty program
  std::unordered_map<uint64_t, int> children_;   // hash of (parent, item) → first node of that hash
  std::vector<int> at_;                          // per endpoint: its program's node
  std::vector<int> last_compute_;
  std::map<std::string, int> schedule_index_;
};

// A gradient bucket: consecutive layers with weights, in the order their gradients become ready (backward).
struct Bucket {
  std::vector<int> layers;
  int64_t elements = 0;
};
std::vector<Bucket> make_buckets(const models::Model& model, const std::vector<int>& layers_backward_order,
                                 int64_t bucket_bytes);

// The recipes of the schedules lower() needs, for the generators of plan/collectives.hpp (lower_schedules.cpp).
ScheduleRecipe allreduce_schedule(const AllReduceScheme& scheme, int ranks, int ranks_per_node, int64_t elements);
ScheduleRecipe reduce_schedule(int ranks, int64_t elements);     // to rank 0
ScheduleRecipe broadcast_schedule(int ranks, int64_t elements);  // from rank 0
// Ranks 0..workers-1 are workers, workers..workers+servers-1 the shards; each shard owns an equal slice.
// shard_sizes: elements per server (empty: equal parts; plan::TensorPlacement decides, lower_sync.cpp)
ScheduleRecipe push_schedule(int workers, int servers, int64_t elements, const std::vector<int64_t>& shard_sizes);
ScheduleRecipe pull_schedule(int workers, int servers, int64_t elements, const std::vector<int64_t>& shard_sizes);
ScheduleRecipe allgather_schedule(int ranks, int64_t elements);       // rank r contributes part r
ScheduleRecipe reduce_scatter_schedule(int ranks, int64_t elements);  // rank r ends with part r reduced

}  // namespace scaletwin::plan::detail

namespace scaletwin::plan::detail {

// Everything the scheme lowerings share: the inputs, the placement, the per-worker compute items built so far.
// Which layers have kernels of their own on the scenario's stack (Scenario::kernels), and what their traffic gains,
// per layer of the model.
struct KernelPlan {
  std::vector<bool> fused;              // a ReLU or residual add run inside a batch norm's kernels: no op of its own
  std::vector<double> fused_in_bytes;   // per sample, fp32: what a batch norm reads beside its input (the add's other
                                        // input, when it runs the residual sum)
  std::vector<int> consumers;           // layers reading each layer's output
};
KernelPlan plan_kernels(const Kernels& kernels, const models::Model& model);

struct Lowering {
  Lowering(const Scenario& s, const models::Model& m, PlanBuilder& b)
      : scenario(s), model(m), builder(b), kernels(plan_kernels(s.kernels, m)) {}
  const Scenario& scenario;
  const models::Model& model;
  PlanBuilder& builder;
  int gpus = 1;
  int gpus_per_node = 1;
  int worker_nodes = 1;
  std::vector<int> worker_endpoints;              // endpoint of worker w
  std::vector<int> server_endpoints;              // endpoint of shard s
  std::vector<int> data_parallel_layers;          // layers with weights replicated on every worker, backward order
  std::vector<std::vector<int>> grad_ready_item;  // [worker][layer] item after which the layer's gradient is ready
  std::vector<int> backward_end_item;             // [worker] last backward compute item
  KernelPlan kernels;
  // kernel_op of each layer in forward, backward-weight and backward-input at the worker's own batch, whole layers:
  // the same for every worker of a data-parallel backbone, so computed once per lowering ([layer * 3 + phase]).
  struct KnownOp {
    bool known = false;
    std::optional<ComputeOp> op;
  };
  std::vector<KnownOp> backbone_ops;

  int64_t batch() const { return scenario.batch_per_gpu; }
  int workers() const { return gpus; }
  // Bytes of one activation value in the run's precision (plan::activation_element_bytes).
  int element_bytes() const { return activation_element_bytes(scenario.training.precision); }
  // Workers on node n: [first, first + count).
  std::pair<int, int> node_workers(int n) const;
};

// One layer in one phase: its FLOPs, memory traffic and GEMM shape. element_bytes: 4 for fp32/tf32 runs, 2 under
// mixed precision, where activations and the weights' half copy the convolutions read move at 2 bytes a value.
ComputeOp layer_op(const models::Model& model, int layer, Phase phase, double samples, double fraction = 1.0,
                   int element_bytes = 4);
// The op of a layer's kernels in one phase as the scenario's stack runs them (layer_op, then: none for a layer fused
// into a batch norm or whose gradient is its output's, a residual add's or a flatten's; a batch norm reading a fused
// add's other input; the transposes of tensor-core convolutions on NCHW activations; the sum of the gradients of a
// layer read by several). nullopt: no kernel.
std::optional<ComputeOp> kernel_op(const Lowering& l, int layer, Phase phase, double samples, double fraction = 1.0);
// The optimizer step over `params` fp32 master weights; under mixed precision (element_bytes 2) it also writes their
// half copy (a 4-byte read and a 2-byte write per weight).
ComputeOp update_op(double params, Phase phase, int element_bytes = 4);

// Gradient synchronisation of the data-parallel layers. Each returns, per worker, the items the worker's own
// optimizer update must wait for, and whether the worker updates the data-parallel weights itself (all-reduce:
// yes; parameter server: no, the servers do and the workers pull the new weights).
struct SyncResult {
  std::vector<std::vector<int>> update_deps;
  bool worker_updates_replicated = true;
};
SyncResult lower_allreduce(Lowering& l);
SyncResult lower_ps(Lowering& l);

// The layers the hybrid scheme splits by output neurons, in forward order; checked to form the classifier chain
// (every layer from the first of them to the loss is fc, relu, dropout, flatten or the loss). Empty unless hybrid.
std::vector<int> model_parallel_layers(const Scenario& scenario, const models::Model& model);

}  // namespace scaletwin::plan::detail
