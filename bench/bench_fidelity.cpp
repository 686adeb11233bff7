// Benchmark: the fast simulation mode (sim/fast/runner.hpp) against the message-level SimGrid runner on the same
// scenarios and GPU counts, side by side: wall and CPU seconds of each (the message level runs in a forked child:
// its CPU time is the child's), their ratio, and the relative difference of every prediction (iteration_s,
// compute_s, exposed_comm_s). Points above --message-max GPUs run in the fast mode only (wall, CPU, peak RSS).
//
//   bench_fidelity [--message-max P] [--nodes N] [--detail] SCENARIO:GPUS[,GPUS...] ...
//   (--nodes: override the scenarios' node count, for sweeps beyond them; --detail: every collective's time)
//   e.g. bench_fidelity scenarios/bsc-resnet50-ring.json:16,64 scenarios/dgx-h200-resnet50-ring.json:1024
#include <fmt/format.h>
#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "sim/predict.hpp"

using namespace scaletwin;

namespace {

struct Clock {
  std::chrono::steady_clock::time_point wall = std::chrono::steady_clock::now();
  double cpu = cpu_s();
  static double cpu_s() {
    rusage self{}, children{};
    ::getrusage(RUSAGE_SELF, &self);
    ::getrusage(RUSAGE_CHILDREN, &children);
    auto sec = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec); };
    return sec(self.ru_utime) + sec(self.ru_stime) + sec(children.ru_utime) + sec(children.ru_stime);
  }
  std::pair<double, double> elapsed() const {
    return {std::chrono::duration<double>(std::chrono::steady_clock::now() - wall).count(), cpu_s() - cpu};
  }
};

double rel(double fast, double message) { return message != 0.0 ? (fast - message) / message : fast - message; }

double peak_rss_mb() {
  rusage self{};
  ::getrusage(RUSAGE_SELF, &self);
  return static_cast<double>(self.ru_maxrss) / 1024.0;
}

}  // namespace

int main(int argc, char** argv) {
  int message_max = 256;
  bool detail = false;
  int nodes = 0;
  std::vector<std::pair<std::string, std::vector<int>>> cases;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--nodes" && i + 1 < argc) {
      nodes = std::atoi(argv[++i]);
      continue;
    }
    if (arg == "--detail") {
      detail = true;
      continue;
    }
    if (arg == "--message-max" && i + 1 < argc) {
      message_max = std::atoi(argv[++i]);
      continue;
    }
    const auto colon = arg.rfind(':');
    std::vector<int> gpus;
    if (colon != std::string::npos)
      for (size_t at = colon + 1; at < arg.size();) {
        const size_t comma = arg.find(',', at);
        gpus.push_back(std::atoi(arg.substr(at, comma - at).c_str()));
        at = comma == std::string::npos ? arg.size() : comma + 1;
      }
    cases.emplace_back(arg.substr(0, colon), gpus);
  }
  if (cases.empty()) {
    fmt::print(stderr, "usage: bench_fidelity [--message-max P] [--nodes N] [--detail] SCENARIO:GPUS[,GPUS...] ...\n");
    return 2;
  }
  fmt::print("{:<40} {:>6} {:>10} {:>10} {:>9} {:>9} {:>9} {:>8} {:>9} {:>9} {:>9}\n", "scenario", "gpus",
             "msg_iter_s", "fast_iter_s", "d_iter", "d_comp", "d_exposed", "msg_wall", "fast_wall", "fast_cpu",
             "cpu_ratio");
  double worst = 0.0;
  try {
    for (const auto& [path, gpus_list] : cases) {
      plan::Scenario scenario = plan::load_scenario(path);
      if (nodes > 0) scenario.nodes = nodes;
      for (int gpus : sim::sweep_of(scenario, gpus_list)) {
        const sim::Calibration calibration = sim::default_calibration();
        const sim::RunOptions run;
        const Clock f0;
        const report::PointResult fast = sim::simulate_point_forked(scenario, gpus, calibration, run, sim::Fidelity::kFast);
        const auto [fast_wall, fast_cpu] = f0.elapsed();
        if (gpus > message_max) {
          fmt::print("{:<40} {:>6} {:>10} {:>10.5f} {:>9} {:>9} {:>9} {:>8} {:>9.3f} {:>9.3f} {:>9}  ({}, peak RSS {:.0f} MB)\n",
                     scenario.name, gpus, "-", fast.iteration_s, "-", "-", "-", "-", fast_wall, fast_cpu, "-",
                     fast.fidelity, peak_rss_mb());
          continue;
        }
        const Clock m0;
        const report::PointResult msg = sim::simulate_point_forked(scenario, gpus, calibration, run, sim::Fidelity::kMessage);
        const auto [msg_wall, msg_cpu] = m0.elapsed();
        const double d = rel(fast.iteration_s, msg.iteration_s);
        worst = std::max(worst, std::abs(d));
        fmt::print("{:<40} {:>6} {:>10.5f} {:>10.5f} {:>+8.3f}% {:>+8.3f}% {:>+8.3f}% {:>8.3f} {:>9.3f} {:>9.3f} {:>9.1f}  ({})\n",
                   scenario.name, gpus, msg.iteration_s, fast.iteration_s, 100 * d,
                   100 * rel(fast.compute_s, msg.compute_s), 100 * rel(fast.exposed_comm_s, msg.exposed_comm_s),
                   msg_wall, fast_wall, fast_cpu, msg_cpu / std::max(fast_cpu, 1e-6), fast.fidelity);
        if (detail)
          for (size_t c = 0; c < std::min(msg.collectives.size(), fast.collectives.size()); ++c)
            fmt::print("    {:<36} {:>12.3e} B  message {:.6f} s  fast {:.6f} s  ({:+.3f}%)\n", msg.collectives[c].label,
                       msg.collectives[c].bytes, msg.collectives[c].seconds, fast.collectives[c].seconds,
                       100 * rel(fast.collectives[c].seconds, msg.collectives[c].seconds));
      }
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_fidelity: {}\n", e.what());
    return 1;
  }
  fmt::print("largest |difference| of iteration_s: {:.3f}%\n", 100 * worst);
  return 0;
}
