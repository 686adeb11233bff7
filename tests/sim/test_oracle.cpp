// SimGrid against the analytical oracle (plan/oracle.hpp): on the contention-free platform, with CM02, cross-traffic
// off and TCP-gamma 0, every rank of every schedule of the registry (plan/collectives.hpp) finishes at EXACTLY the
// time the oracle computes (same double), for several rank counts and sizes. Each simulation runs in a forked
// child (one SimGrid engine per process) and sends back the raw bits of its doubles.
#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "core/error.hpp"
#include "plan/collectives.hpp"
#include "plan/oracle.hpp"
#include "sim/interpreter.hpp"

using namespace scaletwin;

namespace {

std::vector<double> simulate_forked(const plan::Schedule& s, double alpha, double bandwidth, const sim::StepCosts& c) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    const std::vector<double> finish = sim::run_schedule_contention_free(s, alpha, bandwidth, c);
    const auto bytes = static_cast<ssize_t>(finish.size() * sizeof(double));
    const bool ok = ::write(fds[1], finish.data(), static_cast<size_t>(bytes)) == bytes;
    ::_exit(ok ? 0 : 1);
  }
  ::close(fds[1]);
  std::vector<double> out(static_cast<size_t>(s.ranks));
  size_t got = 0;
  const size_t want = out.size() * sizeof(double);
  while (got < want) {
    const ssize_t n = ::read(fds[0], reinterpret_cast<char*>(out.data()) + got, want - got);
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  REQUIRE(got == want);
  return out;
}

struct Costs {
  double alpha, bandwidth, reduce, copy;
};

// Compares every rank's end; returns how many schedules were compared.
int compare_all(plan::Collective kind, const std::vector<int>& ranks, int64_t elements, const Costs& c) {
  int compared = 0;
  for (const plan::Algorithm algo : plan::collective_algorithms(kind)) {
    for (int p : ranks) {
      plan::CollectiveOptions opt;
      opt.servers = 2;
      opt.ranks_per_node = p % 2 == 0 ? 2 : 0;
      opt.root = p - 1;
      plan::Schedule s;
      try {
        s = plan::make_collective(kind, algo, p, elements, 4, opt);
      } catch (const InputError&) {
        continue;  // this algorithm does not take this p (its preconditions)
      }
      const plan::OracleResult oracle = plan::run_oracle(s, plan::UniformCostModel(c.alpha, c.bandwidth, c.reduce, c.copy));
      const std::vector<double> simulated = simulate_forked(s, c.alpha, c.bandwidth, sim::StepCosts{c.reduce, c.copy, 0.0});
      INFO(fmt::format("{} {} p={} elements={}", plan::collective_name(kind), plan::algorithm_name(algo), p, elements));
      for (size_t r = 0; r < simulated.size(); ++r) {
        INFO(fmt::format("rank {}: simulated {:.17g}, oracle {:.17g}", r, simulated[r], oracle.rank_end_s[r]));
        CHECK(simulated[r] == oracle.rank_end_s[r]);
      }
      ++compared;
    }
  }
  return compared;
}

const std::vector<int> kRanks = {2, 3, 4, 5, 8, 12};

}  // namespace

TEST_CASE("every all-reduce of the registry equals the oracle exactly on the contention-free platform", "[sim]") {
  CHECK(compare_all(plan::Collective::kAllReduce, kRanks, 1 << 20, {5e-6, 12.5e9, 40e9, 80e9}) > 10);
  CHECK(compare_all(plan::Collective::kAllReduce, {7, 16}, 1000, {2e-5, 1e9, 3e9, 6e9}) > 3);
}

TEST_CASE("every reduce-scatter, all-gather, reduce and broadcast equals the oracle exactly", "[sim]") {
  const Costs c{1.5e-6, 25e9, 100e9, 200e9};
  int compared = 0;
  for (plan::Collective k : {plan::Collective::kReduceScatter, plan::Collective::kAllGather, plan::Collective::kReduce,
                             plan::Collective::kBroadcast})
    compared += compare_all(k, kRanks, 3 << 18, c);
  CHECK(compared > 10);
}

TEST_CASE("parameter-server and custom schedules of the registry equal the oracle exactly", "[sim]") {
  int compared = 0;
  for (plan::Collective k : plan::all_collectives()) {
    if (k == plan::Collective::kAllReduce || k == plan::Collective::kReduceScatter ||
        k == plan::Collective::kAllGather || k == plan::Collective::kReduce || k == plan::Collective::kBroadcast)
      continue;
    compared += compare_all(k, {2, 4, 6}, 1 << 16, {1e-5, 1.25e9, 10e9, 20e9});
  }
  CHECK(compared > 0);
}
