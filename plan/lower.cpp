// plan::lower: from (scenario, model, cluster, GPU count) to the IterationPlan both backends run.
//
// Workers are placed block-wise (worker w on node w / gpus_per_node, device w % gpus_per_node). Each worker's
// program is: [data] → forward of every layer → backward in reverse (weight gradient, then input gradient) →
// gradient synchronisation per bucket (lower_sync.cpp) → optimizer update. For the hybrid scheme the classifier
// chain is model-parallel: its forward needs an all-gather of its input over all workers, its backward a
// reduce-scatter of the input gradient, and each worker computes its slice of output neurons for the global batch.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <bit>

#include "core/error.hpp"
#include "core/files.hpp"
#include "plan/lower_internal.hpp"

namespace scaletwin::plan {

namespace {

// One 64-bit word mixed into a hash (the plan's hash() and the program tree's item hash).
uint64_t mix(uint64_t h, uint64_t v) { return (h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2))) * 1099511628211ULL; }
uint64_t bits(double x) { return std::bit_cast<uint64_t>(x); }

}  // namespace

namespace detail {

int PlanBuilder::add_endpoint(Endpoint e) {
  plan_.endpoints.push_back(std::move(e));
  at_.push_back(0);
  last_compute_.push_back(-1);
  return static_cast<int>(plan_.endpoints.size()) - 1;
}

namespace {

uint64_t item_hash(int parent, const Item& it) {
  uint64_t h = mix(static_cast<uint64_t>(parent), static_cast<uint64_t>(it.kind));
  h = mix(h, static_cast<uint64_t>(it.collective + 1));
  const ComputeOp& op = it.compute;
  h = mix(mix(h, static_cast<uint64_t>(op.phase)), static_cast<uint64_t>(op.layer + 1));
  h = mix(mix(h, bits(op.flops)), bits(op.bytes));
  h = mix(mix(h, static_cast<uint64_t>(op.samples)), bits(op.parallel_elements));
  h = mix(mix(h, static_cast<uint64_t>(op.out_h)), static_cast<uint64_t>(op.out_w));
  h = mix(mix(h, static_cast<uint64_t>(op.kernels)), static_cast<uint64_t>(op.channels_per_group));
  for (int d : it.deps) h = mix(h, static_cast<uint64_t>(d));
  return h;
}

}  // namespace

int PlanBuilder::append(int e, Item item) {
  std::sort(item.deps.begin(), item.deps.end());
  item.deps.erase(std::unique(item.deps.begin(), item.deps.end()), item.deps.end());
  int& at = at_.at(static_cast<size_t>(e));
  const int first = nodes_[static_cast<size_t>(at)].first_child;
  if (first >= 0 && nodes_[static_cast<size_t>(first)].item == item) {
    at = first;
    return nodes_[static_cast<size_t>(first)].depth - 1;
  }
  auto slot = children_.try_emplace(item_hash(at, item), -1).first;
  int last = -1;  // the chain's last node
  for (int n = slot->second; n >= 0; n = nodes_[static_cast<size_t>(n)].next_same) {
    const Node& node = nodes_[static_cast<size_t>(n)];
    if (node.parent == at && node.item == item) {
      at = n;
      return node.depth - 1;
    }
    last = n;
  }
  const int n = static_cast<int>(nodes_.size());
  const int depth = nodes_[static_cast<size_t>(at)].depth + 1;
  nodes_.push_back(Node{at, depth, -1, -1, std::move(item)});
  if (nodes_[static_cast<size_t>(at)].first_child < 0) nodes_[static_cast<size_t>(at)].first_child = n;
  if (last < 0)
    slot->second = n;
  else
    nodes_[static_cast<size_t>(last)].next_same = n;
  at = n;
  return depth - 1;
}

int PlanBuilder::compute(int e, const ComputeOp& op, std::vector<int> deps) {
  if (last_compute_[static_cast<size_t>(e)] >= 0) deps.push_back(last_compute_[static_cast<size_t>(e)]);
  Item item;
  item.kind = Item::Kind::kCompute;
  item.compute = op;
  item.deps = std::move(deps);
  last_compute_[static_cast<size_t>(e)] = append(e, std::move(item));
  return last_compute_[static_cast<size_t>(e)];
}

int PlanBuilder::comm(int e, int c, int rank, std::vector<int> deps) {
  ST_ASSERT(plan_.collectives.at(static_cast<size_t>(c)).participants.at(static_cast<size_t>(rank)) == e,
            "plan: an endpoint's comm item names the rank it plays");
  Item item;
  item.kind = Item::Kind::kComm;
  item.collective = c;
  item.deps = std::move(deps);
  return append(e, std::move(item));
}

void PlanBuilder::finish() {
  std::unordered_map<int, int> program_of_node;
  plan_.programs.clear();
  plan_.program_of.clear();
  for (int node : at_) {
    auto [it, fresh] = program_of_node.try_emplace(node, static_cast<int>(plan_.programs.size()));
    plan_.program_of.push_back(it->second);
    if (!fresh) continue;
    EndpointProgram prog;
    prog.items.resize(static_cast<size_t>(nodes_[static_cast<size_t>(node)].depth));
    for (int n = node; n > 0; n = nodes_[static_cast<size_t>(n)].parent)
      prog.items[static_cast<size_t>(nodes_[static_cast<size_t>(n)].depth - 1)] = nodes_[static_cast<size_t>(n)].item;
    plan_.programs.push_back(std::move(prog));
  }
  nodes_.assign(1, Node{});
  children_.clear();
}

int PlanBuilder::collective(CollectiveInstance c) {
  plan_.collectives.push_back(std::move(c));
  return static_cast<int>(plan_.collectives.size()) - 1;
}

std::pair<int, int> Lowering::node_workers(int n) const {
  const int first = n * gpus_per_node;
  return {first, std::min(gpus, first + gpus_per_node) - first};
}

std::vector<Bucket> make_buckets(const models::Model& model, const std::vector<int>& layers_backward_order,
                                 int64_t bucket_bytes) {
  std::vector<Bucket> buckets;
  Bucket current;
  for (int l : layers_backward_order) {
    const auto& layer = model.layers.at(static_cast<size_t>(l));
    current.layers.push_back(l);
    current.elements += layer.params;
    if (current.elements * 4 >= bucket_bytes) {
      buckets.push_back(std::move(current));
      current = Bucket{};
    }
  }
  if (!current.layers.empty()) buckets.push_back(std::move(current));
  return buckets;
}

// The GEMM view of a convolution or fully connected op (iteration_plan.hpp, ComputeOp): the reduction length of
// each output per phase — forward: input channels per group x kernel (FC: input features); backward-input:
// output channels per group x kernel (FC: output features); backward-weight: samples x output positions.
static void set_op_shape(ComputeOp& op, const models::Model& model, const models::Layer& L, double samples, double fraction) {
  using models::LayerKind;
  if ((L.kind != LayerKind::kConv && L.kind != LayerKind::kFullyConnected) || op.flops <= 0.0 || L.inputs.empty()) return;
  const models::Shape& in = model.layers.at(static_cast<size_t>(L.inputs.front())).out;
  double reduction = 0.0;
  if (L.kind == LayerKind::kConv) {
    op.kernel_hw = static_cast<int>(L.conv.kernel_h * L.conv.kernel_w);
    op.stride = static_cast<int>(std::max(L.conv.stride_h, L.conv.stride_w));
    op.out_h = static_cast<int>(L.out.h);
    op.out_w = static_cast<int>(L.out.w);
    op.in_channels = in.c;
    op.out_channels = L.out.c;
    const int64_t g = std::max<int64_t>(L.conv.groups, 1);
    if (g > 1) op.channels_per_group = std::min(in.c, L.out.c) / g;
    const double groups = static_cast<double>(g);
    switch (op.phase) {
      case Phase::kForward: reduction = static_cast<double>(in.c) / groups * op.kernel_hw; break;
      case Phase::kBackwardInput: reduction = static_cast<double>(L.out.c) / groups * op.kernel_hw; break;
      default: reduction = samples * static_cast<double>(L.out.h * L.out.w); break;
    }
  } else {
    switch (op.phase) {
      case Phase::kForward: reduction = static_cast<double>(in.elements()); break;
      case Phase::kBackwardInput: reduction = static_cast<double>(L.out.elements()) * fraction; break;
      default: reduction = samples; break;
    }
  }
  if (reduction > 0.0) op.parallel_elements = op.flops / (2.0 * reduction);
}

ComputeOp layer_op(const models::Model& model, int layer, Phase phase, double samples, double fraction,
                   int element_bytes) {
  const auto& L = model.layers.at(static_cast<size_t>(layer));
  double in_bytes = 0.0;
  for (int i : L.inputs) in_bytes += static_cast<double>(model.layers.at(static_cast<size_t>(i)).activation_bytes);
  const double out_bytes = static_cast<double>(L.activation_bytes) * fraction;
  const double weight_bytes = static_cast<double>(L.weight_bytes) * fraction;
  ComputeOp op;
  op.phase = phase;
  op.layer = layer;
  op.layer_class = L.layer_class();
  op.samples = static_cast<int64_t>(samples);
  switch (phase) {
    case Phase::kForward: op.flops = L.fwd_flops; break;
    case Phase::kBackwardInput: op.flops = L.bwd_input_flops; break;
    case Phase::kBackwardWeight: op.flops = L.bwd_weight_flops; break;
    default: ST_ASSERT(false, "layer_op takes forward or backward phases");
  }
  op.flops *= samples * fraction;
  set_op_shape(op, model, L, samples, fraction);
  // Memory traffic: activations in and out per sample (the gradient of the output for backward), plus weights.
  op.bytes = (in_bytes + out_bytes) * samples + weight_bytes;
  // Batch norm in training reads its input twice: once for the batch's statistics, once to normalise (forward:
  // x, x, y); backward, cuDNN's kernel reduces dy and x into dgamma, dbeta (the backward-weight op: x, dy) and then
  // reads both again to write dx (backward-input: x, dy, dx). Eight passes over the activation in all.
  if (L.kind == models::LayerKind::kBatchNorm && phase != Phase::kBackwardWeight) op.bytes += in_bytes * samples;
  op.bytes *= static_cast<double>(element_bytes) / 4.0;  // the sizes above are fp32's
  double largest = static_cast<double>(L.activation_bytes) * fraction;
  for (int i : L.inputs)
    largest = std::max(largest, static_cast<double>(model.layers.at(static_cast<size_t>(i)).activation_bytes));
  op.tensor_bytes = largest * samples * static_cast<double>(element_bytes) / 4.0;
  return op;
}

ComputeOp update_op(double params, Phase phase, int element_bytes) {
  // SGD with momentum and weight decay: about 4 FLOPs per parameter, reading weights, gradients and momentum and
  // writing weights and momentum (5 fp32 streams).
  ComputeOp op;
  op.phase = phase;
  op.layer_class = models::LayerClass::kMemory;
  op.flops = 4.0 * params;
  op.bytes = kUpdateTrafficPerGradientByte * 4.0 * params;
  if (element_bytes < 4) op.bytes += (4.0 + element_bytes) * params;  // the half copy of the weights, from the master
  return op;
}

std::vector<int> model_parallel_layers(const Scenario& scenario, const models::Model& model) {
  using models::LayerKind;
  if (scenario.scheme.kind != SchemeKind::kHybrid) return {};
  std::vector<int> out;
  const std::string path = scenario.path_of("/scheme/model_parallel");
  if (scenario.scheme.model_parallel_fc) {
    for (size_t i = 0; i < model.layers.size(); ++i)
      if (model.layers[i].kind == LayerKind::kFullyConnected) out.push_back(static_cast<int>(i));
    if (out.empty())
      throw InputError(scenario.file, path, fmt::format("a model with fully connected layers ({} has none)", model.name));
  } else {
    for (size_t i = 0; i < scenario.scheme.model_parallel_layers.size(); ++i) {
      const std::string& name = scenario.scheme.model_parallel_layers[i];
      const int l = model.index_of(name);
      if (l < 0 || model.layers[static_cast<size_t>(l)].kind != LayerKind::kFullyConnected)
        throw InputError(scenario.file, fmt::format("{}/{}", path, i),
                         fmt::format("the name of a fully connected layer of {} (got \"{}\")", model.name, name));
      out.push_back(l);
    }
    std::sort(out.begin(), out.end());
  }
  // Every layer from the first model-parallel one on must be part of the classifier chain, and every fc layer in
  // it must be model-parallel: activations are sliced by neurons there and nothing else could consume them.
  for (size_t i = static_cast<size_t>(out.front()); i < model.layers.size(); ++i) {
    const auto& layer = model.layers[i];
    const bool chain = layer.inputs.size() == 1 && layer.inputs[0] == static_cast<int>(i) - 1;
    const bool fc = layer.kind == LayerKind::kFullyConnected;
    const bool ok_kind = fc || layer.kind == LayerKind::kRelu || layer.kind == LayerKind::kDropout ||
                         layer.kind == LayerKind::kFlatten || layer.kind == LayerKind::kSoftmaxCrossEntropy;
    const bool listed = std::find(out.begin(), out.end(), static_cast<int>(i)) != out.end();
    if (!chain || !ok_kind || (fc && !listed))
      throw InputError(scenario.file, path,
                       fmt::format("model-parallel layers that form the classifier chain up to the loss (layer "
                                   "\"{}\" follows them but is not fc/relu/dropout/flatten or is not listed)",
                                   layer.name));
  }
  return out;
}

}  // namespace detail

const char* phase_name(Phase p) {
  switch (p) {
    case Phase::kData: return "data";
    case Phase::kForward: return "forward";
    case Phase::kBackwardInput: return "backward_input";
    case Phase::kBackwardWeight: return "backward_weight";
    case Phase::kUpdate: return "update";
    case Phase::kServerUpdate: return "server_update";
  }
  return "?";
}

const char* collective_purpose_name(CollectivePurpose p) {
  switch (p) {
    case CollectivePurpose::kGradients: return "gradients";
    case CollectivePurpose::kPsPushPull: return "ps_push_pull";
    case CollectivePurpose::kActivationGather: return "activation_gather";
    case CollectivePurpose::kGradientScatter: return "gradient_scatter";
    case CollectivePurpose::kLocalAggregation: return "local_aggregation";
  }
  return "?";
}

bool operator==(const ComputeOp& a, const ComputeOp& b) {
  return a.phase == b.phase && a.layer == b.layer && a.layer_class == b.layer_class && a.flops == b.flops &&
         a.bytes == b.bytes && a.samples == b.samples && a.kernel_hw == b.kernel_hw && a.stride == b.stride &&
         a.parallel_elements == b.parallel_elements && a.out_h == b.out_h && a.out_w == b.out_w &&
         a.in_channels == b.in_channels && a.out_channels == b.out_channels &&
         a.channels_per_group == b.channels_per_group && a.kernels == b.kernels && a.tensor_bytes == b.tensor_bytes;
}

bool operator==(const Item& a, const Item& b) {
  return a.kind == b.kind && a.collective == b.collective && a.deps == b.deps &&
         (a.kind != Item::Kind::kCompute || a.compute == b.compute);
}

size_t IterationPlan::total_items() const {
  size_t n = 0;
  for (int p : program_of) n += programs.at(static_cast<size_t>(p)).items.size();
  return n;
}

int rank_in(const CollectiveInstance& c, int endpoint) {
  const auto it = std::find(c.participants.begin(), c.participants.end(), endpoint);
  return it == c.participants.end() ? -1 : static_cast<int>(it - c.participants.begin());
}

std::vector<std::vector<int>> item_ranks(const IterationPlan& plan) {
  std::vector<std::vector<std::pair<int, int>>> of_endpoint(plan.endpoints.size());  // endpoint → (collective, rank)
  for (size_t c = 0; c < plan.collectives.size(); ++c) {
    const auto& participants = plan.collectives[c].participants;
    for (size_t r = 0; r < participants.size(); ++r)
      of_endpoint.at(static_cast<size_t>(participants[r])).push_back({static_cast<int>(c), static_cast<int>(r)});
  }
  std::vector<std::vector<int>> out(plan.endpoints.size());
  for (size_t e = 0; e < plan.endpoints.size(); ++e) {
    auto& pairs = of_endpoint[e];
    std::sort(pairs.begin(), pairs.end());
    for (const Item& it : plan.program(static_cast<int>(e)).items) {
      int rank = -1;
      if (it.kind == Item::Kind::kComm) {
        const auto found = std::lower_bound(pairs.begin(), pairs.end(), std::make_pair(it.collective, -1));
        ST_ASSERT(found != pairs.end() && found->first == it.collective,
                  "plan: endpoint " + plan.endpoints[e].name + " has an item of a collective it is not part of");
        rank = found->second;
      }
      out[e].push_back(rank);
    }
  }
  return out;
}

uint64_t IterationPlan::hash() const {
  // Numbers are mixed in as 64-bit words (no formatting): a plan of thousands of ranks has millions of items and
  // schedule steps, and a formatted hash took seconds at 4,096 GPUs. Strings (names) go through FNV-1a.
  uint64_t h = 1469598103934665603ULL;
  auto word = [&h](uint64_t v) { h = mix(h, v); };
  auto num = [&word](double x) { word(bits(x)); };
  auto ints = [&word](const std::vector<int>& v) {
    word(v.size());
    for (int x : v) word(static_cast<uint64_t>(static_cast<int64_t>(x)));
  };
  auto i64 = [&word](int64_t x) { word(static_cast<uint64_t>(x)); };
  i64(static_cast<int>(sync)); i64(workers); i64(nodes); i64(batch_per_worker); i64(global_batch);
  for (const auto& e : endpoints) {
    i64(static_cast<int>(e.kind)); word(fnv1a64(e.name)); i64(e.node); i64(e.device); i64(e.worker_index);
  }
  for (const auto& p : programs) {
    word(0x50);  // 'P'
    for (const auto& it : p.items) {
      i64(static_cast<int>(it.kind)); i64(static_cast<int>(it.compute.phase)); i64(it.compute.layer);
      i64(static_cast<int>(it.compute.layer_class)); num(it.compute.flops); num(it.compute.bytes);
      i64(it.compute.samples); i64(it.compute.kernels); i64(it.compute.channels_per_group);
      i64(it.collective); ints(it.deps);
    }
  }
  ints(program_of);
  for (const auto& c : collectives) {
    i64(c.schedule); i64(static_cast<int>(c.purpose)); i64(c.on_demand); i64(c.has_serve_compute);
    num(c.serve_compute.flops); ints(c.participants);
  }
  for (size_t i = 0; i < schedules.size(); ++i) {
    const Schedule& sc = schedules[i];
    i64(sc.ranks); i64(sc.elements); i64(sc.element_bytes); i64(sc.channels);
    if (static_cast<int>(sc.programs.size()) != sc.ranks && i < recipes.size()) {  // a shell: its recipe
      const ScheduleRecipe& r = recipes[i];
      i64(static_cast<int>(r.collective));
      word(fnv1a64(algorithm_name(r.algorithm)));
      i64(r.ranks);
      i64(r.elements);
      i64(r.element_bytes);
      i64(r.ranks_per_node);
      word(fnv1a64(algorithm_name(r.intra)));
      word(fnv1a64(algorithm_name(r.inter)));
      i64(r.servers); i64(r.root);
      for (const int64_t size : r.shard_sizes) i64(size);
    }
    for (const auto& prog : sc.programs)
      for (const auto& st : prog.steps) {
        i64(static_cast<int>(st.op)); i64(st.peer); i64(st.channel); i64(st.offset); i64(st.length);
        i64(st.src_offset); ints(st.deps);
      }
  }
  return h;
}

}  // namespace scaletwin::plan
