// The schedules the lowering asks for, as recipes for the generator registry (plan/collectives.hpp); elements are
// fp32. make_schedule() runs a recipe; a schedule shell (no programs) stands for it in plans lowered without
// materializing their schedules (LowerOptions, for the fast simulation mode at thousands of GPUs).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <list>
#include <mutex>
#include <string>

#include "plan/collectives.hpp"
#include "plan/lower_internal.hpp"

namespace scaletwin::plan {

namespace {

CollectiveOptions options_of(const ScheduleRecipe& r) {
  CollectiveOptions options;
  options.ranks_per_node = r.ranks_per_node;
  options.intra = r.intra;
  options.inter = r.inter;
  options.servers = r.servers;
  options.root = r.root;
  options.shard_sizes = r.shard_sizes;
  return options;
}

}  // namespace

Schedule make_schedule(const ScheduleRecipe& r) {
  return make_collective(r.collective, r.algorithm, r.ranks, r.elements, r.element_bytes, options_of(r));
}

CollectiveRounds recipe_rounds(const ScheduleRecipe& r) {
  if (has_symbolic_rounds(r.collective, r.algorithm))
    return collective_rounds(r.collective, r.algorithm, r.ranks, r.elements, r.element_bytes, options_of(r));
  // Without a symbolic form the rounds come from the materialized schedule (a double binary tree of 4,096 ranks:
  // about a second). The same recipe recurs across simulations in one process (predict's alternatives and network
  // ends, explore's batches and precisions of one cluster, scheme and GPU count: the gradients' sizes are the
  // model's), so the last few are kept.
  const std::string key = fmt::format("{}/{}/{}/{}/{}/{}/{}/{}/{}/{}/{}", static_cast<int>(r.collective),
                                      static_cast<int>(r.algorithm), r.ranks, r.elements, r.element_bytes,
                                      r.ranks_per_node, static_cast<int>(r.intra), static_cast<int>(r.inter),
                                      r.servers, r.root, fmt::join(r.shard_sizes, ","));
  static std::mutex mutex;
  static std::list<std::pair<std::string, CollectiveRounds>> recent;  // most recent first
  constexpr size_t kKept = 16;
  {
    const std::lock_guard<std::mutex> lock(mutex);
    for (auto it = recent.begin(); it != recent.end(); ++it)
      if (it->first == key) {
        recent.splice(recent.begin(), recent, it);
        return recent.front().second;
      }
  }
  CollectiveRounds rounds =
      collective_rounds(r.collective, r.algorithm, r.ranks, r.elements, r.element_bytes, options_of(r));
  const std::lock_guard<std::mutex> lock(mutex);
  recent.emplace_front(key, rounds);
  if (recent.size() > kKept) recent.pop_back();
  return rounds;
}

bool IterationPlan::materialized() const {
  for (const Schedule& s : schedules)
    if (static_cast<int>(s.programs.size()) != s.ranks) return false;
  return true;
}

}  // namespace scaletwin::plan

namespace scaletwin::plan::detail {

namespace {

constexpr int64_t kFloatBytes = 4;

ScheduleRecipe recipe(Collective collective, Algorithm algorithm, int ranks, int64_t elements) {
  ScheduleRecipe r;
  r.collective = collective;
  r.algorithm = algorithm;
  r.ranks = ranks;
  r.elements = elements;
  r.element_bytes = kFloatBytes;
  return r;
}

}  // namespace

Schedule PlanBuilder::schedule_shell(const ScheduleRecipe& r) {
  Schedule s;
  s.name = fmt::format("{} {}", algorithm_name(r.algorithm), collective_name(r.collective));
  s.collective = r.collective;
  s.ranks = r.ranks + (r.collective == Collective::kPushPull ? r.servers : 0);
  s.elements = r.elements;
  s.element_bytes = r.element_bytes;
  return s;
}

ScheduleRecipe allreduce_schedule(const AllReduceScheme& scheme, int ranks, int ranks_per_node, int64_t elements) {
  ScheduleRecipe r = recipe(Collective::kAllReduce, scheme.algorithm, ranks, elements);
  r.ranks_per_node = ranks_per_node;
  r.intra = scheme.intra;
  r.inter = scheme.inter;
  return r;
}

ScheduleRecipe reduce_schedule(int ranks, int64_t elements) {
  return recipe(Collective::kReduce, Algorithm::kBinomial, ranks, elements);
}

ScheduleRecipe broadcast_schedule(int ranks, int64_t elements) {
  return recipe(Collective::kBroadcast, Algorithm::kBinomial, ranks, elements);
}

ScheduleRecipe push_schedule(int workers, int servers, int64_t elements, const std::vector<int64_t>& shard_sizes) {
  ScheduleRecipe r = recipe(Collective::kPushPull, Algorithm::kPush, workers, elements);
  r.servers = servers;
  r.shard_sizes = shard_sizes;
  return r;
}

ScheduleRecipe pull_schedule(int workers, int servers, int64_t elements, const std::vector<int64_t>& shard_sizes) {
  ScheduleRecipe r = recipe(Collective::kPushPull, Algorithm::kPull, workers, elements);
  r.servers = servers;
  r.shard_sizes = shard_sizes;
  return r;
}

ScheduleRecipe allgather_schedule(int ranks, int64_t elements) {
  return recipe(Collective::kAllGather, Algorithm::kRing, ranks, elements);
}

ScheduleRecipe reduce_scatter_schedule(int ranks, int64_t elements) {
  return recipe(Collective::kReduceScatter, Algorithm::kRing, ranks, elements);
}

}  // namespace scaletwin::plan::detail
