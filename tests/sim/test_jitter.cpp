// Compute jitter (sim/jitter.hpp): E[max of g normals], the synchronous group of each scheme, and the wait it adds
// to a simulated iteration, in both fidelities; asynchronous workers do not wait.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "plan/scenario.hpp"
#include "sim/jitter.hpp"
#include "sim/predict.hpp"

using namespace scaletwin;

namespace {

plan::Scenario scenario(int nodes, int gpus_per_node, const Json& scheme) {
  const Json j = {{"name", "jitter"}, {"model", "resnet18_cifar"}, {"cluster", "bsc-minotauro-k80"}, {"nodes", nodes},
                  {"gpus_per_node", gpus_per_node}, {"batch_per_gpu", 32}, {"scheme", scheme}};
  return plan::parse_scenario(j, "test_jitter.json");
}

plan::IterationPlan plan_of(const plan::Scenario& s, int gpus) {
  const models::Model model = plan::load_scenario_model(s);
  const topology::Cluster cluster = plan::load_scenario_cluster(s, gpus);
  return plan::lower(s, model, cluster, gpus);
}

int worker_endpoint(const plan::IterationPlan& p, int worker) {
  for (size_t e = 0; e < p.endpoints.size(); ++e)
    if (p.endpoints[e].worker_index == worker) return static_cast<int>(e);
  return -1;
}

sim::Calibration with_jitter(double cv) {
  sim::Calibration c = sim::default_calibration();
  const std::string k80 = topology::load_cluster_spec("bsc-minotauro-k80").node.device.name;
  sim::DeviceEfficiency d = c.device(k80);
  d.compute_jitter = cv;
  c.devices[k80] = d;
  return c;
}

sim::PointResult point(const plan::Scenario& s, int gpus, double cv, sim::Fidelity f = sim::Fidelity::kMessage) {
  sim::RunOptions opt;
  opt.iterations = 2;
  return sim::simulate_point_forked(s, gpus, with_jitter(cv), opt, f);
}

const Json kRing = {{"name", "allreduce"}, {"algorithm", "ring"}};
const Json kAsync = {{"name", "ps"}, {"mode", "async"}, {"servers", 2}};
const Json kMixed = {{"name", "ps"}, {"mode", "mixed_async"}, {"servers", 2}};
const Json kSyncPs = {{"name", "ps"}, {"mode", "sync"}, {"servers", 2}};

}  // namespace

TEST_CASE("the expected maximum of g standard normals matches its closed forms and grows like sqrt(2 ln g)", "[sim]") {
  CHECK(sim::expected_max_of_normals(1) == 0.0);
  CHECK(sim::expected_max_of_normals(0) == 0.0);
  // g = 2: 1/sqrt(pi); g = 3: 3/(2 sqrt(pi)); g = 4: (6/pi^1.5) atan(sqrt 2) (order statistics of the normal).
  const double pi = 3.14159265358979323846;
  CHECK(sim::expected_max_of_normals(2) == Approx(1.0 / std::sqrt(pi)).epsilon(1e-6));
  CHECK(sim::expected_max_of_normals(3) == Approx(1.5 / std::sqrt(pi)).epsilon(1e-6));
  CHECK(sim::expected_max_of_normals(4) == Approx(6.0 / std::pow(pi, 1.5) * std::atan(std::sqrt(2.0))).epsilon(1e-6));
  double last = 0.0;
  for (int g : {2, 8, 64, 1024, 16384}) {
    const double e = sim::expected_max_of_normals(g);
    CHECK(e > last);
    CHECK(e < std::sqrt(2.0 * std::log(static_cast<double>(g))));
    last = e;
  }
}

TEST_CASE("the synchronous group is every worker of an all-reduce or sync PS and one for async and the node for mixed_async",
          "[sim]") {
  const plan::IterationPlan ring = plan_of(scenario(2, 4, kRing), 8);
  const plan::IterationPlan sync_ps = plan_of(scenario(2, 4, kSyncPs), 8);
  const plan::IterationPlan async = plan_of(scenario(2, 4, kAsync), 8);
  const plan::IterationPlan mixed = plan_of(scenario(2, 4, kMixed), 8);
  for (int w : {0, 5}) {
    CHECK(sim::synchronous_group_size(ring, worker_endpoint(ring, w)) == 8);
    CHECK(sim::synchronous_group_size(sync_ps, worker_endpoint(sync_ps, w)) == 8);
    CHECK(sim::synchronous_group_size(async, worker_endpoint(async, w)) == 1);
    CHECK(sim::synchronous_group_size(mixed, worker_endpoint(mixed, w)) == 4);
  }
}

TEST_CASE("compute jitter adds cv times compute times the expected maximum of g to a synchronous iteration in both fidelities", "[sim]") {
  const plan::Scenario ring = scenario(2, 4, kRing);
  for (sim::Fidelity f : {sim::Fidelity::kMessage, sim::Fidelity::kFast}) {
    const sim::PointResult steady = point(ring, 8, 0.0, f);
    const sim::PointResult jittery = point(ring, 8, 0.1, f);
    const auto data = steady.phase_s.find("data");
    const double compute = steady.compute_s - (data != steady.phase_s.end() ? data->second : 0.0);
    const double wait = 0.1 * compute * sim::expected_max_of_normals(8);
    CHECK(steady.jitter_wait_s == 0.0);
    CHECK(jittery.jitter_wait_s == Approx(wait).epsilon(1e-9));
    CHECK(jittery.iteration_s == Approx(steady.iteration_s + wait).epsilon(1e-9));
    CHECK(jittery.exposed_comm_s == Approx(steady.exposed_comm_s + wait).epsilon(1e-9));
    CHECK(jittery.compute_s == Approx(steady.compute_s).epsilon(1e-12));
    CHECK(jittery.images_per_sec == Approx(steady.images_per_sec * steady.iteration_s / jittery.iteration_s).epsilon(1e-9));
  }
}

TEST_CASE("compute jitter leaves an asynchronous PS alone and slows mixed_async by its node's wait", "[sim]") {
  const sim::PointResult async0 = point(scenario(2, 4, kAsync), 8, 0.0);
  const sim::PointResult async1 = point(scenario(2, 4, kAsync), 8, 0.1);
  CHECK(async1.jitter_wait_s == 0.0);
  CHECK(async1.images_per_sec == Approx(async0.images_per_sec).epsilon(1e-12));
  const sim::PointResult mixed0 = point(scenario(2, 4, kMixed), 8, 0.0);
  const sim::PointResult mixed1 = point(scenario(2, 4, kMixed), 8, 0.1);
  const auto data = mixed0.phase_s.find("data");
  const double compute = mixed0.compute_s - (data != mixed0.phase_s.end() ? data->second : 0.0);
  CHECK(mixed1.jitter_wait_s == Approx(0.1 * compute * sim::expected_max_of_normals(4)).epsilon(1e-9));
  CHECK(mixed1.images_per_sec < mixed0.images_per_sec);
}

TEST_CASE("a calibration file carries compute_jitter and rejects a negative one", "[sim]") {
  sim::Calibration c = with_jitter(0.07);
  const Json j = sim::calibration_to_json(c);
  const sim::Calibration back = sim::parse_calibration(j, "c.json");
  const std::string k80 = topology::load_cluster_spec("bsc-minotauro-k80").node.device.name;
  CHECK(back.device(k80).compute_jitter == Approx(0.07));
  Json bad = j;
  bad["devices"][k80]["compute_jitter"] = -0.1;
  CHECK_THROWS_WITH(sim::parse_calibration(bad, "c.json"), Catch::Contains("compute_jitter"));
}
