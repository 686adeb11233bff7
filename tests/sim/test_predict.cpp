// predict over a sweep (a forked child per point): the spec's JSON fields, speedup against the 1-GPU point,
// Chrome trace with one track per endpoint, and the reproducibility of a deterministic simulation.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "core/error.hpp"
#include "models/model_json.hpp"
#include "report/html.hpp"
#include "sim/predict.hpp"
#include "topology/cluster.hpp"

using namespace scaletwin;

namespace {

plan::Scenario small_ring() {
  const Json j = {{"name", "predict-test"},
                  {"model", "resnet18_cifar"},
                  {"cluster", "aws-p2.8xlarge"},
                  {"nodes", 1},
                  {"gpus_per_node", 4},
                  {"batch_per_gpu", 32},
                  {"scheme", {{"name", "allreduce"}, {"algorithm", "ring"}}}};
  return plan::parse_scenario(j, "test_predict");
}

}  // namespace

TEST_CASE("predict reports the spec's fields, speedup against 1 GPU and a trace per endpoint", "[sim]") {
  sim::PredictOptions opt;
  opt.gpus = {2, 4};
  opt.run.iterations = 2;
  opt.run.warmup = 1;
  opt.run.trace = true;
  const report::Report r = sim::predict(small_ring(), opt);
  REQUIRE(r.predictions.size() == 2);
  const Json j = report::report_to_json(r);
  CHECK(j.at("scenario") == "predict-test");
  for (const Json& p : j.at("predictions"))
    for (const char* key : {"gpus", "nodes", "iteration_s", "images_per_sec", "speedup", "efficiency", "compute_s",
                            "exposed_comm_s"})
      CHECK(p.contains(key));
  const report::PointResult& four = r.predictions[1];
  CHECK(four.gpus == 4);
  CHECK(four.efficiency == Approx(four.speedup / 4).epsilon(1e-12));
  CHECK(four.speedup > 1.0);
  CHECK(four.speedup <= 4.0);
  CHECK(four.iteration_s == Approx(four.compute_s + four.exposed_comm_s).epsilon(1e-9));
  CHECK(four.images_per_sec == Approx(4 * 32 / four.iteration_s).epsilon(1e-9));

  const Json trace = report::chrome_trace(r);
  std::set<std::string> names, layers;
  std::set<int> tracks;
  int threads = 0;
  for (const Json& e : trace.at("traceEvents")) {
    if (e.at("ph") == "M" && e.at("name") == "thread_name" && e.at("pid") == 4) ++threads;
    if (e.at("ph") == "X" && e.at("pid") == 4) {
      names.insert(e.at("name").get<std::string>());
      tracks.insert(e.at("tid").get<int>());
      CHECK(e.at("dur").get<double>() >= 0.0);
      // A layer's compute op names its layer (the event keeps the phase's name, as run --trace names it).
      if (e.at("name") == "forward" || e.at("name") == "backward_weight") {
        REQUIRE(e.contains("args"));
        layers.insert(e.at("args").at("layer").get<std::string>());
      }
      if (e.at("name") == "bucket 0") CHECK_FALSE(e.contains("args"));
    }
  }
  const models::Model model = models::load_model("resnet18_cifar");
  CHECK(layers.size() > 10);
  for (const std::string& name : layers)
    CHECK(std::any_of(model.layers.begin(), model.layers.end(), [&](const models::Layer& L) { return L.name == name; }));
  CHECK(threads == 4);
  CHECK(tracks.size() == 4);
  CHECK(names.count("forward") == 1);
  CHECK(names.count("backward_weight") == 1);
  CHECK(names.count("bucket 0") == 1);
}

TEST_CASE("a simulation is deterministic: the same point twice gives the same numbers", "[sim]") {
  sim::RunOptions opt;
  opt.iterations = 2;
  opt.warmup = 1;
  const auto a = sim::simulate_point_forked(small_ring(), 4, sim::default_calibration(), opt);
  const auto b = sim::simulate_point_forked(small_ring(), 4, sim::default_calibration(), opt);
  CHECK(a.iteration_s == b.iteration_s);
  CHECK(a.plan_hash == b.plan_hash);
  CHECK(report::point_to_json(a, false) == report::point_to_json(b, false));
}

TEST_CASE("predict applies the calibration's per-model factor to its scenario's model only", "[sim]") {
  sim::PredictOptions base;
  base.gpus = {1};
  base.run.iterations = 1;
  base.run.warmup = 0;
  const double plain = sim::predict(small_ring(), base).predictions.at(0).compute_s;

  sim::PredictOptions other = base;  // a factor for another model changes nothing
  for (auto& [name, d] : other.calibration.devices) d.model_factors["lenet5"] = 0.5;
  CHECK(sim::predict(small_ring(), other).predictions.at(0).compute_s == plain);

  sim::PredictOptions slower = base;  // half the conv and matmul efficiency of resnet18_cifar
  for (auto& [name, d] : slower.calibration.devices) d.model_factors["resnet18_cifar"] = 0.5;
  const double halved = sim::predict(small_ring(), slower).predictions.at(0).compute_s;
  CHECK(halved > 1.5 * plain);
  CHECK(halved < 2.0 * plain + 1e-9);
}

TEST_CASE("sim::simulate runs a prepared point as simulate_point runs its scenario", "[sim]") {
  sim::RunOptions opt;
  opt.iterations = 2;
  opt.warmup = 1;
  const plan::Scenario s = small_ring();
  const plan::Point point = plan::prepare(s, 4);
  plan::LowerOptions shells;  // what simulate_point prepares for the fast mode: schedule shells and recipes
  shells.materialize_schedules = false;
  const plan::Point shell = plan::prepare(s, 4, shells);
  CHECK(point.scenario.name == "predict-test");
  CHECK(point.gpus == 4);
  // The fast mode runs many times per process: the prepared point and the scenario give the same result, and it
  // times materialized schedules as it times their recipes.
  const report::PointResult a = sim::simulate(shell, sim::default_calibration(), opt, sim::Fidelity::kFast);
  const report::PointResult b = sim::simulate_point(s, 4, sim::default_calibration(), opt, sim::Fidelity::kFast);
  const report::PointResult c = sim::simulate(point, sim::default_calibration(), opt, sim::Fidelity::kFast);
  CHECK(a.fidelity == "fast");
  CHECK(a.iteration_s > 0.0);
  CHECK(a.iteration_s == b.iteration_s);
  CHECK(a.plan_hash == b.plan_hash);
  CHECK(c.iteration_s == Approx(a.iteration_s).epsilon(1e-9));
  // The message level needs the schedules a default prepare materializes; a shell plan is refused.
  CHECK_THROWS_AS(sim::simulate(shell, sim::default_calibration(), opt, sim::Fidelity::kMessage), InternalError);
}

TEST_CASE("predict states the cluster's network assumption where its sweep crosses nodes, and only there", "[sim]") {
  const Json j = {{"name", "assumption-test"},
                  {"model", "resnet18_cifar"},
                  {"cluster", "dgx-h100"},
                  {"nodes", 2},
                  {"gpus_per_node", 8},
                  {"batch_per_gpu", 32},
                  {"scheme", {{"name", "allreduce"}, {"algorithm", "ring"}}}};
  const plan::Scenario s = plan::parse_scenario(j, "test_predict");
  const std::string assumed = topology::load_cluster_spec("dgx-h100").network.assumption;
  REQUIRE_FALSE(assumed.empty());
  sim::PredictOptions opt;
  opt.fidelity = sim::Fidelity::kFast;
  opt.run.iterations = 2;
  opt.run.warmup = 1;
  opt.gpus = {8};
  const report::Report one_node = sim::predict(s, opt);
  CHECK_FALSE(one_node.network_assumption.has_value());
  CHECK_FALSE(report::report_to_json(one_node).contains("network_assumption"));
  opt.gpus = {8, 16};
  const report::Report two_nodes = sim::predict(s, opt);
  REQUIRE(two_nodes.network_assumption.has_value());
  CHECK(two_nodes.network_assumption->text == assumed);
  const Json out = report::report_to_json(two_nodes);
  CHECK(out.at("network_assumption").at("cluster") == "dgx-h100");
  CHECK(out.at("network_assumption").at("text") == assumed);
  CHECK_THAT(report::report_table(two_nodes),
             Catch::Contains("the network between nodes of dgx-h100 rests on assumptions (clusters/dgx-h100.json "
                             "(built-in), /network/assumption): " + assumed));
  CHECK_THAT(report::report_html(two_nodes), Catch::Contains("the network between nodes of dgx-h100 rests on"));
}
