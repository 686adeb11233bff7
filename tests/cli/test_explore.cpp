// scaletwin explore through the binary: on a small space its answer equals an exhaustive loop of `predict` over the
// same candidates (time to target per candidate, the frontier, the best), a batch that cannot fit is pruned before
// simulation, the frontier's scenarios are written out and run with predict, and a malformed space exits 2 naming
// the field.
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

Json small_space() {
  return {{"format", "scaletwin-space/1"},
          {"name", "small"},
          {"model", "resnet50"},
          {"framework", "mxnet"},
          {"training",
           {{"optimizer", "lars"},
            {"lr_scaling", "tuned"},
            {"lr_reference_batch", 1632},
            {"target_accuracy", 0.759},
            {"dataset_images", 1281167},
            {"eval_every_epochs", 4},
            {"eval_offset_epochs", "varies"},
            {"eval_images", 50000},
            {"convergence", kSource + "/calibrations/convergence/resnet50-imagenet.json"}}},
          {"clusters",
           {{{"cluster", "dgx-a100"}, {"price_per_gpu_hour", 4.0}, {"price_source", "test"}},
            {{"cluster", "dgx-h100"}, {"price_per_gpu_hour", 12.0}, {"price_source", "test"}}}},
          {"gpus", {8, 16}},
          {"schemes", {{{"name", "allreduce"}, {"algorithm", "ring"}}}},
          {"batch_per_gpu", {64, 100000}},  // 100,000 images per GPU fit no device: pruned
          {"precision", {"fp16"}},
          {"objective", "cost"}};
}

}  // namespace

TEST_CASE("explore: a small space gives the answer of an exhaustive loop of predict", "[cli]") {
  const fs::path dir = fs::temp_directory_path() / ("st_explore_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string space = (dir / "space.json").string();
  std::ofstream(space) << small_space().dump(1);
  const std::string out = (dir / "explore.json").string();
  auto r = run_scaletwin("explore " + space + " -q --exhaustive --json " + out + " --write-frontier " +
                         (dir / "frontier").string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  const Json j = Json::parse(std::ifstream(out));
  REQUIRE(j["candidates"].size() == 8);  // 2 clusters x 2 GPU counts x 1 scheme x 2 batches x 1 precision
  int simulated = 0;
  std::string fastest, cheapest;
  double best_time = 1e300, best_cost = 1e300;
  for (const Json& c : j["candidates"]) {
    INFO(c.dump().substr(0, 400));
    if (c["batch_per_gpu"] == 100000) {
      CHECK(c["pruned"].get<std::string>().find("does not fit") != std::string::npos);
      continue;
    }
    ++simulated;
    // The same candidate through predict, as a user would write it: the same time to target.
    const std::string file = (dir / (c["label"].get<std::string>() + ".json")).string();
    Json scenario = c["scenario"];
    std::ofstream(file) << scenario.dump(1);
    const auto p = run_scaletwin("predict " + file + " --gpus " + std::to_string(c["gpus"].get<int>()) +
                                 " --fidelity fast -q --json -");
    REQUIRE(p.code == 0);
    const Json point = Json::parse(p.out)["predictions"][0];
    CHECK(c["time_to_target_s"].get<double>() == Approx(point["time_to_target_s"].get<double>()).epsilon(1e-9));
    CHECK(c["cost"].get<double>() == Approx(point["time_to_target_s"].get<double>() * c["gpus"].get<int>() *
                                            (c["cluster"] == "dgx-a100" ? 4.0 : 12.0) / 3600.0));
    if (c["time_to_target_s"].get<double>() < best_time) best_time = c["time_to_target_s"], fastest = c["label"];
    if (c["cost"].get<double>() < best_cost) best_cost = c["cost"], cheapest = c["label"];
  }
  CHECK(simulated == 4);
  CHECK(j["best"] == cheapest);  // the objective is the cost
  // The frontier: the fastest and the cheapest are on it, and nothing on it is beaten in both.
  int on_frontier = 0;
  for (const Json& c : j["candidates"]) {
    if (!c.contains("frontier") || !c["frontier"].get<bool>()) continue;
    ++on_frontier;
    CHECK(fs::exists(dir / "frontier" / (c["label"].get<std::string>() + ".json")));
    for (const Json& d : j["candidates"])
      if (d.contains("cost"))
        CHECK_FALSE((d["time_to_target_s"] < c["time_to_target_s"] && d["cost"] < c["cost"]));
  }
  CHECK(on_frontier >= 1);
  for (const Json& c : j["candidates"])
    if (c["label"] == fastest || c["label"] == cheapest) CHECK(c["frontier"] == true);
  // Pruning the dominated candidates before simulation changes neither the frontier nor the best, and no simulated
  // candidate beats its best case (its GPUs at one GPU's rate, without communication or evaluations).
  const std::string pruned_out = (dir / "pruned.json").string();
  const std::string html = (dir / "explore.html").string();
  r = run_scaletwin("explore " + space + " -q --json " + pruned_out + " --html " + html);
  REQUIRE(r.code == 0);
  const Json pruned = Json::parse(std::ifstream(pruned_out));
  CHECK(pruned["frontier"] == j["frontier"]);
  CHECK(pruned["best"] == j["best"]);
  CHECK(pruned["counts"]["simulated"].get<int>() + pruned["counts"]["pruned_dominated"].get<int>() == 4);
  int bounded = 0;
  for (const Json& c : pruned["candidates"]) {
    if (!c.contains("least_time_to_target_s") || !c.contains("time_to_target_s")) continue;
    ++bounded;
    CHECK(c["time_to_target_s"].get<double>() >= c["least_time_to_target_s"].get<double>());
  }
  CHECK(bounded >= 1);
  std::ifstream page(html);
  const std::string text((std::istreambuf_iterator<char>(page)), std::istreambuf_iterator<char>());
  CHECK(text.find("data-chart=\"pareto\"") != std::string::npos);
  CHECK(text.find(j["best"].get<std::string>() + " (best)") != std::string::npos);
  // A written frontier scenario runs with predict.
  for (const auto& e : fs::directory_iterator(dir / "frontier")) {
    const auto p = run_scaletwin("predict " + e.path().string() + " --fidelity fast -q");
    CHECK(p.code == 0);
    break;
  }
  fs::remove_all(dir);
}

TEST_CASE("explore: a malformed or empty space exits 2 naming the field", "[cli]") {
  const fs::path dir = fs::temp_directory_path() / ("st_explore_bad_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string space = (dir / "space.json").string();
  for (const auto& [edit, field] : std::vector<std::pair<std::function<void(Json&)>, std::string>>{
           {[](Json& s) { s["gpus"] = Json::array(); }, "/gpus"},
           {[](Json& s) { s["gpus"] = {8, 0}; }, "/gpus/1"},
           {[](Json& s) { s["clusters"][1]["price_per_gpu_hour"] = 0; }, "/objective"},
           {[](Json& s) { s["schemes"] = Json::array(); }, "/schemes"},
           {[](Json& s) { s["objective"] = "fastest"; }, "/objective"},
           {[](Json& s) { s["training"].erase("target_accuracy"); }, "/training/target_accuracy"},
           {[](Json& s) { s["batchs_per_gpu"] = {1}; }, "batchs_per_gpu"}}) {
    Json s = small_space();
    edit(s);
    std::ofstream(space) << s.dump(1);
    const auto r = run_scaletwin("explore " + space + " -q");
    INFO(field << "\n" << r.out);
    CHECK(r.code == 2);
    CHECK(r.out.find(field) != std::string::npos);
    CHECK(r.out.find("space.json") != std::string::npos);
  }
  fs::remove_all(dir);
}
