// Compositions: remap onto a group, shift onto a slice, parallel on disjoint channels, sequence with deps from
// the end of one part to the start of the next; composed schedules verify, and broken compositions do not.
#include <catch2/catch.hpp>

#include "plan/collectives.hpp"
#include "plan/compose.hpp"
#include "plan/oracle.hpp"
#include "plan/verify.hpp"

using namespace scaletwin::plan;

TEST_CASE("remap and shift: a ring on ranks 1 3 4 of 6 and on elements 10 to 40 of 50", "[collective][compose]") {
  Schedule s = remap(shift(ring_allreduce(3, 30, 4), 10, 50), {1, 3, 4}, 6);
  CHECK(s.ranks == 6);
  CHECK(s.elements == 50);
  CHECK(s.programs[0].steps.empty());
  for (const Step& st : s.programs[3].steps) {
    CHECK(st.offset >= 10);
    CHECK(st.offset + st.length <= 40);
    CHECK((st.peer == 1 || st.peer == 4));
  }
  // The data model of the whole: ranks 1, 3, 4 contribute on [10, 40) and must hold the sum there.
  Schedule::DataRegion region;
  region.offset = 10;
  region.length = 30;
  region.initial.assign(6, InitialData::kNone);
  region.goal.assign(6, Goal::kAny);
  for (int r : {1, 3, 4}) {
    region.initial[static_cast<size_t>(r)] = InitialData::kOwn;
    region.goal[static_cast<size_t>(r)] = Goal::kReducedAll;
  }
  s.regions = {region};
  CHECK(verify(s).ok);
  s.regions[0].initial[0] = InitialData::kOwn;  // rank 0 claims to contribute but takes no part
  CHECK_FALSE(verify(s).ok);
}

TEST_CASE("sequence: the next part starts after the previous one ends on every rank", "[collective][compose]") {
  const Schedule a = ring_reduce_scatter(4, 40, 4), b = ring_allgather(4, 40, 4);
  const Schedule s = sequence(schedules(Schedule(a), Schedule(b)), "rs+ag");
  for (int r = 0; r < 4; ++r) {
    const auto& steps = s.programs[static_cast<size_t>(r)].steps;
    const size_t first_b = a.programs[static_cast<size_t>(r)].steps.size();
    REQUIRE(steps.size() == first_b + b.programs[static_cast<size_t>(r)].steps.size());
    for (size_t i = first_b; i < steps.size(); ++i)
      for (int d : steps[i].deps) CHECK(d < static_cast<int>(i));
    CHECK_FALSE(steps[first_b].deps.empty());
    for (int d : steps[first_b].deps) CHECK(d >= static_cast<int>(first_b) - 2);  // the RS's last round
  }
  CHECK(verify(s).rounds == 6);
  // Same ranks: the oracle adds the two parts' times exactly.
  const UniformCostModel cost(1e-6, 1e9, 1e10, 1e10);
  CHECK(run_oracle(s, cost).time_s ==
        Approx(run_oracle(a, cost).time_s + run_oracle(b, cost).time_s).epsilon(1e-12));
}

TEST_CASE("parallel: two all-reduces on the two halves on disjoint channels", "[collective][compose]") {
  Schedule s = parallel(
      schedules(shift(ring_allreduce(5, 20, 4), 0, 45), shift(interval_pairing_allreduce(5, 25, 4), 20, 45)),
      "two halves");
  CHECK(s.channels == 2);
  set_data_model(s, Collective::kAllReduce, InitialData::kOwn, Goal::kReducedAll);
  const VerifyResult v = verify(s);
  INFO(v.error);
  CHECK(v.ok);
  CHECK(v.rounds == 8);  // the longer of the two: ring's 2(p-1)
  // The second part's steps moved to channel 1 (program order keeps FIFO matching within each part anyway).
  for (const auto& program : s.programs)
    for (const Step& st : program.steps) CHECK(st.channel == (st.offset < 20 ? 0 : 1));
}

TEST_CASE("hierarchical and hybrid are compositions that verify", "[collective][compose]") {
  CollectiveOptions o;
  o.ranks_per_node = 4;
  o.intra = Algorithm::kHalvingDoubling;
  o.inter = Algorithm::kIntervalPairing;
  const Schedule h = make_collective(Collective::kAllReduce, Algorithm::kHierarchical, 12, 1000, 4, o);
  CHECK(verify(h).ok);
  const Schedule hy = hybrid_traffic(6, 600, 4, Algorithm::kRing);
  CHECK(hy.regions.size() == 2);
  CHECK(hy.elements == 1200);
  const VerifyResult v = verify(hy);
  CHECK(v.ok);
  CHECK(v.rounds == 10);
  CHECK(v.max_bytes_sent_per_rank == 2 * 5 * 100 * 4);
}
