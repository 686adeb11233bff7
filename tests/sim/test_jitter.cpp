// Compute jitter (sim/jitter.hpp): E[max of g normals], the synchronous group of each scheme, and the wait it adds
// to a simulated iteration, in both fidelities; asynchronous workers do not wait.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "plan/scenario.hpp"
#include "sim/jitter.hpp"
#include "sim/predict.hpp"

using namespace scaletwin;

namespace {

plan::Scenario scenario(int nodes, int gpus_per_node, const Json& scheme, const std::string& model = "resnet18_cifar") {
  const Json j = {{"name", "jitter"}, {"model", model}, {"cluster", "bsc-minotauro-k80"}, {"nodes", nodes},
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

report::PointResult point(const plan::Scenario& s, int gpus, double cv, sim::Fidelity f = sim::Fidelity::kMessage) {
  sim::RunOptions opt;
  opt.iterations = 2;
  return sim::simulate_point_forked(s, gpus, with_jitter(cv), opt, f);
}

const Json kRing = {{"name", "allreduce"}, {"algorithm", "ring"}};
const Json kAsync = {{"name", "ps"}, {"mode", "async"}, {"servers", 2}};
const Json kMixed = {{"name", "ps"}, {"mode", "mixed_async"}, {"servers", 2}};
const Json kSyncPs = {{"name", "ps"}, {"mode", "sync"}, {"servers", 2}};
const Json kHybrid = {{"name", "hybrid"}, {"data_parallel", kRing}, {"model_parallel", "fc"}};

std::vector<double> segments(const plan::Scenario& s, int gpus, int worker) {
  const plan::IterationPlan p = plan_of(s, gpus);
  return sim::synchronous_segments(p, plan::load_scenario_cluster(s, gpus), sim::default_calibration(),
                                   worker_endpoint(p, worker));
}

double sum(const std::vector<double>& v) {
  double t = 0.0;
  for (double x : v) t += x;
  return t;
}

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
    const report::PointResult steady = point(ring, 8, 0.0, f);
    const report::PointResult jittery = point(ring, 8, 0.1, f);
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

TEST_CASE("data-parallel and PS workers synchronise once per iteration and async workers never", "[sim]") {
  for (const Json& scheme : {kRing, kSyncPs, kMixed}) {
    INFO(scheme.dump());
    for (int w : {0, 5}) {
      const std::vector<double> f = segments(scenario(2, 4, scheme), 8, w);
      REQUIRE(f.size() == 1);
      CHECK(f[0] == Approx(1.0).epsilon(1e-12));
    }
  }
  CHECK(segments(scenario(2, 4, kAsync), 8, 3).empty());
  CHECK(segments(scenario(1, 1, kRing), 1, 0).size() <= 1);
}

TEST_CASE("the hybrid waits at every blocking exchange of its classifier and so pays more wait than the ring", "[sim]") {
  // vgg16_cifar's classifier: its model-parallel fc layers each gather their input in the forward pass and
  // scatter its gradient in the backward pass, and the update waits for the backbone's all-reduce.
  const plan::Scenario hybrid = scenario(2, 4, kHybrid, "vgg16_cifar");
  const plan::Scenario ring = scenario(2, 4, kRing, "vgg16_cifar");
  const plan::IterationPlan hp = plan_of(hybrid, 8);
  int blocking = 0;
  for (const plan::CollectiveInstance& c : hp.collectives)
    if (c.purpose == plan::CollectivePurpose::kActivationGather || c.purpose == plan::CollectivePurpose::kGradientScatter)
      ++blocking;
  REQUIRE(blocking >= 2);
  const report::PointResult h0 = point(hybrid, 8, 0.0), h1 = point(hybrid, 8, 0.1);
  const std::vector<double> f = segments(hybrid, 8, h0.critical_worker);
  // One segment per blocking exchange plus the one that ends at the update (some may hold no compute at all).
  CHECK(static_cast<int>(f.size()) <= blocking + 1);
  CHECK(f.size() >= 2);
  CHECK(sum(f) == Approx(1.0).epsilon(1e-9));
  double spread = 0.0;
  for (double x : f) {
    CHECK(x > 0.0);
    spread += std::sqrt(x);
  }
  CHECK(spread > 1.0);
  const auto data = h0.phase_s.find("data");
  const double compute = h0.compute_s - (data != h0.phase_s.end() ? data->second : 0.0);
  CHECK(h1.jitter_wait_s == Approx(0.1 * compute * sim::expected_max_of_normals(8) * spread).epsilon(1e-9));
  CHECK(h1.iteration_s == Approx(h0.iteration_s + h1.jitter_wait_s).epsilon(1e-9));
  // The same compute, synchronised once: the ring's wait per second of compute is smaller.
  const report::PointResult r0 = point(ring, 8, 0.0), r1 = point(ring, 8, 0.1);
  const auto rdata = r0.phase_s.find("data");
  const double rcompute = r0.compute_s - (rdata != r0.phase_s.end() ? rdata->second : 0.0);
  CHECK(h1.jitter_wait_s / compute > 1.2 * (r1.jitter_wait_s / rcompute));
}

TEST_CASE("compute jitter leaves an asynchronous PS alone and slows mixed_async by its node's wait", "[sim]") {
  const report::PointResult async0 = point(scenario(2, 4, kAsync), 8, 0.0);
  const report::PointResult async1 = point(scenario(2, 4, kAsync), 8, 0.1);
  CHECK(async1.jitter_wait_s == 0.0);
  CHECK(async1.images_per_sec == Approx(async0.images_per_sec).epsilon(1e-12));
  const report::PointResult mixed0 = point(scenario(2, 4, kMixed), 8, 0.0);
  const report::PointResult mixed1 = point(scenario(2, 4, kMixed), 8, 0.1);
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
