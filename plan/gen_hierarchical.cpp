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
//
// Symbolic rounds (hierarchical_allreduce_rounds, registered): the same composition on rounds (rounds.hpp), of the
// parts' own rounds (collective_rounds: symbolic where their generator has a form, else extracted), so 65,536
// ranks cost the rounds of one node and of one lane, not the 10^9 steps of the schedule. Equal to
// rounds_of(hierarchical_allreduce) when each phase ends on every rank in its last round: every intra and inter
// algorithm but the double binary tree (pipelined chunks end on different rounds) and halving-doubling between a
// node count that is not a power of two (its extra nodes idle in the middle rounds). For those the composition
// keeps every transfer and joins the phases at a round boundary, as lockstep timing of the whole would within a
// phase; tests/plan/test_rounds.cpp checks both.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <utility>

#include "core/error.hpp"
#include "plan/collectives.hpp"
#include "plan/compose.hpp"

namespace scaletwin::plan {

namespace {

// p ranks as nodes × per_node (checked with the options), and the rank groups of the phases.
struct Layout {
  int per_node = 0, nodes = 0;
  Layout(int p, const CollectiveOptions& options) : per_node(options.ranks_per_node > 0 ? options.ranks_per_node : p) {
    if (p % per_node != 0)
      throw InputError("", "--ranks-per-node",
                       fmt::format("a divisor of the rank count {} (got {})", p, options.ranks_per_node));
    const auto flat = flat_allreduce_algorithms();
    if (std::find(flat.begin(), flat.end(), options.inter) == flat.end())
      throw InputError(
          "", "inter",
          fmt::format("one of {} (got \"{}\")", fmt::join(algorithm_names(flat), ", "), algorithm_name(options.inter)));
    nodes = p / per_node;
  }
  std::vector<int> node(int g) const {  // the ranks of node g
    std::vector<int> group;
    for (int l = 0; l < per_node; ++l) group.push_back(g * per_node + l);
    return group;
  }
  std::vector<int> lane(int l) const {  // local rank l of every node
    std::vector<int> group;
    for (int g = 0; g < nodes; ++g) group.push_back(g * per_node + l);
    return group;
  }
};

}  // namespace

Schedule hierarchical_allreduce(int p, int64_t n, int64_t element_bytes, const CollectiveOptions& options) {
  const Layout layout(p, options);
  const int per_node = layout.per_node, nodes = layout.nodes;
  std::vector<Schedule> reduce_scatter, allreduce, allgather;
  for (int g = 0; g < nodes; ++g) {
    reduce_scatter.push_back(remap(make_collective(Collective::kReduceScatter, options.intra, per_node, n, element_bytes),
                                   layout.node(g), p));
    allgather.push_back(
        remap(make_collective(Collective::kAllGather, options.intra, per_node, n, element_bytes), layout.node(g), p));
  }
  CollectiveOptions inner = options;
  inner.ranks_per_node = 0;
  for (int l = 0; l < per_node; ++l) {
    const int64_t off = part_offset(n, per_node, l), len = part_offset(n, per_node, l + 1) - off;
    Schedule slice = make_collective(Collective::kAllReduce, options.inter, nodes, len, element_bytes, inner);
    allreduce.push_back(remap(shift(std::move(slice), off, n), layout.lane(l), p));
  }
  Schedule s = sequence(
      schedules(parallel(std::move(reduce_scatter), "intra reduce-scatter"),
                parallel(std::move(allreduce), "inter all-reduce"), parallel(std::move(allgather), "intra all-gather")),
      fmt::format("hierarchical({}, {})", algorithm_name(options.intra), algorithm_name(options.inter)));
  set_data_model(s, Collective::kAllReduce, InitialData::kOwn, Goal::kReducedAll);
  return s;
}

CollectiveRounds hierarchical_allreduce_rounds(int p, int64_t n, int64_t element_bytes, const CollectiveOptions& options) {
  const Layout layout(p, options);
  const int per_node = layout.per_node, nodes = layout.nodes;
  const CollectiveRounds scatter = collective_rounds(Collective::kReduceScatter, options.intra, per_node, n, element_bytes);
  const CollectiveRounds gather = collective_rounds(Collective::kAllGather, options.intra, per_node, n, element_bytes);
  std::vector<CollectiveRounds> reduce_scatter, allreduce, allgather;
  for (int g = 0; g < nodes; ++g) {
    reduce_scatter.push_back(remap_rounds(scatter, layout.node(g), p));
    allgather.push_back(remap_rounds(gather, layout.node(g), p));
  }
  CollectiveOptions inner = options;
  inner.ranks_per_node = 0;
  std::map<int64_t, CollectiveRounds> lane_of_length;  // slices differ by at most one element: two lanes at most
  for (int l = 0; l < per_node; ++l) {
    const int64_t len = part_offset(n, per_node, l + 1) - part_offset(n, per_node, l);
    auto it = lane_of_length.find(len);
    if (it == lane_of_length.end())
      it = lane_of_length
               .emplace(len, collective_rounds(Collective::kAllReduce, options.inter, nodes, len, element_bytes, inner))
               .first;
    allreduce.push_back(remap_rounds(it->second, layout.lane(l), p));
  }
  return sequence_rounds({parallel_rounds(reduce_scatter), parallel_rounds(allreduce), parallel_rounds(allgather)});
}

}  // namespace scaletwin::plan
