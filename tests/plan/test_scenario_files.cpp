// Every scenario shipped in scenarios/ loads, and lowers to a plan for every GPU count of its sweep.
#include <catch2/catch.hpp>

#include <filesystem>

#include "plan/iteration_plan.hpp"

using namespace scaletwin;

TEST_CASE("every shipped scenario loads and lowers for its whole sweep", "[scenario][lower]") {
  namespace fs = std::filesystem;
  int files = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(SCALETWIN_SOURCE_DIR) / "scenarios")) {
    if (entry.path().extension() != ".json") continue;
    ++files;
    INFO(entry.path().string());
    const plan::Scenario s = plan::load_scenario(entry.path().string());
    const models::Model model = plan::load_scenario_model(s);
    REQUIRE_FALSE(s.sweep_gpus.empty());
    for (int gpus : s.sweep_gpus) {
      INFO("gpus " << gpus);
      // Above 64 GPUs predict lowers schedule shells (fast fidelity); materialising every step is O(GPUs²).
      plan::LowerOptions options;
      options.materialize_schedules = gpus <= 64;
      const plan::IterationPlan p = plan::lower(s, model, plan::load_scenario_cluster(s, gpus), gpus, options);
      CHECK(p.workers == gpus);
      CHECK(p.global_batch == gpus * s.batch_per_gpu);
    }
  }
  CHECK(files >= 30);
}
