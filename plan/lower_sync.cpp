// Gradient synchronisation of the data-parallel layers, per bucket, for each scheme of the spec:
//   allreduce  one all-reduce per bucket over all workers (hierarchical: ranks grouped by node)
//   ps sync    push (workers → shards, reduced) → server update → pull (shards → workers), per bucket
//   ps + local_aggregation: reduce inside each node to its first worker, push/pull by those leaders,
//              broadcast inside each node
//   ps async   each worker pushes and pulls on its own (on-demand collectives with the servers)
//   ps mixed_async: synchronous inside a node (reduce, broadcast), asynchronous between nodes (leaders on demand)
// Buckets: consecutive layers in backward order until bucket_bytes is reached (PyTorch DDP's rule); each
// bucket's communication depends on the weight gradient of its last layer, or on the end of the backward pass
// when overlap is off.
#include <fmt/format.h>

#include "core/error.hpp"
#include "plan/lower_internal.hpp"

namespace scaletwin::plan::detail {

namespace {

// The item after which bucket k's gradients are ready on worker w.
int bucket_ready(const Lowering& l, const Bucket& bucket, int w) {
  const bool overlap = l.scenario.scheme.data_parallel == SchemeKind::kPs || l.scenario.scheme.allreduce.overlap;
  if (!overlap) return l.backward_end_item[static_cast<size_t>(w)];
  return l.grad_ready_item[static_cast<size_t>(w)][static_cast<size_t>(bucket.layers.back())];
}

std::vector<Bucket> buckets_of(const Lowering& l) {
  return make_buckets(l.model, l.data_parallel_layers, l.scenario.scheme.allreduce.bucket_bytes);
}

ComputeOp server_update(int64_t elements, int servers) {
  return update_op(static_cast<double>(elements) / servers, Phase::kServerUpdate);
}

// A collective of `schedule` over `participants`, with each participant's item added after deps[i] (-1: none).
std::vector<int> add_collective(Lowering& l, int schedule, const std::vector<int>& participants,
                                CollectivePurpose purpose, const std::string& label, const Bucket& bucket,
                                const std::vector<int>& deps) {
  CollectiveInstance c;
  c.schedule = schedule;
  c.participants = participants;
  c.purpose = purpose;
  c.label = label;
  c.layers = bucket.layers;
  const int index = l.builder.collective(std::move(c));
  std::vector<int> items;
  for (size_t r = 0; r < participants.size(); ++r)
    items.push_back(l.builder.comm(participants[r], index, static_cast<int>(r),
                                   deps[r] >= 0 ? std::vector<int>{deps[r]} : std::vector<int>{}));
  return items;
}

}  // namespace

SyncResult lower_allreduce(Lowering& l) {
  SyncResult out;
  out.update_deps.resize(static_cast<size_t>(l.gpus));
  if (l.gpus == 1) return out;
  const auto buckets = buckets_of(l);
  for (size_t k = 0; k < buckets.size(); ++k) {
    const Bucket& bucket = buckets[k];
    const auto& scheme = l.scenario.scheme.allreduce;
    const std::string key =
        fmt::format("allreduce/{}/{}/{}/{}/{}", algorithm_name(scheme.algorithm), algorithm_name(scheme.intra),
                    algorithm_name(scheme.inter), l.gpus_per_node, bucket.elements);
    const int sched = l.builder.schedule(key, [&] {
      return allreduce_schedule(scheme, l.gpus, l.gpus_per_node, bucket.elements);
    });
    std::vector<int> deps;
    for (int w = 0; w < l.gpus; ++w) deps.push_back(bucket_ready(l, bucket, w));
    const auto items = add_collective(l, sched, l.worker_endpoints, CollectivePurpose::kGradients,
                                      fmt::format("bucket {}", k), bucket, deps);
    for (int w = 0; w < l.gpus; ++w) out.update_deps[static_cast<size_t>(w)].push_back(items[static_cast<size_t>(w)]);
  }
  return out;
}

namespace {

// The workers of one bucket that talk to the servers, and the item after which each has its (aggregated)
// gradient; with local aggregation, each node first reduces to its first worker (reduce_items: each worker's item).
struct Talkers {
  std::vector<int> endpoints, ready;
  std::vector<int> reduce_items;  // per worker, -1 without aggregation
};

Talkers talkers_of(Lowering& l, const Bucket& bucket, size_t k, bool aggregate) {
  Talkers t;
  t.reduce_items.assign(static_cast<size_t>(l.gpus), -1);
  const int64_t n = bucket.elements;
  for (int node = 0; node < l.worker_nodes; ++node) {
    const auto [first, count] = l.node_workers(node);
    if (!aggregate || count == 1) {
      for (int w = first; w < first + count; ++w) {
        t.endpoints.push_back(l.worker_endpoints[static_cast<size_t>(w)]);
        t.ready.push_back(bucket_ready(l, bucket, w));
      }
      continue;
    }
    std::vector<int> group, deps;
    for (int w = first; w < first + count; ++w) {
      group.push_back(l.worker_endpoints[static_cast<size_t>(w)]);
      deps.push_back(bucket_ready(l, bucket, w));
    }
    const int sched = l.builder.schedule(fmt::format("reduce/{}/{}", count, n), [&, count = count] { return reduce_schedule(count, n); });
    const auto items = add_collective(l, sched, group, CollectivePurpose::kLocalAggregation,
                                      fmt::format("bucket {} node {} reduce", k, node), bucket, deps);
    for (int i = 0; i < count; ++i) t.reduce_items[static_cast<size_t>(first + i)] = items[static_cast<size_t>(i)];
    t.endpoints.push_back(group[0]);
    t.ready.push_back(items[0]);
  }
  return t;
}

// Synchronous: one push of every talker (reduced on the shards), the shards' update, one pull. Returns each
// talker's pull item.
std::vector<int> push_update_pull(Lowering& l, const Bucket& bucket, size_t k, const Talkers& talkers) {
  const int servers = static_cast<int>(l.server_endpoints.size());
  const int64_t n = bucket.elements;
  const int t = static_cast<int>(talkers.endpoints.size());
  std::vector<int> members = talkers.endpoints;
  members.insert(members.end(), l.server_endpoints.begin(), l.server_endpoints.end());
  std::vector<int> push_deps = talkers.ready;
  push_deps.resize(members.size(), -1);
  const int push = l.builder.schedule(fmt::format("push/{}/{}/{}", t, servers, n), [&] { return push_schedule(t, servers, n); });
  const int pull = l.builder.schedule(fmt::format("pull/{}/{}/{}", t, servers, n), [&] { return pull_schedule(t, servers, n); });
  const auto pushed = add_collective(l, push, members, CollectivePurpose::kPsPushPull,
                                     fmt::format("bucket {} push", k), bucket, push_deps);
  std::vector<int> pull_deps(pushed.begin(), pushed.begin() + t);
  for (int s = 0; s < servers; ++s)
    pull_deps.push_back(l.builder.compute(l.server_endpoints[static_cast<size_t>(s)], server_update(n, servers),
                                          {pushed[static_cast<size_t>(t + s)]}));
  const auto items = add_collective(l, pull, members, CollectivePurpose::kPsPushPull,
                                    fmt::format("bucket {} pull", k), bucket, pull_deps);
  return {items.begin(), items.begin() + t};
}

// Asynchronous: each talker pushes (the shards update on arrival) and pulls on its own. Returns its pull items.
std::vector<int> push_pull_on_demand(Lowering& l, const Bucket& bucket, size_t k, const Talkers& talkers) {
  const int servers = static_cast<int>(l.server_endpoints.size());
  const int64_t n = bucket.elements;
  const int push = l.builder.schedule(fmt::format("push/1/{}/{}", servers, n), [&] { return push_schedule(1, servers, n); });
  const int pull = l.builder.schedule(fmt::format("pull/1/{}/{}", servers, n), [&] { return pull_schedule(1, servers, n); });
  std::vector<int> pulled;
  for (size_t i = 0; i < talkers.endpoints.size(); ++i) {
    std::vector<int> members{talkers.endpoints[i]};
    members.insert(members.end(), l.server_endpoints.begin(), l.server_endpoints.end());
    CollectiveInstance c;
    c.schedule = push;
    c.participants = members;
    c.purpose = CollectivePurpose::kPsPushPull;
    c.label = fmt::format("bucket {} push", k);
    c.layers = bucket.layers;
    c.on_demand = true;
    c.has_serve_compute = true;
    c.serve_compute = server_update(n, servers);
    const int pushed = l.builder.comm(talkers.endpoints[i], l.builder.collective(c), 0, {talkers.ready[i]});
    c.schedule = pull;
    c.label = fmt::format("bucket {} pull", k);
    c.has_serve_compute = false;
    c.serve_compute = ComputeOp{};
    pulled.push_back(l.builder.comm(talkers.endpoints[i], l.builder.collective(c), 0, {pushed}));
  }
  return pulled;
}

// The new weights broadcast inside each aggregated node; every worker's update waits for them (out.update_deps).
void broadcast_in_nodes(Lowering& l, const Bucket& bucket, size_t k, bool aggregate, const Talkers& talkers,
                        const std::vector<int>& pulled, SyncResult& out) {
  size_t talker = 0;
  for (int node = 0; node < l.worker_nodes; ++node) {
    const auto [first, count] = l.node_workers(node);
    if (!aggregate || count == 1) {
      for (int w = first; w < first + count; ++w) out.update_deps[static_cast<size_t>(w)].push_back(pulled[talker++]);
      continue;
    }
    std::vector<int> group, deps;
    for (int w = first; w < first + count; ++w) {
      group.push_back(l.worker_endpoints[static_cast<size_t>(w)]);
      deps.push_back(w == first ? pulled[talker] : talkers.reduce_items[static_cast<size_t>(w)]);
    }
    ++talker;
    const int64_t n = bucket.elements;
    const int sched =
        l.builder.schedule(fmt::format("broadcast/{}/{}", count, n), [&, count = count] { return broadcast_schedule(count, n); });
    const auto items = add_collective(l, sched, group, CollectivePurpose::kLocalAggregation,
                                      fmt::format("bucket {} node {} broadcast", k, node), bucket, deps);
    for (int i = 0; i < count; ++i) out.update_deps[static_cast<size_t>(first + i)].push_back(items[static_cast<size_t>(i)]);
  }
}

}  // namespace

SyncResult lower_ps(Lowering& l) {
  const PsScheme& ps = l.scenario.scheme.ps;
  SyncResult out;
  out.update_deps.resize(static_cast<size_t>(l.gpus));
  out.worker_updates_replicated = false;
  // Sync inside a node first when asked to, and always for mixed_async (and async with local aggregation).
  const bool aggregate = (ps.local_aggregation || ps.mode == PsMode::kMixedAsync) && l.gpus_per_node > 1;
  const bool on_demand = ps.mode != PsMode::kSync;
  const auto buckets = buckets_of(l);
  for (size_t k = 0; k < buckets.size(); ++k) {
    const Talkers talkers = talkers_of(l, buckets[k], k, aggregate);
    const std::vector<int> pulled = on_demand ? push_pull_on_demand(l, buckets[k], k, talkers)
                                              : push_update_pull(l, buckets[k], k, talkers);
    broadcast_in_nodes(l, buckets[k], k, aggregate, talkers, pulled, out);
  }
  return out;
}

}  // namespace scaletwin::plan::detail
