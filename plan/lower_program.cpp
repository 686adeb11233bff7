// plan::lower itself: placement of workers and servers, the per-worker compute program (with the hybrid scheme's
// model-parallel classifier and its all-gather / reduce-scatter), then the gradient synchronisation of the scheme
// (lower_sync.cpp) and the optimizer update.
#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"
#include "plan/lower_internal.hpp"

namespace scaletwin::plan {

using detail::Lowering;
using detail::PlanBuilder;

namespace {

bool needs_input_gradient(const models::Model& model, int layer) {
  for (int i : model.layers.at(static_cast<size_t>(layer)).inputs)
    if (model.layers.at(static_cast<size_t>(i)).kind != models::LayerKind::kInput) return true;
  return false;
}

void place_endpoints(Lowering& l, const topology::Cluster& cluster) {
  const Scenario& s = l.scenario;
  for (int w = 0; w < l.gpus; ++w) {
    Endpoint e;
    e.kind = EndpointKind::kWorker;
    e.name = fmt::format("w{}", w);
    e.node = w / l.gpus_per_node;
    e.device = w % l.gpus_per_node;
    e.worker_index = w;
    l.worker_endpoints.push_back(l.builder.add_endpoint(e));
  }
  if (s.scheme.kind == SchemeKind::kAllReduce ||
      (s.scheme.kind == SchemeKind::kHybrid && s.scheme.data_parallel == SchemeKind::kAllReduce))
    return;
  const PsScheme& ps = s.scheme.ps;
  const int servers = ps.count(l.worker_nodes, l.gpus);
  for (int k = 0; k < servers; ++k) {
    Endpoint e;
    e.kind = EndpointKind::kServer;
    e.name = fmt::format("ps{}", k);
    switch (ps.placement) {
      case PsPlacement::kHostCpu:
      case PsPlacement::kColocated:
        e.node = k % l.worker_nodes;
        break;
      case PsPlacement::kDevice:
        e.node = (k % l.gpus) / l.gpus_per_node;
        e.device = (k % l.gpus) % l.gpus_per_node;
        break;
      case PsPlacement::kDedicated:
        e.node = l.worker_nodes + k;
        break;
    }
    if (e.node >= cluster.nodes())
      throw InputError(s.file, s.path_of("/scheme/servers"),
                       fmt::format("dedicated servers that fit the cluster ({} worker nodes + {} server nodes > {})",
                                   l.worker_nodes, servers, cluster.nodes()));
    l.server_endpoints.push_back(l.builder.add_endpoint(e));
  }
}

// The model-parallel classifier of worker w for the global batch: forward (after the backbone), returns the item
// after which the backward of the backbone may start. `collectives` caches one collective per layer and direction.
struct ModelParallel {
  std::vector<int> layers;                // model-parallel fc layers
  int first = -1;                         // first layer of the chain
  std::map<std::pair<int, int>, int> collective;  // (layer, 0 forward gather / 1 backward scatter) → collective
};

double slice_fraction(int64_t out, int workers, int w) {
  const int64_t n = part_offset(out, workers, w + 1) - part_offset(out, workers, w);
  return static_cast<double>(n) / static_cast<double>(out);
}

int mp_collective(Lowering& l, ModelParallel& mp, int layer, bool backward) {
  auto key = std::make_pair(layer, backward ? 1 : 0);
  auto it = mp.collective.find(key);
  if (it != mp.collective.end()) return it->second;
  const auto& L = l.model.layers.at(static_cast<size_t>(layer));
  const int64_t in = l.model.layers.at(static_cast<size_t>(L.inputs.at(0))).out.elements();
  const int64_t elements = in * l.batch() * l.gpus;
  const std::string key_s = fmt::format("{}/{}/{}", backward ? "reduce_scatter" : "allgather", l.gpus, elements);
  const int sched = l.builder.schedule(key_s, [&] {
    return backward ? detail::reduce_scatter_schedule(l.gpus, elements) : detail::allgather_schedule(l.gpus, elements);
  });
  CollectiveInstance c;
  c.schedule = sched;
  c.participants = l.worker_endpoints;
  c.purpose = backward ? CollectivePurpose::kGradientScatter : CollectivePurpose::kActivationGather;
  c.label = fmt::format("{} {}", L.name, backward ? "reduce-scatter" : "all-gather");
  c.layers = {layer};
  const int index = l.builder.collective(std::move(c));
  mp.collective.emplace(key, index);
  return index;
}

// detail::kernel_op(l, layer, phase, batch) for a layer of the data-parallel backbone, computed once per lowering.
const std::optional<ComputeOp>& backbone_op(Lowering& l, int layer, Phase phase) {
  const int slot = phase == Phase::kForward ? 0 : phase == Phase::kBackwardWeight ? 1 : 2;
  ST_ASSERT(slot < 2 || phase == Phase::kBackwardInput, "backbone_op takes forward or backward phases");
  if (l.backbone_ops.empty()) l.backbone_ops.resize(3 * l.model.layers.size());
  Lowering::KnownOp& k = l.backbone_ops[static_cast<size_t>(3 * layer + slot)];
  if (!k.known) {
    k.op = detail::kernel_op(l, layer, phase, static_cast<double>(l.batch()));
    k.known = true;
  }
  return k.op;
}

void build_worker_program(Lowering& l, ModelParallel& mp, int w) {
  using models::LayerKind;
  PlanBuilder& b = l.builder;
  const int e = l.worker_endpoints[static_cast<size_t>(w)];
  const auto& model = l.model;
  const int n_layers = static_cast<int>(model.layers.size());
  const int backbone_end = mp.first >= 0 ? mp.first : n_layers;
  const double batch = static_cast<double>(l.batch());
  const double global = batch * l.gpus;
  const bool split = mp.first >= 0 && l.gpus > 1;
  auto& ready = l.grad_ready_item[static_cast<size_t>(w)];

  if (l.scenario.training.data == Data::kReal && !l.scenario.kernels.prefetch_input) {
    ComputeOp data;
    data.phase = Phase::kData;
    data.samples = l.batch();
    data.bytes = batch * static_cast<double>(model.input.elements()) * 4.0;
    b.compute(e, data);
  }
  for (int i = 1; i < backbone_end; ++i)
    if (const auto& op = backbone_op(l, i, Phase::kForward)) b.compute(e, *op);

  // Model-parallel classifier: each worker computes its slice of neurons for the global batch. An fc layer first
  // gathers its whole input from every worker; the loss gathers whole rows of logits and takes its own samples.
  std::vector<double> fraction(static_cast<size_t>(n_layers), 1.0);
  std::vector<double> samples(static_cast<size_t>(n_layers), batch);
  for (int i = backbone_end; i < n_layers; ++i) {
    const auto& L = model.layers[static_cast<size_t>(i)];
    const size_t u = static_cast<size_t>(i);
    const bool gathers = split && (L.kind == LayerKind::kFullyConnected || L.kind == LayerKind::kSoftmaxCrossEntropy);
    if (split && L.kind != LayerKind::kSoftmaxCrossEntropy) samples[u] = global;
    if (split && L.kind == LayerKind::kFullyConnected) fraction[u] = slice_fraction(L.out.c, l.gpus, w);
    if (split && L.kind != LayerKind::kFullyConnected && L.kind != LayerKind::kSoftmaxCrossEntropy)
      fraction[u] = fraction[u - 1];
    std::vector<int> deps;
    if (gathers) deps.push_back(b.comm(e, mp_collective(l, mp, i, false), w, {b.last_compute(e)}));
    if (auto op = detail::kernel_op(l, i, Phase::kForward, samples[u], fraction[u])) b.compute(e, *op, deps);
  }
  // Its backward, last layer first: an fc layer's partial input gradients are summed by a reduce-scatter that
  // leaves each worker the slice its predecessor needs.
  int pending_scatter = -1;
  for (int i = n_layers - 1; i >= backbone_end; --i) {
    const auto& L = model.layers[static_cast<size_t>(i)];
    const size_t u = static_cast<size_t>(i);
    std::vector<int> deps;
    if (pending_scatter >= 0) deps.push_back(pending_scatter);
    bool emitted = false;
    if (L.has_weights()) {
      ready[u] = b.compute(e, *detail::kernel_op(l, i, Phase::kBackwardWeight, samples[u], fraction[u]), deps);
      emitted = true;
    }
    if (auto op = detail::kernel_op(l, i, Phase::kBackwardInput, samples[u], fraction[u])) {
      b.compute(e, *op, deps);
      emitted = true;
    }
    if (emitted) pending_scatter = -1;  // else the next layer's ops wait for it (a flatten has no kernel)
    if (split && L.kind == LayerKind::kFullyConnected)
      pending_scatter = b.comm(e, mp_collective(l, mp, i, true), w, {b.last_compute(e)});
  }
  // Backward of the backbone.
  // A pending reduce-scatter holds back the first op emitted after it (a layer without a kernel passes it on).
  for (int i = backbone_end - 1; i >= 1; --i) {
    std::vector<int> deps;
    if (pending_scatter >= 0) deps.push_back(pending_scatter);
    bool emitted = false;
    if (model.layers[static_cast<size_t>(i)].has_weights()) {
      ready[static_cast<size_t>(i)] = b.compute(e, *backbone_op(l, i, Phase::kBackwardWeight), deps);
      emitted = true;
    }
    if (needs_input_gradient(model, i))
      if (const auto& op = backbone_op(l, i, Phase::kBackwardInput)) {
        b.compute(e, *op, deps);
        emitted = true;
      }
    if (emitted) pending_scatter = -1;
  }
  l.backward_end_item[static_cast<size_t>(w)] = b.last_compute(e);
}

}  // namespace

IterationPlan lower(const Scenario& scenario, const models::Model& model, const topology::Cluster& cluster, int gpus) {
  return lower(scenario, model, cluster, gpus, LowerOptions{});
}

Point prepare(const Scenario& scenario, int gpus, const LowerOptions& options) {
  Point point{scenario, gpus, load_scenario_model(scenario), load_scenario_cluster(scenario, gpus), IterationPlan{}};
  point.plan = lower(scenario, point.model, point.cluster, gpus, options);
  return point;
}

IterationPlan lower(const Scenario& scenario, const models::Model& model, const topology::Cluster& cluster, int gpus,
                    const LowerOptions& options) {
  const int per_node = scenario.gpus_per_node > 0 ? scenario.gpus_per_node : cluster.devices_per_node();
  if (per_node > cluster.devices_per_node())
    throw InputError(scenario.file, scenario.path_of("/gpus_per_node"),
                     fmt::format("at most the {} devices of a {} node", cluster.devices_per_node(), cluster.spec().name));
  const int64_t most_gpus = int64_t{scenario.nodes} * per_node;
  if (gpus < 1 || gpus > most_gpus)
    throw InputError(scenario.file, scenario.gpus_path(),
                     fmt::format("GPU counts from 1 to nodes × gpus_per_node = {} (got {})", most_gpus, gpus));
  // A plan holds every rank's schedule steps, O(GPUs²) for the flat all-reduces: 2048 GPUs take a minute and 2 GB
  // to lower, so a count far above that is refused here rather than left to run for hours and exhaust memory.
  // Without materialized schedules (the fast simulation mode) the plan is O(GPUs): no limit but the cluster's.
  constexpr int kMaxPlanGpus = 4096;
  if (options.materialize_schedules && gpus > kMaxPlanGpus)
    throw InputError(scenario.file, scenario.gpus_path(),
                     fmt::format("at most {} GPUs in one plan (got {}): the plan grows with the square of the GPU count",
                                 kMaxPlanGpus, gpus));
  IterationPlan plan;
  PlanBuilder builder(plan, options.materialize_schedules);
  Lowering l(scenario, model, builder);
  l.gpus = gpus;
  l.gpus_per_node = std::min(per_node, gpus);
  l.worker_nodes = worker_nodes(scenario, cluster.devices_per_node(), gpus);
  if (l.worker_nodes > cluster.nodes())
    throw InputError(scenario.file, scenario.path_of("/nodes"),
                     fmt::format("at most {} nodes for this cluster", cluster.nodes()));
  const bool hierarchical = scenario.scheme.data_parallel == SchemeKind::kAllReduce &&
                            scenario.scheme.allreduce.algorithm == Algorithm::kHierarchical;
  if (hierarchical && gpus > l.gpus_per_node && gpus % l.gpus_per_node != 0)
    throw InputError(scenario.file, scenario.gpus_path(),
                     fmt::format("whole nodes of {} GPUs for the hierarchical all-reduce (got {} GPUs)",
                                 l.gpus_per_node, gpus));
  place_endpoints(l, cluster);

  ModelParallel mp;
  mp.layers = detail::model_parallel_layers(scenario, model);
  if (!mp.layers.empty()) mp.first = mp.layers.front();
  for (int i = static_cast<int>(model.layers.size()) - 1; i >= 1; --i)
    if (model.layers[static_cast<size_t>(i)].has_weights() &&
        std::find(mp.layers.begin(), mp.layers.end(), i) == mp.layers.end())
      l.data_parallel_layers.push_back(i);
  l.grad_ready_item.assign(static_cast<size_t>(gpus), std::vector<int>(model.layers.size(), -1));
  l.backward_end_item.assign(static_cast<size_t>(gpus), -1);
  for (int w = 0; w < gpus; ++w) build_worker_program(l, mp, w);

  const bool ps = scenario.scheme.data_parallel == SchemeKind::kPs;
  const detail::SyncResult sync = ps ? detail::lower_ps(l) : detail::lower_allreduce(l);
  double replicated = 0.0;
  for (int i : l.data_parallel_layers) replicated += static_cast<double>(model.layers[static_cast<size_t>(i)].params);
  for (int w = 0; w < gpus; ++w) {
    double own = sync.worker_updates_replicated ? replicated : 0.0;
    for (int i : mp.layers)
      own += static_cast<double>(model.layers[static_cast<size_t>(i)].params) *
             (gpus > 1 ? slice_fraction(model.layers[static_cast<size_t>(i)].out.c, gpus, w) : 1.0);
    if (own > 0.0)
      builder.compute(l.worker_endpoints[static_cast<size_t>(w)], detail::update_op(own, Phase::kUpdate, l.element_bytes()),
                      sync.update_deps[static_cast<size_t>(w)]);
  }

  plan.sync = !ps || scenario.scheme.ps.mode == PsMode::kSync ? SyncKind::kSync
              : scenario.scheme.ps.mode == PsMode::kAsync     ? SyncKind::kAsync
                                                              : SyncKind::kMixedAsync;
  plan.workers = gpus;
  plan.batch_per_worker = scenario.batch_per_gpu;
  plan.global_batch = scenario.batch_per_gpu * gpus;
  int max_node = 0;
  for (const auto& e : plan.endpoints) max_node = std::max(max_node, e.node);
  plan.nodes = max_node + 1;
  builder.finish();
  return plan;
}

}  // namespace scaletwin::plan
