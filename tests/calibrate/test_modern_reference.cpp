// The published modern runs (../shared/reference/modern/throughput.json) against what predict would refuse: every
// run that was measured fits the training-memory lower bound (sim/memory_fit.hpp), so the bound refuses no batch
// that trains.
#include <catch2/catch.hpp>

#include <filesystem>

#include "calibrate/measurements.hpp"
#include "models/zoo.hpp"
#include "plan/iteration_plan.hpp"
#include "sim/memory_fit.hpp"
#include "sim/stacks.hpp"

using namespace scaletwin;

TEST_CASE("every published modern run fits the memory bound predict refuses points by", "[unit]") {
  const std::string reference = std::string(SCALETWIN_SOURCE_DIR) + "/../shared/reference/modern/throughput.json";
  if (!std::filesystem::exists(reference)) {
    WARN("skipped: " << reference << " is not there");
    return;
  }
  const std::vector<calibrate::MeasuredRun> runs = calibrate::load_measurements(reference);
  REQUIRE(runs.size() > 400);
  double tightest = 0.0;  // the largest share of its GPU's memory a run's bound takes
  std::string tightest_id;
  for (const calibrate::MeasuredRun& r : runs) {
    const plan::Scenario s = calibrate::scenario_of(r);
    const topology::ClusterSpec spec = plan::load_scenario_cluster_spec(s);
    const models::Model m = plan::load_scenario_model(s);
    const sim::Arithmetic a = sim::scenario_arithmetic(s);
    const int bytes = a.precision == plan::Precision::kFp16 || a.precision == plan::Precision::kBf16 ? 2 : 4;
    const double share = sim::training_memory_bound(m, s, bytes).total_bytes() / spec.node.device.memory_bytes;
    INFO(r.id << ": " << share);
    CHECK(share < 1.0);
    if (share > tightest) {
      tightest = share;
      tightest_id = r.id;
    }
    CHECK_NOTHROW(sim::check_memory_fit(s, m, spec.node));
  }
  // The bound is not vacuous: the fullest run's takes a sizeable share of its GPU.
  INFO(tightest_id);
  CHECK(tightest > 0.3);
}
