// Rounds of collectives (plan/rounds.hpp): every symbolic form registered beside a generator against the rounds
// extracted from the schedule that generator materializes, and the compositions of rounds against those of
// schedules.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

#include "plan/collectives.hpp"
#include "plan/compose.hpp"
#include "plan/rounds.hpp"

using namespace scaletwin;
using namespace scaletwin::plan;

namespace {

// Every transfer (src, dst, bytes, reduce) of all rounds, sorted.
std::vector<std::tuple<int, int, int64_t, bool>> all_flows(const CollectiveRounds& c) {
  std::vector<std::tuple<int, int, int64_t, bool>> out;
  for (const Round& r : c.rounds) {
    if (r.pattern < 0) continue;
    const auto& pattern = c.patterns[static_cast<size_t>(r.pattern)];
    for (size_t f = 0; f < pattern.size(); ++f)
      out.emplace_back(pattern[f].first, pattern[f].second, c.bytes_of(r, f), c.reduces(r, f));
  }
  std::sort(out.begin(), out.end());
  return out;
}

void check_same_rounds(const CollectiveRounds& symbolic, const CollectiveRounds& extracted) {
  CHECK(symbolic.ranks == extracted.ranks);
  const std::vector<std::string> a = canonical_rounds(symbolic), b = canonical_rounds(extracted);
  REQUIRE(a.size() == b.size());
  for (size_t k = 0; k < a.size(); ++k) {
    INFO("round " << k);
    CHECK(a[k] == b[k]);
  }
}

}  // namespace

TEST_CASE("symbolic direct all-reduce rounds equal the rounds of its schedule", "[rounds]") {
  REQUIRE(has_symbolic_rounds(Collective::kAllReduce, Algorithm::kDirect));
  for (int p : {1, 2, 7}) {
    INFO("p = " << p);
    const CollectiveRounds symbolic = collective_rounds(Collective::kAllReduce, Algorithm::kDirect, p, 300, 4);
    const CollectiveRounds extracted = rounds_of(direct_allreduce(p, 300, 4));
    check_same_rounds(symbolic, extracted);
    CHECK(symbolic.patterns == extracted.patterns);  // the same flow order too
    CHECK_FALSE(symbolic.lockstep_exact);
  }
}

TEST_CASE("symbolic ring rounds: the schedule's rounds with every chunk rounded up to the largest", "[rounds]") {
  for (Collective kind : {Collective::kAllReduce, Collective::kReduceScatter, Collective::kAllGather}) {
    REQUIRE(has_symbolic_rounds(kind, Algorithm::kRing));
    for (int64_t n : {600, 601}) {
      INFO(collective_name(kind) << ", n = " << n);
      const CollectiveRounds symbolic = collective_rounds(kind, Algorithm::kRing, 6, n, 4);
      const CollectiveRounds extracted = rounds_of(make_collective(kind, Algorithm::kRing, 6, n, 4));
      CHECK(symbolic.lockstep_exact);
      const size_t phases = kind == Collective::kAllReduce ? 2 : 1;
      REQUIRE(symbolic.rounds.size() == 5 * phases);
      REQUIRE(extracted.rounds.size() == 5 * phases);
      CHECK(symbolic.patterns == extracted.patterns);
      if (n == 600) check_same_rounds(symbolic, extracted);  // equal chunks: exactly the schedule's rounds
      for (size_t k = 0; k < symbolic.rounds.size(); ++k) {
        const bool reducing = kind == Collective::kReduceScatter || (kind == Collective::kAllReduce && k < 5);
        CHECK(symbolic.rounds[k].reduce_all == reducing);
        CHECK(extracted.rounds[k].reduce_all == reducing);
        for (size_t f = 0; f < 6; ++f) {
          CHECK(extracted.bytes_of(extracted.rounds[k], f) <= symbolic.rounds[k].bytes);
          CHECK(extracted.bytes_of(extracted.rounds[k], f) >= symbolic.rounds[k].bytes - 4);
        }
      }
    }
  }
}

TEST_CASE("symbolic hierarchical rounds equal the rounds of the hierarchical schedule", "[rounds]") {
  REQUIRE(has_symbolic_rounds(Collective::kAllReduce, Algorithm::kHierarchical));
  // Equal chunks everywhere (n a multiple of every rank count involved), so the ring's rounding does not show.
  const int64_t n = 2 * 3 * 4 * 5 * 7 * 8 * 100;
  for (const Algorithm intra :
       {Algorithm::kRing, Algorithm::kIntervalPairing, Algorithm::kHalvingDoubling, Algorithm::kDirect})
    for (const Algorithm inter :
         {Algorithm::kRing, Algorithm::kIntervalPairing, Algorithm::kHalvingDoubling, Algorithm::kDirect})
      for (const auto& [nodes, per_node] : {std::pair{2, 4}, std::pair{3, 2}, std::pair{4, 1}, std::pair{1, 4}}) {
        INFO(fmt::format("intra {}, inter {}, {} nodes x {}", algorithm_name(intra), algorithm_name(inter), nodes,
                         per_node));
        CollectiveOptions o;
        o.ranks_per_node = per_node;
        o.intra = intra;
        o.inter = inter;
        const int p = nodes * per_node;
        const CollectiveRounds symbolic =
            collective_rounds(Collective::kAllReduce, Algorithm::kHierarchical, p, n, 4, o);
        const CollectiveRounds extracted = rounds_of(hierarchical_allreduce(p, n, 4, o));
        if (inter == Algorithm::kHalvingDoubling && nodes == 3) {
          // 3 is not a power of two: halving-doubling's extra node idles in the middle rounds, so in the schedule
          // its all-gather starts early; the composition joins the phases at a round.
          CHECK(all_flows(symbolic) == all_flows(extracted));
          CHECK(symbolic.rounds.size() >= extracted.rounds.size());
          continue;
        }
        check_same_rounds(symbolic, extracted);
      }
}

TEST_CASE("hierarchical rounds with a pipelined inter tree keep every transfer, phases joined at a round", "[rounds]") {
  CollectiveOptions o;
  o.ranks_per_node = 2;
  o.inter = Algorithm::kDoubleBinaryTree;
  const CollectiveRounds symbolic = collective_rounds(Collective::kAllReduce, Algorithm::kHierarchical, 12, 4800, 4, o);
  const CollectiveRounds extracted = rounds_of(hierarchical_allreduce(12, 4800, 4, o));
  // The same multiset of transfers (src, dst, bytes, reduce) over all rounds, in at least as many rounds.
  CHECK(all_flows(symbolic) == all_flows(extracted));
  CHECK(symbolic.rounds.size() >= extracted.rounds.size());
}

TEST_CASE("compositions of rounds follow those of schedules", "[rounds]") {
  // parallel(remap(ring on {0,2}), remap(ring on {1,3})) then a direct all-reduce on all four.
  const Schedule a = remap(ring_allreduce(2, 800, 4), {0, 2}, 4), b = remap(ring_allreduce(2, 800, 4), {1, 3}, 4);
  const Schedule seq = sequence(schedules(parallel(schedules(Schedule(a), Schedule(b)), "pair"), direct_allreduce(4, 800, 4)), "s");
  const CollectiveRounds composed = sequence_rounds(
      {parallel_rounds(
           {remap_rounds(collective_rounds(Collective::kAllReduce, Algorithm::kRing, 2, 800, 4), {0, 2}, 4),
            remap_rounds(collective_rounds(Collective::kAllReduce, Algorithm::kRing, 2, 800, 4), {1, 3}, 4)}),
       collective_rounds(Collective::kAllReduce, Algorithm::kDirect, 4, 800, 4)});
  check_same_rounds(composed, rounds_of(seq));
  // Parts of different sizes make a byte table shared by the rounds that need it.
  const CollectiveRounds uneven = parallel_rounds(
      {remap_rounds(collective_rounds(Collective::kAllReduce, Algorithm::kRing, 2, 800, 4), {0, 2}, 4),
       remap_rounds(collective_rounds(Collective::kAllReduce, Algorithm::kRing, 2, 802, 4), {1, 3}, 4)});
  REQUIRE(uneven.rounds.size() == 2);
  CHECK(uneven.rounds[0].flow_bytes >= 0);
  CHECK(uneven.byte_tables.size() == 1);
  CHECK(uneven.rounds[1].flow_bytes == uneven.rounds[0].flow_bytes);
  CHECK(uneven.reduces(uneven.rounds[0], 0));
  CHECK_FALSE(uneven.reduces(uneven.rounds[1], 0));
}

TEST_CASE("symbolic hierarchical rounds of 65,536 ranks cost the rounds of one node and one lane", "[rounds]") {
  CollectiveOptions o;
  o.ranks_per_node = 8;
  const CollectiveRounds r =
      collective_rounds(Collective::kAllReduce, Algorithm::kHierarchical, 65536, 6'500'000, 4, o);
  CHECK(r.ranks == 65536);
  CHECK(r.rounds.size() == 7 + 2 * 8191 + 7);
  CHECK(r.patterns.size() == 2);  // the node rings (reduce-scatter and all-gather alike), the lane rings
  CHECK(r.byte_tables.size() <= 2);
}

TEST_CASE("symbolic interval-pairing rounds equal the rounds of its schedules", "[rounds]") {
  for (const Collective kind : {Collective::kAllReduce, Collective::kReduceScatter, Collective::kAllGather}) {
    REQUIRE(has_symbolic_rounds(kind, Algorithm::kIntervalPairing));
    for (int p = 1; p <= 40; ++p)
      for (const int64_t n : {int64_t{0}, int64_t{1}, int64_t{7}, int64_t{300}, int64_t{1001}}) {
        INFO(fmt::format("{} p = {} n = {}", collective_name(kind), p, n));
        const CollectiveRounds symbolic = collective_rounds(kind, Algorithm::kIntervalPairing, p, n, 4);
        const CollectiveRounds extracted = rounds_of(make_collective(kind, Algorithm::kIntervalPairing, p, n, 4));
        CHECK_FALSE(symbolic.lockstep_exact);
        check_same_rounds(symbolic, extracted);
      }
  }
}

TEST_CASE("symbolic double-binary-tree rounds equal the rounds of its schedule, flow order included", "[rounds]") {
  REQUIRE(has_symbolic_rounds(Collective::kAllReduce, Algorithm::kDoubleBinaryTree));
  std::vector<int> ranks;
  for (int p = 1; p <= 40; ++p) ranks.push_back(p);
  for (int p : {63, 64, 65, 100, 257}) ranks.push_back(p);
  for (int p : ranks)
    for (const int64_t n : {int64_t{0}, int64_t{1}, int64_t{7}, int64_t{300}, int64_t{1001}, int64_t{3000000}})
      for (const int chunks : {0, 1, 3, 16}) {
        INFO(fmt::format("p = {} n = {} chunks = {}", p, n, chunks));
        CollectiveOptions o;
        o.chunks = chunks;
        const CollectiveRounds symbolic =
            collective_rounds(Collective::kAllReduce, Algorithm::kDoubleBinaryTree, p, n, 4, o);
        const CollectiveRounds extracted = rounds_of(double_binary_tree_allreduce(p, n, 4, chunks));
        check_same_rounds(symbolic, extracted);
        CHECK(symbolic.patterns == extracted.patterns);
        CHECK(symbolic.byte_tables == extracted.byte_tables);
        CHECK_FALSE(symbolic.lockstep_exact);
      }
}
