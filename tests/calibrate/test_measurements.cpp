// The measurements reader: a valid file (relative paths, unknown fields kept), and bad files whose errors name the
// file and the JSON path; the hold-out filter.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "calibrate/jitter.hpp"
#include "calibrate/measurements.hpp"
#include "core/error.hpp"

using namespace scaletwin;
using namespace scaletwin::calibrate;

namespace {

Json good_run() {
  return Json::parse(R"({"id": "r1", "source": "test", "cluster": "aws-p2.8xlarge", "nodes": 2, "gpus_per_node": 8,
    "model": "resnet50", "batch_per_gpu": 64, "data": "synthetic",
    "scheme": {"name": "ps", "mode": "sync", "servers": 2, "placement": "colocated", "local_aggregation": true},
    "images_per_sec": 751, "loss": 6.9, "ranks": [{"rank": 0}]})");
}

Json document(const Json& run) { return {{"format", "scaletwin-measurements/1"}, {"note", "x"}, {"runs", {run}}}; }

// The InputError that parsing `doc` as `file` throws (fails the test if none).
InputError error_of(const Json& doc, const std::string& file = "m.json") {
  try {
    parse_measurements(doc, file);
  } catch (const InputError& e) {
    return e;
  }
  FAIL("no InputError");
  return InputError("");
}

}  // namespace

TEST_CASE("a valid measurements file is read with its fields, unknown ones kept", "[unit]") {
  const auto runs = parse_measurements(document(good_run()), "dir/m.json");
  REQUIRE(runs.size() == 1);
  const MeasuredRun& r = runs[0];
  CHECK(r.id == "r1");
  CHECK(r.cluster == "aws-p2.8xlarge");
  CHECK(r.gpus() == 16);
  CHECK(r.batch_per_gpu == 64);
  CHECK(r.images_per_sec == 751);
  CHECK(r.scheme.kind == plan::SchemeKind::kPs);
  CHECK(r.scheme.ps.servers == 2);
  CHECK(r.scheme.ps.local_aggregation);
  CHECK(r.json_path == "/runs/0");
  CHECK(r.raw.at("loss") == 6.9);
  const plan::Scenario s = scenario_of(r);
  CHECK(s.nodes == 2);
  CHECK(s.gpus_per_node == 8);
  CHECK(s.training.data == "synthetic");
}

TEST_CASE("cluster and model paths are relative to the measurements file", "[unit]") {
  const auto dir = std::filesystem::temp_directory_path() / "scaletwin-test-measurements";
  std::filesystem::create_directories(dir / "sub");
  Json run = good_run();
  run["cluster"] = "sub/cluster.json";
  run["model"] = "../models/m.json";
  const std::string path = (dir / "m.json").string();
  std::ofstream(path) << document(run).dump();
  const auto runs = load_measurements(path);
  CHECK(runs[0].cluster == (dir / "sub/cluster.json").lexically_normal().string());
  CHECK(runs[0].model == (dir.parent_path() / "models/m.json").lexically_normal().string());
  CHECK(parse_measurements(document(good_run()), path)[0].cluster == "aws-p2.8xlarge");  // names stay names
  CHECK(runs[0].file == path);
  std::filesystem::remove_all(dir);
}

TEST_CASE("bad measurements files name the file and the JSON path", "[unit]") {
  struct Case {
    std::string what;
    Json doc;
    std::string path;
  };
  std::vector<Case> cases;
  Json d = document(good_run());
  d["format"] = "scaletwin-measurements/0";
  cases.push_back({"wrong format", d, "/format"});
  d = document(good_run());
  d.erase("runs");
  cases.push_back({"no runs", d, "/runs"});
  Json r = good_run();
  r["images_per_sec"] = -3;
  cases.push_back({"negative throughput", document(r), "/runs/0/images_per_sec"});
  r = good_run();
  r["gpus_per_node"] = 0;
  cases.push_back({"zero GPUs per node", document(r), "/runs/0/gpus_per_node"});
  r = good_run();
  r["scheme"]["servers_count"] = 3;
  cases.push_back({"unknown scheme key", document(r), "/runs/0/scheme"});
  r = good_run();
  r["data"] = "imaginary";
  cases.push_back({"bad data kind", document(r), "/runs/0/data"});
  r = good_run();
  r.erase("model");
  cases.push_back({"missing model", document(r), "/runs/0/model"});
  d = document(good_run());
  d["runs"].push_back(good_run());
  cases.push_back({"duplicate id", d, "/runs/1/id"});
  r = good_run();
  r["batch_per_gpu"] = "sixty-four";
  cases.push_back({"batch as text", document(r), "/runs/0/batch_per_gpu"});
  for (const Case& c : cases) {
    INFO(c.what);
    const InputError e = error_of(c.doc, "bad.json");
    CHECK(e.file() == "bad.json");
    CHECK(e.json_path().rfind(c.path, 0) == 0);
    CHECK(std::string(e.what()).find("bad.json") != std::string::npos);
  }
}

TEST_CASE("a missing or unparsable file is an InputError naming it", "[unit]") {
  CHECK_THROWS_AS(load_measurements("/nonexistent/m.json"), InputError);
}

TEST_CASE("hold-out filters compare numbers as numbers and text as text", "[unit]") {
  const MeasuredRun r = parse_measurements(document(good_run()), "m.json")[0];
  CHECK(parse_run_filter("nodes>1", "--holdout")(r));
  CHECK_FALSE(parse_run_filter("nodes > 2", "--holdout")(r));
  CHECK(parse_run_filter("gpus>=16", "--holdout")(r));
  CHECK(parse_run_filter("gpus<100", "--holdout")(r));  // as text "16" > "100"
  CHECK(parse_run_filter("model==resnet50", "--holdout")(r));
  CHECK(parse_run_filter("data!=real", "--holdout")(r));
  CHECK(parse_run_filter("scheme==ps", "--holdout")(r));
  CHECK_THROWS_AS(parse_run_filter("nodes", "--holdout"), InputError);
}

TEST_CASE("compute_jitter: read when present, its range checked, and set per device from the co-running runs",
          "[unit]") {
  Json one = good_run(), two = good_run(), alone = good_run();
  one["id"] = "shared-a";
  one["compute_jitter"] = 0.04;
  two["id"] = "shared-b";
  two["compute_jitter"] = 0.08;
  alone["id"] = "alone";
  alone["gpus_per_node"] = 1;
  alone["compute_jitter"] = 0.5;
  Json plain = good_run();
  plain["id"] = "plain";
  const Json doc = {{"format", "scaletwin-measurements/1"}, {"runs", {one, two, alone, plain}}};
  const auto runs = parse_measurements(doc, "m.json");
  REQUIRE(runs.size() == 4);
  CHECK(*runs[0].compute_jitter == 0.04);
  CHECK_FALSE(runs[3].compute_jitter.has_value());
  // Runs with co-runners (2+ workers per node) are the ones used when there are any: (0.04 + 0.08) / 2.
  sim::Calibration c = sim::default_calibration();
  const auto set = apply_measured_jitter(runs, c);
  REQUIRE(set.size() == 1);
  CHECK(set[0].device == run_device(runs[0]));
  CHECK(set[0].value == Approx(0.06));
  CHECK(set[0].runs == std::vector<std::string>{"shared-a", "shared-b"});
  CHECK(c.device(set[0].device).compute_jitter == Approx(0.06));
  // Only runs alone on their node: they are used.
  sim::Calibration lone = sim::default_calibration();
  const auto from_alone = apply_measured_jitter({runs[2]}, lone);
  REQUIRE(from_alone.size() == 1);
  CHECK(lone.device(from_alone[0].device).compute_jitter == Approx(0.5));
  // No run carries it: nothing changes.
  sim::Calibration none = sim::default_calibration();
  CHECK(apply_measured_jitter({runs[3]}, none).empty());
  Json bad = good_run();
  bad["compute_jitter"] = -1;
  const InputError e = error_of(document(bad));
  CHECK(e.file() == "m.json");
  CHECK(e.json_path() == "/runs/0/compute_jitter");
}
