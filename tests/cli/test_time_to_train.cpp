// Time to train through the binary: validate --time-to-train on DeepLearningExamples' published 90-epoch times (every
// record gets a row, predicted or with why not), on MLPerf-style records whose epochs come from the shipped
// convergence fit, and predict on the shipped MLPerf time-to-train scenario.
#include <catch2/catch.hpp>

#include "run_binary.hpp"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace fs = std::filesystem;
using Json = nlohmann::json;
using scaletwin::test::run_scaletwin;

namespace {

const std::string kSource = SCALETWIN_SOURCE_DIR;
const std::string kModern = kSource + "/../shared/reference/modern/";

Json load(const std::string& path) {
  std::ifstream in(path);
  return Json::parse(in);
}

}  // namespace

TEST_CASE("validate --time-to-train: every published record gets a row, predicted or with why not", "[cli]") {
  const fs::path out = fs::temp_directory_path() / ("st_ttt_" + std::to_string(getpid()) + ".json");
  const auto r = run_scaletwin("validate --time-to-train -q --measurements " + kModern + "time-to-accuracy.json --json " +
                               out.string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  const Json j = load(out.string());
  const Json source = load(kModern + "time-to-accuracy.json");
  REQUIRE(j["rows"].size() == source["runs"].size());  // none skipped silently
  int predicted = 0;
  for (const Json& row : j["rows"]) {
    INFO(row.dump());
    if (row["predicted"].get<bool>()) {
      ++predicted;
      CHECK(row["epochs_basis"] == "stated");
      // Training at the predicted images/s plus an evaluation per epoch (DeepLearningExamples' scripts).
      CHECK(row["train_s"].get<double>() ==
            Approx(row["epochs"].get<double>() * 1281167.0 / row["predicted_images_per_sec"].get<double>()));
      CHECK(row["evaluations"].get<double>() == row["epochs"].get<double>());
      CHECK(row["predicted_s"].get<double>() == Approx(row["train_s"].get<double>() + row["eval_s"].get<double>()));
      CHECK(row["error"].get<double>() ==
            Approx(row["predicted_s"].get<double>() / row["measured_s"].get<double>() - 1.0));
      CHECK(row["interval_s"][0].get<double>() < row["predicted_s"].get<double>());
    } else {
      CHECK_FALSE(row["why_not"].get<std::string>().empty());
    }
  }
  CHECK(predicted == j["predicted"].get<int>());
  CHECK(predicted >= 100);
  CHECK(j["mape"].get<double>() > 0.0);
  CHECK(j["inside_interval"].get<int>() <= j["with_interval"].get<int>());
}

TEST_CASE("validate --time-to-train: MLPerf-style records take their epochs from the convergence model", "[cli]") {
  // One published MLPerf single-node system as a time-to-train record: global batch, minutes per run, no images/s.
  const Json throughput = load(kModern + "throughput.json");
  Json record;
  for (const Json& run : throughput["runs"])
    if (run.value("source_type", "") == "mlperf_training_log" && run.value("device", "") == "A100-SXM4-80GB" &&
        run.value("gpus", 0) == 8) {
      record = run;
      break;
    }
  REQUIRE(record.is_object());
  record.erase("images_per_sec");
  record.erase("batch_per_gpu");
  record["id"] = "mlperf-style-a100x8";
  record["minutes"] = {28.0, 29.0, 30.0};
  Json no_batch = record;
  no_batch["id"] = "mlperf-style-no-batch";
  no_batch.erase("global_batch");
  const fs::path dir = fs::temp_directory_path() / ("st_ttt_mlperf_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string file = (dir / "mlperf.json").string();
  std::ofstream(file) << Json{{"format", "scaletwin-measurements/1"}, {"runs", {record, no_batch}}}.dump(1);
  const std::string out = (dir / "check.json").string();
  auto r = run_scaletwin("validate --time-to-train -q --measurements " + file + " --convergence " + kSource +
                         "/calibrations/convergence/resnet50-imagenet.json --json " + out);
  INFO(r.out);
  REQUIRE(r.code == 0);
  Json j = load(out);
  REQUIRE(j["rows"].size() == 2);
  const Json& row = j["rows"][0];
  CHECK(row["predicted"] == true);
  CHECK(row["epochs_basis"] == "convergence model");
  CHECK(row["measured_s"].get<double>() == Approx(29.0 * 60.0));
  // Epochs at the record's global batch, read half an evaluation period (4 epochs) after the crossing.
  CHECK(row["epochs"].get<double>() > 30.0);
  CHECK(row["epochs"].get<double>() < 45.0);
  CHECK(row["evaluations"].get<double>() == Approx(row["epochs"].get<double>() / 4.0));
  CHECK(row["eval_s"].get<double>() > 0.0);
  CHECK(j["rows"][1]["predicted"] == false);
  CHECK(j["rows"][1]["why_not"].get<std::string>().find("batch not stated") != std::string::npos);
  // Without --convergence (and without the flag: the file has only time-to-train records) the shipped fit of the
  // record's model gives the same epochs.
  r = run_scaletwin("validate -q --measurements " + file + " --json " + out);
  REQUIRE(r.code == 0);
  const Json shipped = load(out);
  CHECK(shipped["rows"][0]["epochs"].get<double>() == Approx(row["epochs"].get<double>()));
  CHECK(shipped["rows"][0]["convergence"].get<std::string>().find("calibrations/convergence/resnet50-imagenet.json") !=
        std::string::npos);
  // A model with no convergence fit: its epochs are unknown, and said so, not skipped.
  Json other = record;
  other["model"] = "vgg16";
  std::ofstream(file) << Json{{"format", "scaletwin-measurements/1"}, {"runs", {other}}}.dump(1);
  r = run_scaletwin("validate --time-to-train -q --measurements " + file + " --json " + out);
  REQUIRE(r.code == 0);
  j = load(out);
  CHECK(j["rows"][0]["why_not"].get<std::string>().find("epochs not stated") != std::string::npos);
  // MLPerf's per-run times: the olympic mean of 5 runs (the fastest and the slowest dropped).
  Json per_run = record;
  per_run.erase("minutes");
  per_run["runs"] = Json::array();
  for (double m : {20.0, 28.0, 29.0, 30.0, 50.0}) per_run["runs"].push_back({{"time_to_train_min_derived", m}});
  std::ofstream(file) << Json{{"format", "scaletwin-measurements/1"}, {"runs", {per_run}}}.dump(1);
  r = run_scaletwin("validate -q --measurements " + file + " --json " + out);
  REQUIRE(r.code == 0);
  CHECK(load(out)["rows"][0]["measured_s"].get<double>() == Approx(29.0 * 60.0));
  // Options that mean nothing here are refused.
  r = run_scaletwin("validate --time-to-train --cv 'gpus<=1' --measurements " + file);
  CHECK(r.code == 2);
  CHECK(r.out.find("--cv") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("predict: the MLPerf time-to-train scenario gives epochs and time per scale from the shipped fits", "[cli]") {
  const auto r = run_scaletwin("predict " + kSource + "/scenarios/mlperf-dgx-a100-resnet50-time-to-train.json -q --json -");
  INFO(r.out);
  REQUIRE(r.code == 0);
  const Json j = Json::parse(r.out.substr(r.out.find('{')));
  REQUIRE(j["predictions"].size() == 11);
  double last_epochs = 0.0;
  for (const Json& p : j["predictions"]) {
    INFO(p["gpus"]);
    const double epochs = p["epochs_to_target"].get<double>();
    CHECK(epochs >= last_epochs);  // larger global batches need more epochs
    last_epochs = epochs;
    CHECK(p["time_to_target_s"].get<double>() ==
          Approx(epochs * 1281167.0 / p["images_per_sec"].get<double>() + p["eval_s"].get<double>()));
    CHECK(p.contains("time_to_target_s_interval"));
  }
  // Beyond the RCPs' largest batch (8,192) the convergence model's interval widens.
  CHECK_FALSE(j["predictions"][5].contains("convergence_extrapolation_log_sd"));
  CHECK(j["predictions"][10]["convergence_extrapolation_log_sd"].get<double>() > 0.0);
}
