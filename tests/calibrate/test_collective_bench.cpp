// Collective benchmark readers (nccl-tests text in its real layout, bench_allreduce's table, our JSON) and the α-β
// fit, which must recover the latency and bandwidth a synthetic table was generated from.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "calibrate/collective_bench.hpp"
#include "core/error.hpp"

using namespace scaletwin;
using namespace scaletwin::calibrate;

namespace {

// nccl-tests all_reduce_perf output (2.13 layout: root and #wrong columns), 8 ranks on one node, times generated
// from t = 20 us + (2*7/8) n / 100 GB/s so that the fit has a known answer.
std::string nccl_sample() {
  std::string s =
      "# nThread 1 nGpus 1 minBytes 1048576 maxBytes 268435456 step: 4(factor) warmup iters: 5 iters: 20 agg iters: "
      "1 validation: 1 graph: 0\n#\n# Using devices\n";
  for (int r = 0; r < 8; ++r)
    s += fmt::format("#  Rank  {} Group  0 Pid  4242{} on    node01 device  {} [0x{:02x}] NVIDIA H200\n", r, r, r,
                     r + 16);
  s += "#\n#                                                              out-of-place                       in-place\n"
       "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw "
       "#wrong\n#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  "
       "(GB/s)\n";
  for (double n = 1048576; n <= 268435456; n *= 4) {
    const double t_us = 20.0 + 1.75 * n / 100e9 * 1e6;
    const double algbw = n / (t_us * 1e-6) / 1e9;
    s += fmt::format("{:>12.0f} {:>13.0f}     float     sum      -1 {:>8.2f} {:>7.2f} {:>7.2f}      0 {:>8.2f} {:>7.2f} "
                     "{:>7.2f}      0\n",
                     n, n / 4, t_us, algbw, algbw * 1.75, t_us, algbw, algbw * 1.75);
  }
  s += "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 61.2\n#\n";
  return s;
}

}  // namespace

TEST_CASE("nccl-tests text: ranks, sizes, times and the bus factor", "[unit]") {
  const CollectiveBench b = parse_nccl_tests_text(nccl_sample(), "nccl.txt");
  CHECK(b.ranks == 8);
  CHECK(b.format == "nccl-tests");
  CHECK(b.collective == "all_reduce");
  REQUIRE(b.samples.size() == 5);
  CHECK(b.samples[0].bytes == 1048576);
  CHECK(b.samples[0].time_s == Approx((20.0 + 1.75 * 1048576 / 100e9 * 1e6) * 1e-6).epsilon(1e-3));
  CHECK(b.bus_factor == Approx(1.75).epsilon(1e-3));
  const AlphaBeta ab = fit_alpha_beta(b, "");
  CHECK(ab.points == 5);
  CHECK(ab.latency_s == Approx(20e-6).epsilon(0.02));
  CHECK(ab.bus_bandwidth_Bps == Approx(100e9).epsilon(0.01));
}

TEST_CASE("nccl-tests text without a header is an InputError naming the file", "[unit]") {
  try {
    parse_nccl_tests_text("hello\n1 2 3\n", "broken.txt");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.file() == "broken.txt");
  }
}

TEST_CASE("bench_allreduce's table: ring rows and the MPI baseline", "[unit]") {
  const std::string text =
      "# all-reduce of float32, 2 ranks, segments of 1024 KiB; GB/s = 1e9 B/s; algbw = bytes/time, busbw = "
      "algbw·2(p-1)/p; time = best of 15 rounds\n"
      "#      MiB          algorithm    time_us      algbw      busbw  mpi_busbw   ratio  check\n"
      "         1               ring      310.0      3.383      3.383      3.100    0.92     ok\n"
      "         1      MPI_Allreduce      338.2      3.100      3.100\n"
      "         2               ring      560.0      3.745      3.745      3.500    0.93     ok\n"
      "         4               ring     1060.0      3.957      3.957      3.900    0.98     ok\n";
  const CollectiveBench b = parse_bench_allreduce_text(text, "bench.txt");
  CHECK(b.ranks == 2);
  CHECK(b.bus_factor == 1.0);
  REQUIRE(b.samples.size() == 4);
  CHECK(b.samples[1].algorithm == "MPI_Allreduce");
  // ring rows: t = 60 us + n / 4.194304 GB/s exactly (1 MiB: 60 + 250 = 310 us)
  const AlphaBeta ab = fit_alpha_beta(b, "ring");
  CHECK(ab.points == 3);
  CHECK(ab.latency_s == Approx(60e-6).epsilon(1e-6));
  CHECK(ab.bus_bandwidth_Bps == Approx(1048576 / 250e-6).epsilon(1e-6));
}

TEST_CASE("collective bench JSON: strict, time in us or s", "[unit]") {
  const CollectiveBench b = parse_collective_bench_json(
      R"({"format": "scaletwin-collective-bench/1", "collective": "all_reduce", "ranks": 4,
          "results": [{"bytes": 1000, "time_us": 10}, {"bytes": 2000, "time_s": 2e-5}]})",
      "b.json");
  CHECK(b.ranks == 4);
  CHECK(b.bus_factor == 1.5);
  CHECK(b.samples[1].time_s == 2e-5);
  CHECK_THROWS_AS(parse_collective_bench_json(R"({"format": "scaletwin-collective-bench/1", "ranks": 4,
                  "results": [{"bytes": 1, "time_us": 1, "oops": 2}]})", "b.json"), InputError);
}
