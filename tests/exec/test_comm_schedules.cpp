// Every schedule of the collective registry, run by the MPI interpreter on the world's ranks (CTest runs this
// binary for 1..8 ranks): all-reduces are bit-identical to MPI_Allreduce on integer-valued float and int32 data,
// and every collective (reduce-scatter, all-gather, reduce, broadcast, parameter server, hierarchical, hybrid)
// leaves each rank's buffer as its data model promises, for sizes that do and do not divide by p (and n < p).
#include <catch2/catch.hpp>

#include <algorithm>
#include <optional>

#include "plan/collectives.hpp"
#include "test_comm_support.hpp"

namespace scaletwin::test {
namespace {

const std::vector<int64_t> kSizes = {1, 3, 8, 61, 1000, 4099};

// The options a kind × algorithm needs on `p` world ranks, or none if the combination does not fit: hierarchical on
// two "nodes" when p is even (one rank per node otherwise), parameter servers with a quarter of the ranks serving.
std::vector<plan::CollectiveOptions> options_for(plan::Collective kind, plan::Algorithm algorithm, int p) {
  plan::CollectiveOptions o;
  o.servers = std::max(1, p / 4);
  // A root other than 0 where there is one (the registry checks `root` against what each algorithm roots at).
  if (kind == plan::Collective::kReduce || kind == plan::Collective::kBroadcast) o.root = p - 1;
  if (algorithm != plan::Algorithm::kHierarchical) return {o};
  std::vector<plan::CollectiveOptions> all;
  for (int per_node : {p % 2 == 0 ? p / 2 : 1, p}) {
    o.ranks_per_node = per_node;
    for (const plan::Algorithm inner : {plan::Algorithm::kRing, plan::Algorithm::kHalvingDoubling}) {
      o.intra = inner;
      o.inter = inner;
      all.push_back(o);
    }
  }
  return all;
}

// The schedule on the world's ranks: parameter-server schedules add server ranks to `ranks` workers, so ask for as
// many workers as leave room for them; nullopt when the world is too small.
std::optional<plan::Schedule> make_for_world(plan::Collective kind, plan::Algorithm algorithm, int64_t n,
                                             const plan::CollectiveOptions& o) {
  const int p = world_size();
  plan::Schedule s = plan::make_collective(kind, algorithm, p, n, 4, o);
  if (s.ranks <= p) return s;
  const int workers = p - (s.ranks - p);
  if (workers < 1) return std::nullopt;
  plan::CollectiveOptions fewer = o;
  fewer.root = std::min(o.root, workers - 1);
  return plan::make_collective(kind, algorithm, workers, n, 4, fewer);
}

struct Case {
  std::string label;
  plan::Schedule schedule;
};

std::vector<Case> every_registry_case() {
  std::vector<Case> cases;
  for (plan::Collective kind : plan::all_collectives())
    for (const plan::Algorithm algorithm : plan::collective_algorithms(kind))
      for (const auto& o : options_for(kind, algorithm, world_size()))
        for (int64_t n : kSizes) {
          auto s = make_for_world(kind, algorithm, n, o);
          if (!s) continue;
          const std::string label = std::string(plan::collective_name(kind)) + " " + plan::algorithm_name(algorithm) +
                                    " (intra " + plan::algorithm_name(o.intra) + ", " +
                                    std::to_string(o.ranks_per_node) + " per node) on " + std::to_string(s->ranks) +
                                    " ranks, n = " + std::to_string(n);
          cases.push_back({label, std::move(*s)});
        }
  return cases;
}

}  // namespace

TEST_CASE("every all-reduce schedule is bit-identical to MPI_Allreduce on integer-valued data", "[mpi][comm]") {
  exec::ScheduleRunner runner(MPI_COMM_WORLD);
  int checked = 0;
  for (const Case& c : every_registry_case()) {
    if (c.schedule.collective != plan::Collective::kAllReduce || c.schedule.ranks != world_size()) continue;
    INFO(c.label);
    CHECK(differences_from_mpi_allreduce<float>(runner, c.schedule) == 0);
    CHECK(differences_from_mpi_allreduce<int32_t>(runner, c.schedule) == 0);
    ++checked;
  }
  // ring, interval_pairing, halving_doubling, double_binary_tree, direct, hierarchical × sizes
  CHECK(checked >= 6 * static_cast<int>(kSizes.size()));
}

TEST_CASE("every registry schedule meets its data model under MPI (float32, int32, float64)", "[mpi][comm]") {
  exec::ScheduleRunner runner(MPI_COMM_WORLD);
  int checked = 0;
  for (const Case& c : every_registry_case()) {
    INFO(c.label);
    CHECK(run_and_check<float>(runner, c.schedule) == 0);
    CHECK(run_and_check<int32_t>(runner, c.schedule) == 0);
    CHECK(run_and_check<double>(runner, c.schedule) == 0);
    ++checked;
  }
  CHECK(checked > 0);
  CHECK(runner.in_flight() == 0);
}

TEST_CASE("reduce-scatter leaves each rank its reduced slice and all-gather assembles every slice", "[mpi][comm]") {
  exec::ScheduleRunner runner(MPI_COMM_WORLD);
  const int p = world_size();
  for (const plan::Algorithm algorithm : {plan::Algorithm::kRing, plan::Algorithm::kIntervalPairing,
                                          plan::Algorithm::kHalvingDoubling, plan::Algorithm::kDirect}) {
    for (int64_t n : kSizes) {
      INFO(plan::algorithm_name(algorithm) << " n = " << n);
      const auto rs = plan::make_collective(plan::Collective::kReduceScatter, algorithm, p, n, 4);
      const auto ag = plan::make_collective(plan::Collective::kAllGather, algorithm, p, n, 4);
      REQUIRE(rs.goal.at(0) == plan::Goal::kReducedSlice);
      REQUIRE(ag.initial.at(0) == plan::InitialData::kOwnSlice);
      CHECK(run_and_check<float>(runner, rs) == 0);
      CHECK(run_and_check<int32_t>(runner, ag) == 0);
      // Closed form on the slice: the sum over ranks of contribution(r, i).
      std::vector<float> buffer = initial_buffer<float>(rs, world_rank());
      runner.run(rs, std::span<float>(buffer));
      int64_t bad = 0;
      const auto me = static_cast<size_t>(world_rank());
      for (int64_t i = rs.slice_offset[me]; i < rs.slice_offset[me] + rs.slice_length[me]; ++i) {
        float sum = 0;
        for (int r = 0; r < p; ++r) sum += contribution<float>(r, i);
        if (buffer[static_cast<size_t>(i)] != sum) ++bad;
      }
      CHECK(sum_over_ranks(bad) == 0);
    }
  }
}

}  // namespace scaletwin::test
