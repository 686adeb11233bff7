// Gradient synchronisation of the data-parallel layers, per bucket, for each scheme of the spec:
//   allreduce  one all-reduce per bucket over all workers (hierarchical: ranks grouped by node)
//   ps sync    push (workers → shards, reduced) → server update → pull (shards → workers), per bucket
//   ps + local_aggregation: reduce inside each node to its first worker, push/pull by those leaders,
//              broadcast inside each node
//   ps async   each worker pushes and pulls on its own (on-demand collectives with the servers)
//   ps mixed_async: synchronous inside a node (reduce, broadcast), asynchronous between nodes (leaders on demand)
// Buckets: consecutive layers in backward order until bucket_bytes is reached (PyTorch DDP's rule); each
// bucket's communication depends on the weight gradient of its last layer, or on the end of the backward pass
// when overlap is off. A bucket's elements are spread over the servers as the scheme's tensor placement says
// (plan::TensorPlacement): each layer's parameters split evenly, or whole on one server, so that a bucket's
// servers may hold unequal slices (the push and pull schedules' shard sizes) and update them.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

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

// MXNet's ps-lite splits an array above this many elements over every server (MXNET_KVSTORE_BIGARRAY_BOUND's
// default, KVStoreDist) and keeps a smaller one whole on server (key * 9973) mod servers.
constexpr int64_t kKvstoreBigArray = 1'000'000;

// Per layer of the model: the server that holds its parameters whole, or -1 where they are split evenly over all
// servers. The layers are taken in the network's order (the order a framework creates its variables in; its key
// for kvstore), largest first for largest_first (the network's order among equals); a layer's weights and biases
// count as one tensor.
std::vector<int> tensor_servers(const Lowering& l, int servers) {
  std::vector<int> server_of(l.model.layers.size(), -1);
  const TensorPlacement placement = l.scenario.scheme.ps.tensors;
  if (placement == TensorPlacement::kSliced || servers == 1) return server_of;
  std::vector<int> created = l.data_parallel_layers;
  std::sort(created.begin(), created.end());
  const auto params_of = [&](int layer) { return l.model.layers.at(static_cast<size_t>(layer)).params; };
  if (placement == TensorPlacement::kLargestFirst)
    std::stable_sort(created.begin(), created.end(), [&](int a, int b) { return params_of(a) > params_of(b); });
  std::vector<int64_t> load(static_cast<size_t>(servers), 0);
  int64_t key = 0;
  for (const int layer : created) {
    const int64_t n = params_of(layer);
    if (n == 0) continue;
    int& server = server_of[static_cast<size_t>(layer)];
    if (placement == TensorPlacement::kWhole || placement == TensorPlacement::kLargestFirst) {
      server = static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
      load[static_cast<size_t>(server)] += n;
    } else if (n <= kKvstoreBigArray) {
      server = static_cast<int>((key * 9973) % servers);
    }
    ++key;
  }
  return server_of;
}

// The elements each server holds of `bucket` (empty where every layer is split evenly: equal slices).
std::vector<int64_t> shard_sizes(const Lowering& l, const Bucket& bucket, const std::vector<int>& server_of,
                                 int servers) {
  if (std::all_of(bucket.layers.begin(), bucket.layers.end(),
                  [&](int layer) { return server_of[static_cast<size_t>(layer)] < 0; }))
    return {};
  std::vector<int64_t> sizes(static_cast<size_t>(servers), 0);
  for (const int layer : bucket.layers) {
    const int64_t n = l.model.layers.at(static_cast<size_t>(layer)).params;
    const int whole = server_of[static_cast<size_t>(layer)];
    if (whole >= 0) {
      sizes[static_cast<size_t>(whole)] += n;
      continue;
    }
    for (int j = 0; j < servers; ++j)
      sizes[static_cast<size_t>(j)] += part_offset(n, servers, j + 1) - part_offset(n, servers, j);
  }
  return sizes;
}

// A schedule key's suffix for shard sizes ("" for equal slices).
std::string sizes_key(const std::vector<int64_t>& sizes) {
  return sizes.empty() ? std::string() : fmt::format("/{}", fmt::join(sizes, ","));
}

// The servers that hold some of a bucket (all of them for equal slices) and their shard sizes (empty for equal
// slices): a server without any of the bucket's tensors takes no part in its push and pull.
struct BucketShards {
  std::vector<int> endpoints;
  std::vector<int64_t> sizes;
};

// The update of the s-th of `shards`: its slice of the bucket's n elements.
ComputeOp shard_update(const BucketShards& shards, int64_t n, int s) {
  if (shards.sizes.empty()) return server_update(n, static_cast<int>(shards.endpoints.size()));
  return update_op(static_cast<double>(shards.sizes[static_cast<size_t>(s)]), Phase::kServerUpdate);
}

BucketShards bucket_shards(const Lowering& l, const std::vector<int64_t>& sizes) {
  BucketShards b;
  for (size_t s = 0; s < l.server_endpoints.size(); ++s) {
    if (!sizes.empty() && sizes[s] == 0) continue;
    b.endpoints.push_back(l.server_endpoints[s]);
    if (!sizes.empty()) b.sizes.push_back(sizes[s]);
  }
  return b;
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
std::vector<int> push_update_pull(Lowering& l, const Bucket& bucket, size_t k, const Talkers& talkers,
                                  const BucketShards& shards) {
  const int servers = static_cast<int>(shards.endpoints.size());
  const std::vector<int64_t>& sizes = shards.sizes;
  const int64_t n = bucket.elements;
  const int t = static_cast<int>(talkers.endpoints.size());
  std::vector<int> members = talkers.endpoints;
  members.insert(members.end(), shards.endpoints.begin(), shards.endpoints.end());
  std::vector<int> push_deps = talkers.ready;
  push_deps.resize(members.size(), -1);
  const int push = l.builder.schedule(fmt::format("push/{}/{}/{}{}", t, servers, n, sizes_key(sizes)),
                                      [&] { return push_schedule(t, servers, n, sizes); });
  const int pull = l.builder.schedule(fmt::format("pull/{}/{}/{}{}", t, servers, n, sizes_key(sizes)),
                                      [&] { return pull_schedule(t, servers, n, sizes); });
  const auto pushed = add_collective(l, push, members, CollectivePurpose::kPsPushPull,
                                     fmt::format("bucket {} push", k), bucket, push_deps);
  std::vector<int> pull_deps(pushed.begin(), pushed.begin() + t);
  for (int s = 0; s < servers; ++s)
    pull_deps.push_back(l.builder.compute(shards.endpoints[static_cast<size_t>(s)], shard_update(shards, n, s),
                                          {pushed[static_cast<size_t>(t + s)]}));
  const auto items = add_collective(l, pull, members, CollectivePurpose::kPsPushPull,
                                    fmt::format("bucket {} pull", k), bucket, pull_deps);
  return {items.begin(), items.begin() + t};
}

// Asynchronous: each talker pushes (the shards update on arrival) and pulls on its own. Returns its pull items.
std::vector<int> push_pull_on_demand(Lowering& l, const Bucket& bucket, size_t k, const Talkers& talkers,
                                     const BucketShards& shards) {
  const int servers = static_cast<int>(shards.endpoints.size());
  const std::vector<int64_t>& sizes = shards.sizes;
  const int64_t n = bucket.elements;
  const int push = l.builder.schedule(fmt::format("push/1/{}/{}{}", servers, n, sizes_key(sizes)),
                                      [&] { return push_schedule(1, servers, n, sizes); });
  const int pull = l.builder.schedule(fmt::format("pull/1/{}/{}{}", servers, n, sizes_key(sizes)),
                                      [&] { return pull_schedule(1, servers, n, sizes); });
  std::vector<int> pulled;
  for (size_t i = 0; i < talkers.endpoints.size(); ++i) {
    std::vector<int> members{talkers.endpoints[i]};
    members.insert(members.end(), shards.endpoints.begin(), shards.endpoints.end());
    CollectiveInstance c;
    c.schedule = push;
    c.participants = members;
    c.purpose = CollectivePurpose::kPsPushPull;
    c.label = fmt::format("bucket {} push", k);
    c.layers = bucket.layers;
    c.on_demand = true;
    c.has_serve_compute = true;
    c.serve_compute = server_update(n, servers);  // the shards' mean, also where their slices differ
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
  const int servers = static_cast<int>(l.server_endpoints.size());
  const std::vector<int> server_of = tensor_servers(l, servers);
  for (size_t k = 0; k < buckets.size(); ++k) {
    const Talkers talkers = talkers_of(l, buckets[k], k, aggregate);
    const BucketShards shards = bucket_shards(l, shard_sizes(l, buckets[k], server_of, servers));
    const std::vector<int> pulled = on_demand ? push_pull_on_demand(l, buckets[k], k, talkers, shards)
                                              : push_update_pull(l, buckets[k], k, talkers, shards);
    broadcast_in_nodes(l, buckets[k], k, aggregate, talkers, pulled, out);
  }
  return out;
}

}  // namespace scaletwin::plan::detail
