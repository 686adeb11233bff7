// scaletwin compare through the binary, with prediction and measurement files this test writes: the join per GPU
// count, phase and bucket with hand-computed errors, the runs and points left unmatched, a real predict --json
// as input, and bad input (exit 2, naming the file and the field).
#include <catch2/catch.hpp>

#include "run_binary.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace fs = std::filesystem;
using Json = nlohmann::json;
using scaletwin::test::Result;
using scaletwin::test::run_scaletwin;

namespace {

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("scaletwin_compare_" + name + "_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string write(const fs::path& path, const Json& json) {
  std::ofstream(path) << json.dump(1);
  return path.string();
}

// 2 GPUs: iteration 0.19 s of which data 0.005, other compute 0.115, exposed communication 0.05, idle 0.02.
Json prediction() {
  const Json point2 = {{"gpus", 2}, {"nodes", 1}, {"iteration_s", 0.19}, {"images_per_sec", 64.0 / 0.19},
                       {"speedup", 1.9}, {"efficiency", 0.95}, {"compute_s", 0.12}, {"exposed_comm_s", 0.05},
                       {"phases_s", {{"forward", 0.04}, {"backward", 0.075}, {"data", 0.005}}},
                       {"collectives",
                        {{{"label", "bucket0"}, {"purpose", "gradients"}, {"bytes", 1e6}, {"seconds", 0.03}},
                         {{"label", "bucket1"}, {"purpose", "gradients"}, {"bytes", 1e6}, {"seconds", 0.02}}}}};
  Json point1 = point2;
  point1["gpus"] = 1;
  Json point4 = point2;
  point4["gpus"] = 4;
  return {{"scenario", "handmade"}, {"predictions", {point1, point2, point4}}};
}

Json measured_run(const std::string& id, int gpus, double images_per_sec) {
  return {{"id", id}, {"cluster", "local-cpu"}, {"nodes", 1}, {"gpus_per_node", gpus}, {"model", "lenet5"},
          {"batch_per_gpu", 32}, {"data", "synthetic"}, {"scheme", {{"name", "allreduce"}}},
          {"images_per_sec", images_per_sec}};
}

Json measurements() {
  Json a = measured_run("m2", 2, 320.0);  // iteration 64 / 320 = 0.2 s
  a["phases_per_iteration_s"] = {{"compute", 0.1}, {"exposed_comm", 0.08}, {"data", 0.01}};
  a["collectives"] = {{{"label", "bucket0"}, {"seconds", 0.04}}, {{"label", "other"}, {"seconds", 0.01}}};
  Json b = measured_run("m2-idle", 2, 320.0);
  b["phases_per_iteration_s"] = {{"compute", 0.1}, {"exposed_comm", 0.05}, {"data", 0.0}, {"idle", 0.04}};
  return {{"format", "scaletwin-measurements/1"}, {"runs", {a, b, measured_run("m8", 8, 1000.0)}}};
}

const Json& row(const Json& rows, const std::string& run, const std::string& figure) {
  for (const Json& r : rows)
    if (r.at("run") == run && r.at("figure") == figure) return r;
  FAIL("no row " << run << " " << figure);
  return rows;
}

}  // namespace

TEST_CASE("compare joins per GPU count phase and bucket with errors", "[cli]") {
  const fs::path dir = scratch("join");
  const std::string p = write(dir / "p.json", prediction());
  const std::string m = write(dir / "m.json", measurements());
  const Result r = run_scaletwin("compare " + p + " " + m + " --json " + (dir / "c.json").string());
  REQUIRE(r.code == 0);
  const Json c = Json::parse(std::ifstream(dir / "c.json"));
  const Json& rows = c.at("rows");
  CHECK(rows.size() == 12);  // m2: 5 figures and 1 common bucket; m2-idle: 6 figures, no buckets
  CHECK(row(rows, "m2", "iteration_s").at("predicted") == Approx(0.19));
  CHECK(row(rows, "m2", "iteration_s").at("measured") == Approx(0.2));
  CHECK(row(rows, "m2", "iteration_s").at("error") == Approx(-0.05));
  CHECK(row(rows, "m2", "images_per_sec").at("error") == Approx(0.2 / 0.19 - 1.0));
  CHECK(row(rows, "m2", "compute_s").at("predicted") == Approx(0.115));  // without the data phase
  CHECK(row(rows, "m2", "compute_s").at("error") == Approx(0.15));
  CHECK(row(rows, "m2", "exposed_comm_s").at("error") == Approx(-0.375));
  CHECK(row(rows, "m2", "data_s").at("error") == Approx(-0.5));
  CHECK(row(rows, "m2", "bucket:bucket0").at("error") == Approx(-0.25));
  CHECK(row(rows, "m2", "bucket:bucket0").at("gpus") == 2);
  CHECK(row(rows, "m2-idle", "idle_s").at("predicted") == Approx(0.02));
  CHECK(row(rows, "m2-idle", "idle_s").at("error") == Approx(-0.5));
  CHECK(row(rows, "m2-idle", "data_s").at("error").is_null());  // measured 0: no relative error
  for (const Json& x : rows) {
    CHECK((x.at("figure") != "idle_s" || x.at("run") == "m2-idle"));  // idle only where the run states it
    CHECK(x.at("figure") != "bucket:bucket1");                      // only buckets both sides time
    CHECK(x.at("figure") != "bucket:other");
  }
  CHECK(c.at("predicted_only_gpus") == Json::array({1, 4}));
  CHECK(c.at("measured_only_runs") == Json::array({"m8"}));
  CHECK(c.at("scenario") == "handmade");

  const Result table = run_scaletwin("compare " + p + " " + m);
  REQUIRE(table.code == 0);
  CHECK(table.out.find("bucket0") != std::string::npos);
  CHECK(table.out.find("bucket bucket0") == std::string::npos);  // the plan label, not prefixed
  CHECK(table.out.find("-37.5%") != std::string::npos);
  CHECK(table.out.find("exposed comm") != std::string::npos);
  CHECK(table.out.find("measured only: m8") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("compare reads what predict --json writes", "[cli]") {
  const fs::path dir = scratch("predict");
  const std::string p = (dir / "p.json").string();
  const Result predicted = run_scaletwin("predict " + std::string(SCALETWIN_SOURCE_DIR) +
                                         "/scenarios/local-lenet5-ring.json --gpus 1,2 --quiet --json " + p);
  REQUIRE(predicted.code == 0);
  const Json prediction = Json::parse(std::ifstream(p));
  const double iteration_s = prediction.at("predictions")[1].at("iteration_s");
  Json m = measurements();
  m["runs"] = Json::array({m["runs"][0]});
  m["runs"][0]["batch_per_gpu"] = 64;                                   // the scenario's
  m["runs"][0]["images_per_sec"] = 2.0 * 64.0 / (2.0 * iteration_s);  // measured twice the predicted time
  const Result r = run_scaletwin("compare " + p + " " + write(dir / "m.json", m) + " --json -");
  REQUIRE(r.code == 0);
  const Json c = Json::parse(r.out);
  CHECK(row(c.at("rows"), "m2", "iteration_s").at("error") == Approx(-0.5));
  CHECK(c.at("predicted_only_gpus") == Json::array({1}));
  fs::remove_all(dir);
}

TEST_CASE("compare refuses a run of another configuration than the prediction's, naming the field, unless "
          "--allow-mismatch",
          "[cli]") {
  const fs::path dir = scratch("mismatch");
  const std::string p = (dir / "p.json").string();
  REQUIRE(run_scaletwin("predict " + std::string(SCALETWIN_SOURCE_DIR) +
                        "/scenarios/local-lenet5-ring.json --gpus 1,2 --quiet --json " + p)
              .code == 0);
  const auto with = [&](const std::string& field, const Json& value) {
    Json m = measurements();
    m["runs"] = Json::array({m["runs"][0]});
    m["runs"][0]["batch_per_gpu"] = 64;
    m["runs"][0][field] = value;
    return write(dir / ("m-" + field + ".json"), m);
  };
  // Like with like: the scenario's model, cluster, batch and scheme compare; the figures are compared.
  CHECK(run_scaletwin("compare " + p + " " + with("model", "lenet5")).code == 0);
  const std::vector<std::pair<std::string, Json>> unlike = {
      {"model", "resnet50"}, {"batch_per_gpu", 32}, {"cluster", "aws-p2.xlarge"},
      {"scheme", {{"name", "ps"}, {"mode", "sync"}}}};
  for (const auto& [field, value] : unlike) {
    INFO(field);
    const std::string m = with(field, value);
    const Result r = run_scaletwin("compare " + p + " " + m);
    CHECK(r.code == 2);
    CHECK(r.out.find(m) != std::string::npos);
    CHECK(r.out.find("/runs/0/" + field) != std::string::npos);
    CHECK(r.out.find("--allow-mismatch") != std::string::npos);
    const Result allowed = run_scaletwin("compare " + p + " " + m + " --allow-mismatch --json -");
    CHECK(allowed.code == 0);
    CHECK(allowed.out.find("/runs/0/" + field) != std::string::npos);
    CHECK(Json::parse(allowed.out.substr(allowed.out.find('{'))).at("rows").size() > 0);
  }
  fs::remove_all(dir);
}

TEST_CASE("compare names the file and the field of bad input", "[cli]") {
  const fs::path dir = scratch("bad");
  const std::string m = write(dir / "m.json", measurements());
  Json p = prediction();
  p["predictions"][1].erase("iteration_s");
  const std::string bad_p = write(dir / "bad_p.json", p);
  Result r = run_scaletwin("compare " + bad_p + " " + m);
  CHECK(r.code == 2);
  CHECK(r.out.find("bad_p.json") != std::string::npos);
  CHECK(r.out.find("/predictions/1/iteration_s") != std::string::npos);

  Json bad = measurements();
  bad["runs"][0]["phases_per_iteration_s"]["compute"] = "fast";
  const std::string bad_m = write(dir / "bad_m.json", bad);
  r = run_scaletwin("compare " + write(dir / "p.json", prediction()) + " " + bad_m);
  CHECK(r.code == 2);
  CHECK(r.out.find("bad_m.json") != std::string::npos);
  CHECK(r.out.find("/runs/0/phases_per_iteration_s/compute") != std::string::npos);

  Json far = measurements();
  far["runs"] = Json::array({far["runs"][2]});  // 8 GPUs only: nothing to join
  r = run_scaletwin("compare " + (dir / "p.json").string() + " " + write(dir / "far.json", far));
  CHECK(r.code == 2);
  CHECK(r.out.find("far.json") != std::string::npos);

  const std::string out = (dir / "out.json").string();
  r = run_scaletwin("compare " + (dir / "missing.json").string() + " " + m + " --json " + out);
  CHECK(r.code == 2);
  CHECK(r.out.find("missing.json") != std::string::npos);
  CHECK_FALSE(fs::exists(out));
  fs::remove_all(dir);
}

TEST_CASE("compare sets a predicted time to target beside a run's measured one", "[cli]") {
  const fs::path dir = scratch("tta");
  Json pred = prediction();
  pred["predictions"][1]["time_to_target_s"] = 3.0;
  pred["predictions"][1]["images_to_target"] = 30000.0;
  Json meas = measurements();
  meas["runs"][0]["time_to_target"] = {{"target_accuracy", 0.8}, {"reached", true}, {"seconds", 2.5}, {"images", 25000.0}};
  meas["runs"][1]["time_to_target"] = {{"target_accuracy", 0.8}, {"reached", false}, {"seconds", nullptr}, {"images", nullptr}};
  const Result r = run_scaletwin("compare " + write(dir / "p.json", pred) + " " + write(dir / "m.json", meas) + " --json -");
  INFO(r.out);
  REQUIRE(r.code == 0);
  const Json rows = Json::parse(r.out).at("rows");
  CHECK(row(rows, "m2", "time_to_target_s").at("error").get<double>() == Approx(0.2));
  CHECK(row(rows, "m2", "images_to_target").at("error").get<double>() == Approx(0.2));
  for (const Json& x : rows) CHECK_FALSE((x.at("run") == "m2-idle" && x.at("figure") == "time_to_target_s"));
  fs::remove_all(dir);
}
