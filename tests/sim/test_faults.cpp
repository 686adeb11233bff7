// What-if faults (issue 10) in the simulator: a straggler slows synchronous schemes by about its slowdown and an
// asynchronous parameter server much less; a degraded inter-node link hurts a flat ring more than the
// hierarchical all-reduce; a failed NVSwitch port is routed around over PCIe (slower, not broken) and a GPU cut
// off from everything is a partitioned cluster (InputError); both fidelities apply the same faults.
#include <catch2/catch.hpp>

#include <string>

#include "core/error.hpp"
#include "plan/scenario.hpp"
#include "sim/predict.hpp"

using namespace scaletwin;

namespace {

plan::Scenario scenario(const std::string& cluster, int nodes, int gpus_per_node, const Json& scheme,
                        const Json& faults) {
  Json j = {{"name", "faults"},    {"model", "resnet18_cifar"}, {"cluster", cluster}, {"nodes", nodes},
            {"gpus_per_node", gpus_per_node}, {"batch_per_gpu", 32}, {"scheme", scheme}};
  if (!faults.empty()) j["faults"] = faults;
  return plan::parse_scenario(j, "test_faults.json");
}

report::PointResult point(const plan::Scenario& s, int gpus, sim::Fidelity fidelity = sim::Fidelity::kMessage) {
  sim::RunOptions opt;
  opt.iterations = 2;
  return sim::simulate_point_forked(s, gpus, sim::default_calibration(), opt, fidelity);
}

const Json kRing = {{"name", "allreduce"}, {"algorithm", "ring"}};

}  // namespace

TEST_CASE("a straggler slows a synchronous scheme by about its slowdown and an asynchronous server much less",
          "[sim]") {
  const Json straggler = Json::array({{{"kind", "straggler"}, {"gpu", 3}, {"slowdown", 1.5}}});
  const Json async_ps = {{"name", "ps"}, {"mode", "async"}, {"servers", 2}};
  const double ring_healthy = point(scenario("bsc-minotauro-k80", 2, 4, kRing, Json::array()), 8).images_per_sec;
  const report::PointResult ring_slow = point(scenario("bsc-minotauro-k80", 2, 4, kRing, straggler), 8);
  const double async_healthy = point(scenario("bsc-minotauro-k80", 2, 4, async_ps, Json::array()), 8).images_per_sec;
  const double async_slow = point(scenario("bsc-minotauro-k80", 2, 4, async_ps, straggler), 8).images_per_sec;
  const double ring_loss = 1.0 - ring_slow.images_per_sec / ring_healthy;
  const double async_loss = 1.0 - async_slow / async_healthy;
  INFO("ring loses " << ring_loss << ", async PS " << async_loss);
  // Everyone waits for GPU 3 every iteration: most of 1 - 1/1.5 = 33% (communication is not slowed).
  CHECK(ring_loss > 0.2);
  CHECK(ring_loss < 1.0 - 1.0 / 1.5 + 1e-9);
  CHECK(ring_slow.critical_worker == 3);
  // Asynchronous workers do not wait: at most GPU 3's own share, 1/8 of 33%.
  CHECK(async_loss < (1.0 - 1.0 / 1.5) / 8 + 0.01);
  CHECK(async_loss < ring_loss / 4);
  // The fast mode applies it too (the straggler is a twin class of its own).
  const report::PointResult fast = point(scenario("bsc-minotauro-k80", 2, 4, kRing, straggler), 8, sim::Fidelity::kFast);
  CHECK(fast.fidelity == "fast");
  CHECK(std::abs(fast.iteration_s / ring_slow.iteration_s - 1.0) < 0.01);
}

TEST_CASE("a degraded inter-node link hurts a flat ring more than the hierarchical all-reduce", "[sim]") {
  const Json degraded = Json::array(
      {{{"kind", "degraded_link"}, {"link", {{"kind", "network"}, {"node", 1}}}, {"bandwidth_factor", 0.1}}});
  const Json hierarchical = {{"name", "allreduce"}, {"algorithm", "hierarchical"}};
  auto slowdown = [&](const Json& scheme, sim::Fidelity fidelity) {
    return point(scenario("bsc-minotauro-k80", 4, 4, scheme, degraded), 16, fidelity).iteration_s /
           point(scenario("bsc-minotauro-k80", 4, 4, scheme, Json::array()), 16, fidelity).iteration_s;
  };
  const double ring = slowdown(kRing, sim::Fidelity::kMessage);
  const double hier = slowdown(hierarchical, sim::Fidelity::kMessage);
  INFO("ring " << ring << "x, hierarchical " << hier << "x");
  CHECK(ring > 1.05);
  CHECK(hier >= 1.0);
  CHECK(ring > hier);
  // Same ordering, and about the same slowdown, in the fast mode.
  CHECK(std::abs(slowdown(kRing, sim::Fidelity::kFast) / ring - 1.0) < 0.02);
}

TEST_CASE("a failed NVSwitch port is routed around over PCIe and a GPU cut off from all partitions the cluster",
          "[sim]") {
  const Json port = Json::array(
      {{{"kind", "failed_link"}, {"link", {{"kind", "nvswitch"}, {"endpoint", "node0/gpu1"}}}}});
  const double healthy = point(scenario("dgx-h200", 1, 4, kRing, Json::array()), 4).iteration_s;
  const report::PointResult around = point(scenario("dgx-h200", 1, 4, kRing, port), 4);
  const report::PointResult around_fast = point(scenario("dgx-h200", 1, 4, kRing, port), 4, sim::Fidelity::kFast);
  INFO("healthy " << healthy << " s, NVSwitch port failed " << around.iteration_s << " s");
  CHECK(around.iteration_s > healthy * 1.01);  // the ring's GPU 1 hops now cross PCIe and the host
  CHECK(std::abs(around_fast.iteration_s / around.iteration_s - 1.0) < 0.01);
  const Json cut = Json::array({{{"kind", "failed_link"}, {"link", {{"endpoint", "node0/gpu1"}}}}});
  try {
    point(scenario("dgx-h200", 1, 4, kRing, cut), 4);
    FAIL("a partitioned cluster was simulated");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("partitioned") != std::string::npos);
    CHECK(std::string(e.what()).find("/faults/0") != std::string::npos);
  }
  // A selector that matches nothing is bad input too.
  const Json nothing = Json::array({{{"kind", "failed_link"}, {"link", {{"kind", "warp-drive"}}}}});
  CHECK_THROWS_AS(point(scenario("dgx-h200", 1, 4, kRing, nothing), 4), InputError);
}
