// Benchmark: wall time of the message-level SimGrid simulation of one all-reduce against the analytical oracle
// walking the same schedule, for growing rank counts; prints both times, their ratio, and the two predicted
// times (equal on the contention-free platform). The baseline the fast mode of issue 5 will be compared with.
//
//   bench_sim_collectives [ALGORITHM] [BYTES] [P...]     default: ring 100000000 16 64 256
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "plan/collectives.hpp"
#include "plan/oracle.hpp"
#include "sim/interpreter.hpp"

using namespace scaletwin;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Simulates in a child (one SimGrid engine per process); returns {simulated time, wall seconds}.
std::pair<double, double> simulate(const plan::Schedule& s, double alpha, double bw, double reduce) {
  int fds[2];
  if (::pipe(fds) != 0) std::exit(3);
  std::fflush(stdout);  // the child must not print our buffered lines again
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    double end = 0.0;
    for (double f : sim::run_schedule_contention_free(s, alpha, bw, sim::StepCosts{reduce, 1e300, 0.0}))
      end = std::max(end, f);
    const bool ok = ::write(fds[1], &end, sizeof end) == static_cast<ssize_t>(sizeof end);
    ::_exit(ok ? 0 : 1);
  }
  ::close(fds[1]);
  double end = -1.0;
  if (::read(fds[0], &end, sizeof end) != static_cast<ssize_t>(sizeof end)) end = -1.0;
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return {end, seconds_since(t0)};
}

}  // namespace

int main(int argc, char** argv) {
  const plan::Algorithm algo = plan::algorithm_from_name(
      argc > 1 ? argv[1] : "ring", plan::collective_algorithms(plan::Collective::kAllReduce), "", "algorithm");
  const double bytes = argc > 2 ? std::atof(argv[2]) : 100e6;
  std::vector<int> ranks;
  for (int i = 3; i < argc; ++i) ranks.push_back(std::atoi(argv[i]));
  if (ranks.empty()) ranks = {16, 64, 256};
  const double alpha = 5e-6, bw = 12.5e9, reduce = 50e9;
  fmt::print("{:>6} {:>10} {:>14} {:>14} {:>12} {:>12} {:>8}\n", "ranks", "steps", "simulated_s", "oracle_s",
             "simgrid_wall", "oracle_wall", "ratio");
  for (int p : ranks) {
    const plan::Schedule s = plan::make_collective(plan::Collective::kAllReduce, algo, p,
                                                   static_cast<int64_t>(bytes / 4), 4);
    const auto t0 = std::chrono::steady_clock::now();
    const plan::OracleResult o = plan::run_oracle(s, plan::UniformCostModel(alpha, bw, reduce, 1e300));
    const double oracle_wall = seconds_since(t0);
    const auto [simulated, wall] = simulate(s, alpha, bw, reduce);
    fmt::print("{:>6} {:>10} {:>14.9f} {:>14.9f} {:>11.3f}s {:>11.4f}s {:>7.0f}x\n", p, s.total_steps(), simulated,
               o.time_s, wall, oracle_wall, wall / std::max(oracle_wall, 1e-9));
  }
  return 0;
}
