// Benchmark: our all-reduce schedules run by the MPI interpreter against MPI_Allreduce, measured in the same run.
//
//   mpirun --allow-run-as-root -np 2 build/bench/bench_allreduce [--min-mib 1] [--max-mib 64] [--algorithms a,b]
//
// For each size (powers of two from min to max MiB of floats) and each algorithm of the registry named (default
// ring, interval_pairing, halving_doubling) it prints the algorithm bandwidth and bus bandwidth as nccl-tests
// defines them (algbw = bytes / time, busbw = algbw · 2(p−1)/p) and the ratio ours / MPI_Allreduce (the target is
// ≥ 0.9). Rounds alternate between MPI and ours so that both see the same machine load; the time of a round is the
// slowest rank's, and the best round counts (on a shared machine other jobs only ever add time). Like nccl-tests, every run checks correctness: our result must be
// bit-identical to MPI_Allreduce's on integer-valued data.
#include <fmt/core.h>

#include <algorithm>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "exec/comm/comm.hpp"
#include "exec/comm/mpi_check.hpp"
#include "plan/collectives.hpp"

namespace {

using scaletwin::exec::ScheduleRunner;

constexpr int kRounds = 15;

struct Options {
  int min_mib = 1;
  int max_mib = 64;
  int64_t segment_kib = ScheduleRunner::kDefaultSegmentBytes >> 10;
  std::vector<scaletwin::plan::Algorithm> algorithms = {scaletwin::plan::Algorithm::kRing,
                                                        scaletwin::plan::Algorithm::kIntervalPairing,
                                                        scaletwin::plan::Algorithm::kHalvingDoubling};
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i];
    const std::string value = argv[i + 1];
    if (key == "--min-mib") {
      o.min_mib = std::stoi(value);
    } else if (key == "--max-mib") {
      o.max_mib = std::stoi(value);
    } else if (key == "--segment-kib") {
      o.segment_kib = std::stoll(value);
    } else if (key == "--algorithms") {
      o.algorithms.clear();
      std::stringstream list(value);
      for (std::string a; std::getline(list, a, ',');)
        o.algorithms.push_back(scaletwin::plan::algorithm_from_name(
            a, scaletwin::plan::collective_algorithms(scaletwin::plan::Collective::kAllReduce), "", "--algorithms"));
    } else {
      throw scaletwin::InputError("", key, "--min-mib N, --max-mib N, --segment-kib N or --algorithms a,b,c");
    }
  }
  return o;
}

// Seconds per all-reduce of one round of `iterations`, the slowest rank's.
template <class F>
double time_round(int iterations, F&& allreduce_once) {
  ST_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  const double start = MPI_Wtime();
  for (int i = 0; i < iterations; ++i) allreduce_once();
  double elapsed = (MPI_Wtime() - start) / iterations;
  ST_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &elapsed, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
  return elapsed;
}

double best(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }

// Our result against MPI_Allreduce's on integer-valued data: the number of differing elements over all ranks.
int64_t check_against_mpi(ScheduleRunner& runner, const scaletwin::plan::Schedule& s, int rank) {
  std::vector<float> ours(static_cast<size_t>(s.elements));
  for (size_t i = 0; i < ours.size(); ++i) ours[i] = static_cast<float>(static_cast<int64_t>(i * 7 + rank * 13) % 63 - 31);
  std::vector<float> theirs = ours;
  runner.run(s, std::span<float>(ours));
  scaletwin::exec::mpi_allreduce_baseline(std::span<float>(theirs), MPI_COMM_WORLD);
  int64_t differ = 0;
  for (size_t i = 0; i < ours.size(); ++i) differ += std::memcmp(&ours[i], &theirs[i], sizeof(float)) != 0;
  ST_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &differ, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD));
  return differ;
}

int run_benchmark(const Options& o) {
  ScheduleRunner runner(MPI_COMM_WORLD, {}, o.segment_kib << 10);
  const int p = runner.comm_size();
  const int rank = runner.comm_rank();
  const double bus_factor = p > 1 ? 2.0 * (p - 1) / p : 0.0;
  if (rank == 0) {
    fmt::print("# all-reduce of float32, {} ranks, segments of {} KiB; GB/s = 1e9 B/s; algbw = bytes/time, "
               "busbw = algbw·2(p-1)/p; time = best of {} rounds\n", p, o.segment_kib, kRounds);
    fmt::print("# {:>8} {:>18} {:>10} {:>10} {:>10} {:>10} {:>7} {:>6}\n", "MiB", "algorithm", "time_us", "algbw",
               "busbw", "mpi_busbw", "ratio", "check");
  }
  int64_t wrong_total = 0;
  for (int mib = o.min_mib; mib <= o.max_mib; mib *= 2) {
    const int64_t n = int64_t{mib} * (1 << 20) / 4;
    const int64_t bytes = n * 4;
    std::vector<float> buffer(static_cast<size_t>(n), 0.0f);  // zeros: repeated sums stay finite
    const int iterations = std::max(1, 16 / mib);  // short rounds: some escape the other jobs on a shared machine
    for (const scaletwin::plan::Algorithm algorithm : o.algorithms) {
      const auto schedule = scaletwin::plan::make_collective(scaletwin::plan::Collective::kAllReduce, algorithm, p,
                                                             n, 4);
      const auto ours_once = [&] { runner.run(schedule, std::span<float>(buffer)); };
      const auto mpi_once = [&] { scaletwin::exec::mpi_allreduce_baseline(std::span<float>(buffer), MPI_COMM_WORLD); };
      ours_once();
      mpi_once();
      std::vector<double> ours_s;
      std::vector<double> mpi_s;
      for (int r = 0; r < kRounds; ++r) {
        mpi_s.push_back(time_round(iterations, mpi_once));
        ours_s.push_back(time_round(iterations, ours_once));
      }
      const double ours = best(ours_s);
      const double mpi = best(mpi_s);
      const int64_t wrong = check_against_mpi(runner, schedule, rank);
      wrong_total += wrong;
      const double algbw = static_cast<double>(bytes) / ours / 1e9;
      const double mpi_algbw = static_cast<double>(bytes) / mpi / 1e9;
      if (rank == 0) {
        fmt::print("  {:>8} {:>18} {:>10.1f} {:>10.3f} {:>10.3f} {:>10.3f} {:>7.2f} {:>6}\n", mib,
                   scaletwin::plan::algorithm_name(algorithm), ours * 1e6, algbw, algbw * bus_factor,
                   mpi_algbw * bus_factor, mpi / ours, wrong == 0 ? "ok" : "WRONG");
        if (algorithm == o.algorithms.front())
          fmt::print("  {:>8} {:>18} {:>10.1f} {:>10.3f} {:>10.3f}\n", mib, "MPI_Allreduce", mpi * 1e6, mpi_algbw,
                     mpi_algbw * bus_factor);
      }
    }
  }
  if (rank == 0 && wrong_total != 0) fmt::print("# WRONG results: {} elements differ from MPI_Allreduce\n", wrong_total);
  return wrong_total == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  scaletwin::exec::configure_idle_naps(scaletwin::exec::ranks_on_node(MPI_COMM_WORLD), 1);  // as the trainer: naps only where cores are short
  return scaletwin::exec::run_or_abort(MPI_COMM_WORLD, [&] {
    const int code = run_benchmark(parse(argc, argv));
    MPI_Finalize();
    return code;
  });
}
