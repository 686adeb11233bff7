// The schedules the lowering asks for, from the generator registry (plan/collectives.hpp). Elements are fp32.
#include "plan/collectives.hpp"
#include "plan/lower_internal.hpp"

namespace scaletwin::plan::detail {

namespace {
constexpr int64_t kFloatBytes = 4;
}

Schedule allreduce_schedule(const AllReduceScheme& scheme, int ranks, int ranks_per_node, int64_t elements) {
  CollectiveOptions options;
  options.ranks_per_node = ranks_per_node;
  options.intra = scheme.intra;
  options.inter = scheme.inter;
  return make_collective(Collective::kAllReduce, scheme.algorithm, ranks, elements, kFloatBytes, options);
}

Schedule reduce_schedule(int ranks, int64_t elements) { return binomial_reduce(ranks, elements, kFloatBytes, 0); }

Schedule broadcast_schedule(int ranks, int64_t elements) { return binomial_broadcast(ranks, elements, kFloatBytes, 0); }

Schedule push_schedule(int workers, int servers, int64_t elements) {
  return ps_push(workers, servers, elements, kFloatBytes);
}

Schedule pull_schedule(int workers, int servers, int64_t elements) {
  return ps_pull(workers, servers, elements, kFloatBytes);
}

Schedule allgather_schedule(int ranks, int64_t elements) { return ring_allgather(ranks, elements, kFloatBytes); }

Schedule reduce_scatter_schedule(int ranks, int64_t elements) {
  return ring_reduce_scatter(ranks, elements, kFloatBytes);
}

}  // namespace scaletwin::plan::detail
