// Network calibration from collective benchmarks users already have: nccl-tests output (its text table, or the
// JSON below), and the executor's own bench/bench_allreduce table.
//
// Each sample is one message size: bytes, time, and the bus factor that turns the algorithm bandwidth into the
// bus bandwidth (nccl-tests: busbw = algbw * 2(p-1)/p for all-reduce, (p-1)/p for all-gather and reduce-scatter).
// The α-β fit, weighted by relative error, is
//
//   t(n) = a + factor * n / B_bus         a = steps * per-step latency, steps = 2(p-1) for the ring all-reduce
//
// and the link factors follow by comparing with what the cluster file says of the ring's slowest neighbour
// route (block placement of the ranks): bandwidth_factor = B_bus / route bottleneck (after removing the time the
// simulator spends reducing, 1.5 n / (memory bandwidth * memory efficiency) per byte of factor * n, for
// all-reduce), latency_factor = per-step latency / route latency.
//
// JSON (scaletwin-collective-bench/1; nccl-tests' own JSON output can be converted to it):
//   {"format": "scaletwin-collective-bench/1", "collective": "all_reduce", "ranks": 8,
//    "results": [{"bytes": 1048576, "time_us": 85.2}, ...]}          ("time_s" also accepted)
#pragma once

#include <string>
#include <vector>

#include "sim/calibration.hpp"
#include "topology/cluster.hpp"

namespace scaletwin::calibrate {

struct CollectiveSample {
  std::string algorithm;  // bench_allreduce: "ring", "MPI_Allreduce", ...; nccl-tests: "nccl"
  double bytes = 0.0;
  double time_s = 0.0;
};

struct CollectiveBench {
  std::string file;
  std::string format;  // "nccl-tests", "bench_allreduce", "json"
  std::string collective = "all_reduce";
  int ranks = 0;
  double bus_factor = 0.0;  // busbw / algbw
  std::vector<CollectiveSample> samples;
};

CollectiveBench parse_nccl_tests_text(const std::string& text, const std::string& file);
CollectiveBench parse_bench_allreduce_text(const std::string& text, const std::string& file);
CollectiveBench parse_collective_bench_json(const std::string& text, const std::string& file);
// Reads a file and picks the parser from its content.
CollectiveBench load_collective_bench(const std::string& path);

struct AlphaBeta {
  double latency_s = 0.0;        // a: the size-independent part of one collective
  double bus_bandwidth_Bps = 0.0;  // B_bus
  int points = 0;
};

// Fits t = a + bus_factor * n / B_bus over the samples of `algorithm` ("" = all samples), a >= 0.
AlphaBeta fit_alpha_beta(const CollectiveBench& bench, const std::string& algorithm);

struct LinkFit {
  sim::LinkClass link = sim::LinkClass::kNetwork;
  double latency_factor = 1.0;
  double bandwidth_factor = 1.0;
  AlphaBeta measured;
  double route_latency_s = 0.0;
  double route_bandwidth_Bps = 0.0;
};

// Link factors for the class of the ring's slowest neighbour route on `cluster`; `calibration` gives the memory
// efficiency used to remove the reduction time.
LinkFit fit_link(const CollectiveBench& bench, const std::string& algorithm, const topology::Cluster& cluster,
                 const sim::Calibration& calibration);

}  // namespace scaletwin::calibrate
