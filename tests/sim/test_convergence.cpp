// The convergence model (sim/convergence.hpp) and predict's time to target.
#include <catch2/catch.hpp>

#include <cmath>

#include "../input_error_message.hpp"
#include "core/error.hpp"
#include "sim/convergence.hpp"
#include "sim/predict.hpp"

namespace scaletwin::sim {

namespace {

plan::Convergence model(double e, double bc, double cost) {
  plan::Convergence c;
  c.images_min = e;
  c.critical_batch = bc;
  c.staleness_cost = cost;
  return c;
}

plan::Scenario scenario_with(const Json& scheme, const Json& training, int nodes = 2, int gpus_per_node = 4) {
  const Json j = {{"name", "tta"},         {"model", "lenet5"},           {"cluster", "aws-p2.8xlarge"},
                  {"nodes", nodes},        {"gpus_per_node", gpus_per_node}, {"batch_per_gpu", 32},
                  {"scheme", scheme},      {"sweep", {{"gpus", {1, 4, 8}}}},  {"training", training}};
  return plan::parse_scenario(j, "tta.json");
}

}  // namespace

TEST_CASE("convergence: McCandlish's trade-off between images and steps around the critical batch", "[unit]") {
  const plan::Convergence c = model(1e6, 1000, 0.0);
  // Far below B_crit, doubling the batch costs almost no images (halves the steps); far above, it doubles them.
  const double small = images_to_target(c, "linear", 256, 10, 0), small2 = images_to_target(c, "linear", 256, 20, 0);
  CHECK(small2 / small == Approx(1.01 / 1.02 * 2.04 / 2.02).epsilon(0.02));
  CHECK(small2 / small < 1.02);
  const double big = images_to_target(c, "linear", 256, 1e5, 0), big2 = images_to_target(c, "linear", 256, 2e5, 0);
  CHECK(big2 / big == Approx(2.0).epsilon(0.01));
  // At B = B_crit: twice the images of the small-batch limit, and steps = images / B.
  CHECK(images_to_target(c, "linear", 256, 1000, 0) == Approx(2e6));
}

TEST_CASE("convergence: the learning-rate rule and staleness scale the images", "[unit]") {
  const plan::Convergence c = model(1e6, 1e9, 0.5);
  CHECK(lr_rule_factor("linear", 1024, 256) == 1.0);
  CHECK(lr_rule_factor("sqrt", 1024, 256) == Approx(2.0));
  CHECK(lr_rule_factor("none", 1024, 256) == Approx(4.0));
  // A fixed rate at 4× the reference batch takes 4× the images (the same steps); staleness 2 costs 1 + 0.5·2.
  CHECK(images_to_target(c, "none", 256, 1024, 0) / images_to_target(c, "none", 256, 256, 0) == Approx(4.0).epsilon(1e-6));
  CHECK(images_to_target(c, "linear", 256, 256, 2.0) / images_to_target(c, "linear", 256, 256, 0.0) == Approx(2.0));
  // The delay weighs by the rate: at twice the reference batch (linear scaling, twice the rate) it costs twice.
  CHECK(images_to_target(c, "linear", 256, 512, 2.0) / images_to_target(c, "linear", 256, 512, 0.0) == Approx(3.0));
  CHECK(lr_ratio("sqrt", 1024, 256) == Approx(2.0));
  CHECK(lr_ratio("none", 1024, 256) == 1.0);
}

TEST_CASE("convergence: the batch one update averages, per scheme", "[unit]") {
  const Json training = {{"data", "synthetic"}};
  CHECK(update_batch_of(scenario_with({{"name", "allreduce"}}, training), 8) == 256);
  CHECK(update_batch_of(scenario_with({{"name", "ps"}, {"mode", "sync"}}, training), 8) == 256);
  CHECK(update_batch_of(scenario_with({{"name", "ps"}, {"mode", "async"}}, training), 8) == 32);
  CHECK(update_batch_of(scenario_with({{"name", "ps"}, {"mode", "mixed_async"}}, training), 8) == 128);  // a node's
}

TEST_CASE("predict: time to target from the convergence model and the predicted images/s", "[unit]") {
  const Json conv = {{"images_min", 3e4}, {"critical_batch", 400}, {"staleness_cost", 0.2}, {"log_sd", 0.1}};
  const Json training = {{"data", "synthetic"}, {"target_accuracy", 0.82}, {"lr_reference_batch", 128},
                         {"convergence", conv}};
  for (const Json& scheme : {Json{{"name", "allreduce"}}, Json{{"name", "ps"}, {"mode", "async"}, {"servers", 1}}}) {
    const plan::Scenario s = scenario_with(scheme, training);
    PredictOptions options;
    options.fidelity = Fidelity::kFast;
    const report::Report r = predict(s, options);
    REQUIRE(!r.time_basis.empty());
    CHECK(r.time_log_sd == Approx(0.1));  // no throughput interval without a calibration's
    for (const report::PointResult& p : r.predictions) {
      INFO(s.scheme.describe() << " at " << p.gpus << " GPUs");
      const double staleness = p.sync == "sync" ? 0.0 : p.staleness_mean;
      // Linear scaling from batch 128: the staleness weighs by the rate's ratio, update batch / 128.
      const double expected = 3e4 * (1 + p.update_batch / 400) * (1 + 0.2 * staleness * p.update_batch / 128);
      CHECK(p.images_to_target == Approx(expected));
      CHECK(p.time_to_target_s == Approx(expected / p.images_per_sec));
    }
    const Json j = report::report_to_json(r);
    CHECK(j["predictions"][0].contains("time_to_target_s_interval"));
    CHECK(report::report_table(r).find("time to target: test accuracy 0.82") != std::string::npos);
  }
}

TEST_CASE("predict: a target without a convergence model is an input error naming the field", "[unit]") {
  const plan::Scenario s = scenario_with({{"name", "allreduce"}}, {{"data", "synthetic"}, {"target_accuracy", 0.8}});
  PredictOptions options;
  options.fidelity = Fidelity::kFast;
  const std::string msg = testing::input_error_message([&] { predict(s, options); });
  CHECK(msg.find("/training/convergence") != std::string::npos);
  // A convergence model fitted for another target is refused when the scenario is read.
  const std::string other = testing::input_error_message([&] {
    scenario_with({{"name", "allreduce"}}, {{"data", "synthetic"}, {"target_accuracy", 0.8},
                                           {"convergence", {{"images_min", 1e4}, {"critical_batch", 100},
                                                            {"target_accuracy", 0.9}}}});
  });
  CHECK(other.find("/training/convergence") != std::string::npos);
}

}  // namespace scaletwin::sim
