// Parameter server push and pull with k shards (Li et al., "Scaling distributed machine learning with the
// parameter server", OSDI 2014; the TensorFlow / MXNet PS of the seed's measurements).
//
//   ranks 0..w−1 are workers, ranks w..w+k−1 are shards; shard j owns slice S_j = part(n, k, j), or, given the
//   shards' sizes, the j-th of consecutive slices of those sizes (a framework that keeps each tensor whole on one
//   server: plan::TensorPlacement)
//   push:  every worker i sends S_j to shard j (all j at once); shard j RecvReduces S_j from every worker
//   pull:  shard j sends S_j to every worker; every worker Recvs S_j from every shard
//   push_pull = sequence(push, pull): a synchronous PS step. The asynchronous PS runs push_pull with one worker
//   per request (w = 1): the shards serve such requests in arrival order (plan::CollectiveInstance::on_demand).
//
//   w = 3, k = 2:   w0 ─S0→ ps0 ←S0─ w1 …,  w0 ─S1→ ps1 …   then   ps0 ─S0→ w0, w1, w2;  ps1 ─S1→ w0, w1, w2
//
// Steps (rounds): push 1, pull 1, push_pull 2. Bytes sent per rank: a worker sends n (push); shard j sends
// w·|S_j| (pull), about w·n/k.
// Preconditions: w ≥ 1, k ≥ 1, any n ≥ 0 (shards with an empty slice take no part).
// Data model: push: workers contribute, shard j must hold the sum of S_j; pull: shard j holds S_j, every worker
// must end with every slice; push_pull: every worker must end with the sum of all workers' contributions.
#include "plan/collectives.hpp"
#include "plan/compose.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace scaletwin::plan {

namespace {

void add_push(ScheduleBuilder& b, int w, const std::vector<int64_t>& bounds) {
  for (size_t j = 0; j + 1 < bounds.size(); ++j) {
    const int64_t off = bounds[j], len = bounds[j + 1] - off;
    for (int i = 0; i < w; ++i) {
      b.send(i, w + static_cast<int>(j), off, len);
      b.recv_reduce(w + static_cast<int>(j), i, off, len);
    }
  }
}

void add_pull(ScheduleBuilder& b, int w, const std::vector<int64_t>& bounds) {
  for (size_t j = 0; j + 1 < bounds.size(); ++j) {
    const int64_t off = bounds[j], len = bounds[j + 1] - off;
    for (int i = 0; i < w; ++i) {
      b.send(w + static_cast<int>(j), i, off, len);
      b.recv(i, w + static_cast<int>(j), off, len);
    }
  }
}

void set_ps_model(Schedule& s, int w, const std::vector<int64_t>& bounds, InitialData worker_initial,
                  InitialData shard_initial, Goal worker_goal, Goal shard_goal) {
  const int k = static_cast<int>(bounds.size()) - 1;
  s.initial.assign(static_cast<size_t>(w + k), worker_initial);
  s.goal.assign(static_cast<size_t>(w + k), worker_goal);
  s.slice_offset.assign(static_cast<size_t>(w + k), 0);
  s.slice_length.assign(static_cast<size_t>(w + k), 0);
  for (int j = 0; j < k; ++j) {
    const auto r = static_cast<size_t>(w + j);
    s.initial[r] = shard_initial;
    s.goal[r] = shard_goal;
    s.slice_offset[r] = bounds[static_cast<size_t>(j)];
    s.slice_length[r] = bounds[static_cast<size_t>(j) + 1] - bounds[static_cast<size_t>(j)];
  }
}

}  // namespace

std::vector<int64_t> ps_shard_bounds(int k, int64_t n, const std::vector<int64_t>& sizes) {
  std::vector<int64_t> bounds(static_cast<size_t>(k) + 1, 0);
  if (sizes.empty()) {
    for (int j = 0; j <= k; ++j) bounds[static_cast<size_t>(j)] = part_offset(n, k, j);
    return bounds;
  }
  ST_ASSERT(static_cast<int>(sizes.size()) == k, fmt::format("ps: {} shard sizes for {} shards", sizes.size(), k));
  for (int j = 0; j < k; ++j) {
    ST_ASSERT(sizes[static_cast<size_t>(j)] >= 0, "ps: a negative shard size");
    bounds[static_cast<size_t>(j) + 1] = bounds[static_cast<size_t>(j)] + sizes[static_cast<size_t>(j)];
  }
  ST_ASSERT(bounds.back() == n, fmt::format("ps: shard sizes summing to {} for {} elements", bounds.back(), n));
  return bounds;
}

Schedule ps_push(int workers, int servers, int64_t n, int64_t element_bytes, const std::vector<int64_t>& shard_sizes) {
  const std::vector<int64_t> bounds = ps_shard_bounds(servers, n, shard_sizes);
  ScheduleBuilder b("ps push", workers + servers, n, element_bytes);
  add_push(b, workers, bounds);
  Schedule s = b.finish();
  s.collective = Collective::kPushPull;
  set_ps_model(s, workers, bounds, InitialData::kOwn, InitialData::kNone, Goal::kAny, Goal::kReducedSlice);
  return s;
}

Schedule ps_pull(int workers, int servers, int64_t n, int64_t element_bytes, const std::vector<int64_t>& shard_sizes) {
  const std::vector<int64_t> bounds = ps_shard_bounds(servers, n, shard_sizes);
  ScheduleBuilder b("ps pull", workers + servers, n, element_bytes);
  add_pull(b, workers, bounds);
  Schedule s = b.finish();
  s.collective = Collective::kPushPull;
  set_ps_model(s, workers, bounds, InitialData::kNone, InitialData::kOwnSlice, Goal::kGatheredAll, Goal::kAny);
  return s;
}

Schedule ps_push_pull(int workers, int servers, int64_t n, int64_t element_bytes,
                      const std::vector<int64_t>& shard_sizes) {
  Schedule s = sequence(schedules(ps_push(workers, servers, n, element_bytes, shard_sizes),
                                  ps_pull(workers, servers, n, element_bytes, shard_sizes)),
                        "ps push_pull");
  s.collective = Collective::kPushPull;
  set_ps_model(s, workers, ps_shard_bounds(servers, n, shard_sizes), InitialData::kOwn, InitialData::kNone,
               Goal::kReducedAll, Goal::kReducedSlice);
  return s;
}

}  // namespace scaletwin::plan
