// Every scenario of scenarios/ simulates: its largest sweep point of at most 16 GPUs, through load_scenario,
// lower and SimGrid (a forked child each), gives a consistent point.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>

#include "sim/predict.hpp"

using namespace scaletwin;

TEST_CASE("every scenario of scenarios/ simulates and gives a consistent point", "[sim]") {
  int simulated = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(SCALETWIN_SOURCE_DIR) + "/scenarios")) {
    if (entry.path().extension() != ".json") continue;
    const plan::Scenario s = plan::load_scenario(entry.path().string());
    std::vector<int> sweep = sim::sweep_of(s, {});
    int gpus = sweep.front();
    for (int g : sweep)
      if (g <= 16) gpus = std::max(gpus, g);
    sim::RunOptions opt;
    opt.iterations = 2;
    opt.warmup = 1;
    INFO(entry.path().filename().string() << " at " << gpus << " GPUs");
    const report::PointResult p = sim::simulate_point_forked(s, gpus, sim::default_calibration(), opt);
    CHECK(p.gpus == gpus);
    CHECK(p.images_per_sec > 0.0);
    CHECK(p.compute_s > 0.0);
    CHECK(p.iteration_s >= p.compute_s * (1 - 1e-12));
    CHECK(p.exposed_comm_s >= 0.0);
    CHECK(p.plan_hash.size() == 16);
    if (p.sync == "sync") {  // async: iteration_s is the mean over workers, exposed is the critical worker's own
      CHECK(p.images_per_sec == Approx(gpus * s.batch_per_gpu / p.iteration_s).epsilon(1e-9));
      CHECK(p.exposed_comm_s == Approx(p.iteration_s - p.compute_s).margin(1e-12));
    }
    ++simulated;
  }
  CHECK(simulated >= 20);
}
