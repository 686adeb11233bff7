// Fitting the convergence model (calibrate/convergence_fit.hpp) to runs drawn from known parameters, and the
// errors of bad input.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "../input_error_message.hpp"
#include "calibrate/convergence_fit.hpp"
#include "core/files.hpp"
#include "sim/convergence.hpp"

namespace scaletwin::calibrate {

namespace {

Json run_record(const std::string& id, double update_batch, double staleness, double images, double target = 0.8) {
  Json r = {{"id", id},
            {"model", "lenet5"},
            {"gpus", 2},
            {"scheme", {{"name", staleness > 0 ? "ps" : "allreduce"}}},
            {"images_per_sec", 20000.0},
            {"update_batch", update_batch},
            {"lr_scaling", "linear"},
            {"lr_reference_batch", 128},
            {"time_to_target",
             {{"target_accuracy", target}, {"reached", images > 0}, {"images", images > 0 ? Json(images) : Json(nullptr)},
              {"seconds", images > 0 ? Json(images / 20000.0) : Json(nullptr)}}}};
  if (staleness > 0) r["staleness"] = {{"mean", staleness}};
  return r;
}

std::string write_runs(const std::string& name, const Json& runs) {
  const auto dir = std::filesystem::temp_directory_path() / "scaletwin-test-convergence";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / name).string();
  write_file_atomic(path, Json{{"format", "scaletwin-measurements/1"}, {"runs", runs}}.dump(1));
  return path;
}

}  // namespace

TEST_CASE("convergence fit: recovers known parameters from noisy runs, within its standard errors", "[unit]") {
  plan::Convergence truth;
  truth.images_min = 30000;
  truth.critical_batch = 500;
  truth.staleness_cost = 0.25;
  std::mt19937_64 rng(5);
  std::normal_distribution<double> noise(0.0, 0.05);  // 5% run-to-run spread, in log
  Json runs = Json::array();
  int k = 0;
  for (double batch : {32.0, 64.0, 128.0, 256.0, 512.0, 1024.0})
    for (double staleness : {0.0, 0.0, 1.0, 3.0})
      runs.push_back(run_record(fmt::format("r{}", k++), batch, staleness,
                                sim::images_to_target(truth, "linear", 128, batch, staleness) * std::exp(noise(rng))));
  runs.push_back(run_record("censored", 2048, 0, -1));  // did not reach the target: listed, not fitted
  const ConvergenceData data = read_convergence_runs({write_runs("known.json", runs)});
  REQUIRE(data.runs.size() == 25);
  const ConvergenceFit fit = fit_convergence(data);
  REQUIRE(fit.se_log_images_min);
  REQUIRE(fit.se_log_critical_batch);
  REQUIRE(fit.se_staleness_cost);
  CHECK(std::abs(std::log(fit.model.images_min / truth.images_min)) < 3 * *fit.se_log_images_min + 1e-3);
  CHECK(std::abs(std::log(fit.model.critical_batch / truth.critical_batch)) < 3 * *fit.se_log_critical_batch + 1e-3);
  CHECK(std::abs(fit.model.staleness_cost - truth.staleness_cost) < 3 * *fit.se_staleness_cost + 1e-3);
  CHECK(fit.model.log_sd == Approx(0.05).epsilon(0.5));  // the noise put in, seen by leave-one-out
  CHECK(fit.loo_log_errors.size() == 24);

  // The written file reads back as a scenario's convergence, and checking the same runs reports its errors.
  const Json out = convergence_to_json(fit, data);
  const auto dir = std::filesystem::temp_directory_path() / "scaletwin-test-convergence";
  write_file_atomic((dir / "model.json").string(), out.dump(1));
  const plan::Convergence back = plan::load_convergence((dir / "model.json").string());
  CHECK(back.critical_batch == Approx(fit.model.critical_batch));
  CHECK(back.target_accuracy == Approx(0.8));
  const ConvergenceCheck check = check_convergence(back, data);
  CHECK(check.rows.size() == 24);
  CHECK(check.unreached == 1);
  CHECK(check.mape < 0.1);
  CHECK(check.inside >= 18);
}

TEST_CASE("convergence fit: too few runs, one batch, or runs to different targets are input errors", "[unit]") {
  const std::string two = write_runs("two.json", {run_record("a", 32, 0, 3e4), run_record("b", 64, 0, 3.1e4)});
  CHECK(testing::input_error_message([&] { fit_convergence(read_convergence_runs({two})); }).find("at least 3 runs") !=
        std::string::npos);
  const std::string one_batch =
      write_runs("one.json", {run_record("a", 64, 0, 3e4), run_record("b", 64, 0, 3.1e4), run_record("c", 64, 0, 3.2e4)});
  CHECK(testing::input_error_message([&] { fit_convergence(read_convergence_runs({one_batch})); })
            .find("two or more update batches") != std::string::npos);
  const std::string mixed =
      write_runs("mixed.json", {run_record("a", 32, 0, 3e4), run_record("b", 64, 0, 3e4, 0.9)});
  const std::string msg = testing::input_error_message([&] { read_convergence_runs({mixed}); });
  CHECK(msg.find("mixed.json") != std::string::npos);
  CHECK(msg.find("/runs/1/time_to_target") != std::string::npos);
  const std::string none = write_runs("none.json", Json::array({Json{{"id", "x"}, {"images_per_sec", 1.0}}}));
  CHECK(testing::input_error_message([&] { read_convergence_runs({none}); }).find("time_to_target") != std::string::npos);
}

}  // namespace scaletwin::calibrate
