// Hierarchical all-reduce as a composition (Jia et al. 2018, "Highly scalable deep learning training system with
// mixed-precision", and NCCL's intra/inter split; the spec's `hierarchical`).
//
//   p = G nodes × L ranks per node; rank g·L + l is local rank l of node g; slice l = part(n, L, l)
//   1. inside each node:   reduce-scatter(intra) on the node's L ranks     → local rank l holds slice l of the node sum
//   2. between nodes:      for each l, all-reduce(inter) of slice l on the G ranks {g·L + l}
//   3. inside each node:   all-gather(intra)                               → everyone holds the global sum
//   hierarchical = sequence(parallel_g remap(RS), parallel_l remap(shift(AR, slice l)), parallel_g remap(AG))
//
//   G = 2, L = 4:  node 0: 0 1 2 3 | node 1: 4 5 6 7;  step 2 pairs (0,4) (1,5) (2,6) (3,7), each on its slice
//
// Steps (rounds): steps(RS_intra, L) + steps(AR_inter, G) + steps(AG_intra, L).
// Bytes sent per rank: bytes(RS_intra, L, n) + bytes(AR_inter, G, n/L) + bytes(AG_intra, L, n); with ring inside
// and ring between: 2(L−1)/L · n + 2(G−1)/G · n/L.
// Preconditions: ranks_per_node divides p; intra has reduce-scatter and all-gather forms (ring, interval_pairing,
// halving_doubling, direct); inter is any all-reduce but hierarchical and ps.
#include <fmt/format.h>

#include <utility>

#include "core/error.hpp"
#include "plan/collectives.hpp"
#include "plan/compose.hpp"

namespace scaletwin::plan {

Schedule hierarchical_allreduce(int p, int64_t n, int64_t element_bytes, const CollectiveOptions& options) {
  const int per_node = options.ranks_per_node > 0 ? options.ranks_per_node : p;
  if (p % per_node != 0)
    throw InputError("", "--ranks-per-node",
                     fmt::format("a divisor of the rank count {} (got {})", p, options.ranks_per_node));
  if (options.inter == "hierarchical" || options.inter == "ps")
    throw InputError("", "inter", "an all-reduce algorithm other than hierarchical and ps");
  const int nodes = p / per_node;
  std::vector<Schedule> reduce_scatter, allreduce, allgather;
  for (int g = 0; g < nodes; ++g) {
    std::vector<int> group;
    for (int l = 0; l < per_node; ++l) group.push_back(g * per_node + l);
    reduce_scatter.push_back(
        remap(make_collective(Collective::kReduceScatter, options.intra, per_node, n, element_bytes), group, p));
    allgather.push_back(
        remap(make_collective(Collective::kAllGather, options.intra, per_node, n, element_bytes), group, p));
  }
  CollectiveOptions inner = options;
  inner.ranks_per_node = 0;
  for (int l = 0; l < per_node; ++l) {
    std::vector<int> group;
    for (int g = 0; g < nodes; ++g) group.push_back(g * per_node + l);
    const int64_t off = part_offset(n, per_node, l), len = part_offset(n, per_node, l + 1) - off;
    Schedule slice = make_collective(Collective::kAllReduce, options.inter, nodes, len, element_bytes, inner);
    allreduce.push_back(remap(shift(std::move(slice), off, n), group, p));
  }
  Schedule s = sequence(schedules(parallel(std::move(reduce_scatter), "intra reduce-scatter"),
                                   parallel(std::move(allreduce), "inter all-reduce"),
                                   parallel(std::move(allgather), "intra all-gather")),
                        fmt::format("hierarchical({}, {})", options.intra, options.inter));
  set_data_model(s, Collective::kAllReduce, InitialData::kOwn, Goal::kReducedAll);
  return s;
}

}  // namespace scaletwin::plan
