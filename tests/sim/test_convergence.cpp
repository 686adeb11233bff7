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

TEST_CASE("convergence: a target is seen at the first evaluation at or after its crossing", "[unit]") {
  // Every 4 epochs from epoch 2: a crossing at 33.1 is read at 34, the 9th evaluation (2, 6, ..., 34).
  CHECK(first_evaluation_at(33.1, 4, 2).epochs == Approx(34));
  CHECK(first_evaluation_at(33.1, 4, 2).evaluations == 9);
  CHECK(first_evaluation_at(34.0, 4, 2).epochs == Approx(34));  // a crossing at an evaluation is seen there
  CHECK(first_evaluation_at(1.0, 4, 0).epochs == Approx(4));     // no offset: the first is one period in
  CHECK(first_evaluation_at(1.0, 4, 0).evaluations == 1);
  // An offset that varies between runs: half a period later on average.
  CHECK(expected_evaluation_at(33.0, 4).epochs == Approx(35.0));
  CHECK(expected_evaluation_at(33.0, 4).evaluations == Approx(8.75));
}

TEST_CASE("convergence: the warm-up's cost, the optimizer's critical batch and the interval beyond the fitted batches",
          "[unit]") {
  plan::Convergence c = model(30e3, 1000, 0.0);
  c.warmup_cost = 0.5;
  c.dataset_images = 1000;
  // Half of each of 4 warm-up epochs of 1,000 images is lost: 2,000 images more.
  CHECK(images_to_target(c, "tuned", 1, 500, 0, 1000, 4) - images_to_target(c, "tuned", 1, 500, 0, 1000, 0) ==
        Approx(2000));
  CHECK(lr_rule_factor("tuned", 4096, 256) == 1.0);  // a recipe tuned per batch: no rule factor
  c.optimizer = "lars";
  c.critical_batch_by_optimizer["sgd"] = 300;
  c.source = "conv.json";
  CHECK(critical_batch_for(c, "lars") == 1000);
  CHECK(critical_batch_for(c, "sgd") == 300);
  c.critical_batch_by_optimizer.clear();
  const std::string msg = testing::input_error_message([&] { critical_batch_for(c, "sgd", "s.json"); });
  CHECK(msg.find("s.json") != std::string::npos);
  CHECK(msg.find("/training/optimizer") != std::string::npos);
  CHECK(msg.find("lars") != std::string::npos);
  // Within the fitted batches nothing is added; beyond them, se(log B_crit) * (g(B) - g(B_high)).
  c.batch_low = 100;
  c.batch_high = 1000;
  c.se_log_critical_batch = 0.2;
  CHECK(convergence_extrapolation_log_sd(c, 800, 1000) == 0.0);
  CHECK(convergence_extrapolation_log_sd(c, 3000, 1000) == Approx(0.2 * (0.75 - 0.5)));
  CHECK(convergence_extrapolation_log_sd(c, 9000, 1000) > convergence_extrapolation_log_sd(c, 3000, 1000));
}

TEST_CASE("predict: a sweep's global batch and warm-up per point, epochs at evaluations, evaluation and epoch time",
          "[unit]") {
  Json j = {{"name", "ttt"},
            {"model", "lenet5"},
            {"cluster", "aws-p2.8xlarge"},
            {"nodes", 2},
            {"gpus_per_node", 4},
            {"batch_per_gpu", 32},
            {"scheme", {{"name", "allreduce"}}},
            {"sweep", {{"gpus", {1, 4, 8}}, {"global_batch", {64, 256, 2048}}, {"lr_warmup_epochs", {0, 1, 3}}}},
            {"training",
             {{"optimizer", "lars"},
              {"lr_scaling", "tuned"},
              {"target_accuracy", 0.9},
              {"dataset_images", 60000},
              {"eval_every_epochs", 2},
              {"eval_offset_epochs", 1},
              {"eval_images", 10000},
              {"epoch_overhead_s", 3.0},
              {"convergence",
               {{"images_min", 3e5}, {"critical_batch", 1000}, {"warmup_cost", 1.0}, {"dataset_images", 60000},
                {"optimizer", "lars"}, {"target_accuracy", 0.9}}}}}};
  const plan::Scenario s = plan::parse_scenario(j, "ttt.json");
  PredictOptions options;
  options.fidelity = Fidelity::kFast;
  const report::Report r = predict(s, options);
  REQUIRE(r.predictions.size() == 3);
  const double warmups[] = {0, 1, 3};
  for (size_t i = 0; i < 3; ++i) {
    const report::PointResult& p = r.predictions[i];
    INFO("at " << p.gpus << " GPUs");
    CHECK(p.batch_per_gpu == j["sweep"]["global_batch"][i].get<int64_t>() / p.gpus);
    CHECK(p.update_batch == j["sweep"]["global_batch"][i].get<double>());
    // Epochs to the crossing, then to the next evaluation (every 2 epochs from epoch 1).
    const double crossing = (3e5 * (1 + p.update_batch / 1000) + warmups[i] * 60000) / 60000;
    const EvaluationSchedule seen = first_evaluation_at(crossing, 2, 1);
    CHECK(p.epochs_to_target == Approx(seen.epochs));
    CHECK(p.evaluations == seen.evaluations);
    CHECK(p.eval_s > 0.0);
    CHECK(p.time_to_target_s == Approx(seen.epochs * 60000 / p.images_per_sec + p.eval_s + 3.0 * seen.epochs));
  }
  // The evaluation runs at the inference rate: the forward pass of every worker's share.
  const report::PointResult& last = r.predictions.back();
  CHECK(last.eval_s == Approx(last.evaluations * 10000.0 / (8 * 256 / last.phase_s.at("forward"))).epsilon(1e-6));
  const std::string table = report::report_table(r);
  CHECK(table.find("global batch per point (the sweep's): 1: 1 x 64 = 64, 4: 4 x 64 = 256, 8: 8 x 256 = 2048") !=
        std::string::npos);
  CHECK(table.find("initialisation excluded") != std::string::npos);
  // A global batch that the GPUs cannot share evenly, a list of the wrong length, an optimizer the model lacks.
  Json bad = j;
  bad["sweep"]["global_batch"][1] = 258;
  CHECK(testing::input_error_message([&] { plan::parse_scenario(bad, "ttt.json"); }).find("/sweep/global_batch/1") !=
        std::string::npos);
  bad = j;
  bad["sweep"]["lr_warmup_epochs"] = {1, 2};
  CHECK(testing::input_error_message([&] { plan::parse_scenario(bad, "ttt.json"); }).find("/sweep/lr_warmup_epochs") !=
        std::string::npos);
  bad = j;
  bad["training"]["optimizer"] = "sgd";
  CHECK(testing::input_error_message([&] { predict(plan::parse_scenario(bad, "ttt.json"), options); })
            .find("/training/optimizer") != std::string::npos);
  // A GPU count the sweep sets no global batch for is refused, not run at the scenario's batch per GPU.
  PredictOptions other = options;
  other.gpus = {2};
  CHECK(testing::input_error_message([&] { predict(s, other); }).find("/sweep/global_batch") != std::string::npos);
  bad = j;
  bad["training"]["eval_offset_epochs"] = "sometimes";
  CHECK(testing::input_error_message([&] { plan::parse_scenario(bad, "ttt.json"); }).find("/training/eval_offset_epochs") !=
        std::string::npos);
}

}  // namespace scaletwin::sim
