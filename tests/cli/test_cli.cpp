// The scaletwin command as users and scripts see it: exit codes, messages that name the place, JSON fields of the
// spec, and no half-written output file after a failure.
#include <catch2/catch.hpp>

#include "run_binary.hpp"

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

namespace fs = std::filesystem;

namespace {

using scaletwin::test::Result;

Result run(const std::string& args) { return scaletwin::test::run_scaletwin(args); }

fs::path scratch() {
  const fs::path dir = fs::temp_directory_path() / ("scaletwin_cli_" + std::to_string(getpid()));
  fs::create_directories(dir);
  return dir;
}

std::string write(const fs::path& path, const std::string& text) {
  std::ofstream(path) << text;
  return path.string();
}

}  // namespace

TEST_CASE("describe --model gives the spec's fields and exact counts", "[cli]") {
  const Result r = run("describe --model resnet50 --json -");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["model"] == "resnet50");
  CHECK(j["params"] == 25557032);
  CHECK(j["fwd_flops_per_sample"].get<double>() == Approx(2 * 4.1e9).epsilon(0.03));
  CHECK(j["layers"].is_array());
}

TEST_CASE("bad input exits 2 with a message naming the file, the path and what was expected", "[cli]") {
  const fs::path dir = scratch();
  struct Case {
    std::string args;
    std::vector<std::string> says;
  };
  const std::string unknown_key =
      write(dir / "typo.json", R"({"model": "resnet50", "cluster": "aws-p2.8xlarge", "batch_per_gpu": 32, "nodez": 2})");
  const std::string negative =
      write(dir / "neg.json", R"({"model": "resnet50", "cluster": "aws-p2.8xlarge", "batch_per_gpu": -1})");
  const std::string bad_model_name = write(dir / "m.json", R"({"model": "resnet51", "cluster": "aws-p2.8xlarge"})");
  const std::string bad_cluster_name = write(dir / "c.json", R"({"model": "resnet50", "cluster": "aws-p3"})");
  const std::string broken = write(dir / "broken.json", "{\"model\": \"resnet50\",\n \"cluster\": }");
  const std::string good = write(dir / "good.json", R"({"model": "lenet5", "cluster": "aws-p2.8xlarge", "nodes": 1})");
  const std::string one_node = write(dir / "one.json", R"({"model": "lenet5", "cluster": "gce-k80x8"})");
  const std::string shape = write(dir / "shape.json", R"({"name": "tiny", "input": [1, 4, 4], "classes": 10,
      "layers": [{"name": "c", "type": "conv", "out_channels": 2, "kernel": 7}]})");
  const std::string zero_bw = write(dir / "zero.json", R"({"model": "lenet5", "cluster": "aws-p2.8xlarge",
      "scheme": {"name": "allreduce", "bucket_bytes": 0}})");
  const Case cases[] = {
      {"predict " + unknown_key, {"typo.json", "/nodez", "unknown key"}},
      {"describe " + negative, {"neg.json", "/batch_per_gpu"}},
      {"describe " + bad_model_name, {"m.json", "/model", "resnet50"}},
      {"describe " + bad_cluster_name, {"c.json", "/cluster", "aws-p2.8xlarge"}},
      {"predict " + broken, {"broken.json", "line 2"}},
      {"predict /no/such/file.json", {"/no/such/file.json"}},
      {"predict " + good + " --gpus 0,2", {"--gpus", "positive integers"}},
      {"predict " + one_node + " --gpus 16", {"one.json", "/nodes", "at most 1 nodes on gce-k80x8 (2 needed)"}},
      {"predict " + good + " --nodes -1", {"--nodes", "positive"}},
      {"describe --model " + shape, {"shape.json", "/layers/0"}},
      {"describe " + zero_bw, {"zero.json", "/scheme/bucket_bytes"}},
      {"describe --model no_such_model", {"no_such_model", "resnet50"}},
      {"describe --cluster no_such_cluster", {"no_such_cluster", "dgx-h200"}},
      {"collective --algo butterfly --ranks 4 --bytes 1MB", {"butterfly", "ring"}},
      {"collective --algo ring --ranks 4 --bytes lots", {"lots"}},
  };
  for (const Case& c : cases) {
    INFO(c.args);
    const Result r = run(c.args);
    INFO(r.out);
    CHECK(r.code == 2);
    for (const auto& s : c.says) CHECK(r.out.find(s) != std::string::npos);
  }
  CHECK(run("").code == 2);  // no subcommand
  fs::remove_all(dir);
}

TEST_CASE("predict grows the cluster to the GPU counts asked for, and says so", "[cli]") {
  const fs::path dir = scratch();
  const std::string one = write(dir / "one.json", R"({"model": "lenet5", "cluster": "aws-p2.8xlarge", "nodes": 1})");
  const Result grown = run("predict " + one + " --gpus 8,16");
  INFO(grown.out);
  CHECK(grown.code == 0);
  CHECK(grown.out.find("2 nodes of aws-p2.8xlarge instead of the scenario's 1 (grown to fit --gpus)") != std::string::npos);
  CHECK(grown.out.find("[2 nodes]") != std::string::npos);
  const Result asked = run("predict " + one + " --nodes 4 --gpus 32 --json -");
  INFO(asked.out);
  REQUIRE(asked.code == 0);
  CHECK(asked.out.find("(--nodes)") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("predict says which convolutions the framework's workspace cap keeps from Winograd", "[cli]") {
  const fs::path dir = scratch();
  const std::string mxnet = write(dir / "mxnet.json", R"({"model": "vgg16", "cluster": "aws-p2.xlarge", "framework": "mxnet",
      "batch_per_gpu": 32, "scheme": {"name": "allreduce"}, "sweep": {"gpus": [1]}})");
  const Result capped = run("predict " + mxnet + " --json " + (dir / "capped.json").string());
  INFO(capped.out);
  REQUIRE(capped.code == 0);
  CHECK(capped.out.find("4 of the 13 3x3 convolutions of vgg16 need more than mxnet's 1.00 GiB") != std::string::npos);
  // The shipped calibration with MXNet's cap lifted (a run with its `workspace` raised): no note, and faster.
  nlohmann::json calibration;
  std::ifstream(std::string(SCALETWIN_SOURCE_DIR) + "/calibrations/k80.json") >> calibration;
  calibration["stacks"]["mxnet"]["conv_workspace_bytes"] = 1e12;
  const std::string lifted_file = write(dir / "lifted.json", calibration.dump());
  const Result lifted = run("predict " + mxnet + " --calibration " + lifted_file + " --json " + (dir / "lifted-out.json").string());
  INFO(lifted.out);
  REQUIRE(lifted.code == 0);
  CHECK(lifted.out.find("3x3 convolutions") == std::string::npos);
  const auto images_per_sec = [](const fs::path& f) {
    nlohmann::json j;
    std::ifstream(f) >> j;
    return j.at("predictions").at(0).at("images_per_sec").get<double>();
  };
  CHECK(images_per_sec(dir / "lifted-out.json") > 1.2 * images_per_sec(dir / "capped.json"));
  fs::remove_all(dir);
}

TEST_CASE("predict says when a framework's dispatch is a large share of the step", "[cli]") {
  const fs::path dir = scratch();
  const auto scenario = [&](const std::string& name, const std::string& framework, int batch) {
    return write(dir / name, R"({"model": "resnet50", "cluster": "aws-p2.xlarge", "framework": ")" + framework +
                                 R"(", "batch_per_gpu": )" + std::to_string(batch) +
                                 R"(, "scheme": {"name": "allreduce"}, "sweep": {"gpus": [1]}})");
  };
  // The shipped calibration's TensorFlow dispatch: a large share of a batch-8 step, a small one at batch 64.
  const Result small = run("predict " + scenario("tf8.json", "tensorflow", 8));
  INFO(small.out);
  REQUIRE(small.code == 0);
  CHECK(small.out.find("predict: tensorflow's dispatch (") != std::string::npos);
  CHECK(small.out.find("compute ops of resnet50's step at batch 8) is") != std::string::npos);
  const Result large = run("predict " + scenario("tf64.json", "tensorflow", 64));
  INFO(large.out);
  REQUIRE(large.code == 0);
  CHECK(large.out.find("predict: tensorflow's dispatch") == std::string::npos);
  // MXNet's fixed 20 us per op is a small share at batch 8: no note; -q says nothing.
  const Result mxnet = run("predict " + scenario("mx8.json", "mxnet", 8));
  REQUIRE(mxnet.code == 0);
  CHECK(mxnet.out.find("dispatch") == std::string::npos);
  // Beyond the 21% it adds on the calibration's own runs, the report covers the prediction without it too (a line
  // of the table, so -q keeps it, where the note on standard error goes).
  CHECK(small.out.find("more than the 21% of any run its calibration was fitted on") != std::string::npos);
  const Result quiet = run("predict -q " + (dir / "tf8.json").string());
  REQUIRE(quiet.code == 0);
  CHECK(quiet.out.find("predict: tensorflow's dispatch (") == std::string::npos);
  CHECK(quiet.out.find("tensorflow's dispatch adds 38% of the step's compute at batch 8") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("a failing command leaves no output file behind", "[cli]") {
  const fs::path dir = scratch();
  const std::string bad = write(dir / "bad.json", R"({"model": "resnet50", "cluster": "gce-k80x8", "nodes": 1})");
  const fs::path out = dir / "out.json";
  const Result r = run("predict " + bad + " --gpus 1,64 --json " + out.string());
  CHECK(r.code == 2);
  CHECK_FALSE(fs::exists(out));
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++files;
  CHECK(files == 1);  // only the scenario: no temporary either
  fs::remove_all(dir);
}

TEST_CASE("every subcommand answers --help", "[cli]") {
  for (const char* sub : {"describe", "collective", "predict", "run", "calibrate", "validate"}) {
    INFO(sub);
    const Result r = run(std::string(sub) + " --help");
    CHECK(r.code == 0);
    CHECK(r.out.find("Usage") != std::string::npos);
  }
}

TEST_CASE("validate pools runs that share an id into one, and refuses an id repeated for another configuration",
          "[cli]") {
  const fs::path dir = scratch();
  const std::string calibration = write(dir / "cal.json", R"({"format": "scaletwin-calibration/1"})");
  const auto measurements = [&](const std::string& name, int batch, double rate) {
    return write(dir / name, R"({"format": "scaletwin-measurements/1", "runs": [{"id": "twice", "cluster": "local-cpu",
        "nodes": 1, "gpus_per_node": 2, "model": "lenet5", "batch_per_gpu": )" + std::to_string(batch) +
                                 R"(, "scheme": {"name": "allreduce"}, "images_per_sec": )" + std::to_string(rate) + "}]}");
  };
  const std::string fast = measurements("fast.json", 64, 3000), slow = measurements("slow.json", 64, 1000);
  const Result r = run("validate -q --calibration " + calibration + " --measurements " + fast + " --measurements " +
                       slow + " --json -");
  INFO(r.out);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["runs"].size() == 1);
  CHECK(j["runs"][0]["id"] == "twice");
  CHECK(j["runs"][0]["repeats"] == 2);
  CHECK(j["runs"][0]["measured_images_per_sec"].get<double>() == Approx(1500.0));  // 2 / (1/3000 + 1/1000)
  CHECK(j["runs"][0]["measured_std_error"].get<double>() == Approx(0.5));
  const std::string other = measurements("other.json", 32, 1000);
  const Result bad = run("validate -q --calibration " + calibration + " --measurements " + fast + " --measurements " +
                         other);
  INFO(bad.out);
  CHECK(bad.code == 2);
  CHECK(bad.out.find("other.json") != std::string::npos);
  CHECK(bad.out.find("/runs/0/batch_per_gpu") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("validate names a measured run's own field when its cluster or model does not fit, and keeps unknown "
          "scheme fields",
          "[cli]") {
  const fs::path dir = scratch();
  const std::string calibration = write(dir / "cal.json", R"({"format": "scaletwin-calibration/1"})");
  const auto measurements = [&](const std::string& name, const std::string& fields) {
    return write(dir / name, R"({"format": "scaletwin-measurements/1", "runs": [{"id": "ok", "cluster": "local-cpu",
        "nodes": 1, "gpus_per_node": 1, "model": "lenet5", "batch_per_gpu": 16, "scheme": {"name": "allreduce"},
        "images_per_sec": 900}, {"id": "r", "batch_per_gpu": 16, "images_per_sec": 900, )" + fields + "}]}");
  };
  struct Case {
    std::string file;
    std::string fields;
    std::vector<std::string> says;
  };
  const std::string allreduce = R"("scheme": {"name": "allreduce"})";
  const Case cases[] = {
      {"big.json",
       R"("cluster": "aws-p2.8xlarge", "nodes": 1, "gpus_per_node": 9, "model": "lenet5", )" + allreduce,
       {"big.json at /runs/1/gpus_per_node", "at most the 8 devices"}},
      {"nocluster.json",
       R"("cluster": "no/such/cluster.json", "nodes": 1, "gpus_per_node": 1, "model": "lenet5", )" + allreduce,
       {"nocluster.json at /runs/1/cluster", "an existing cluster file"}},
      {"nomodel.json",
       R"("cluster": "local-cpu", "nodes": 1, "gpus_per_node": 1, "model": "no/such/model.json", )" + allreduce,
       {"nomodel.json at /runs/1/model", "an existing model file"}},
      {"fc.json",
       R"("cluster": "local-cpu", "nodes": 1, "gpus_per_node": 1, "model": "lenet5",
           "scheme": {"name": "hybrid", "model_parallel": ["conv1"]})",
       {"fc.json at /runs/1/scheme/model_parallel/0", "fully connected"}},
  };
  for (const Case& c : cases) {
    const std::string file = measurements(c.file, c.fields);
    const std::string out = (dir / ("out-" + c.file)).string();
    const Result r = run("validate -q --calibration " + calibration + " --measurements " + file + " --json " + out);
    INFO(c.file << ": " << r.out);
    CHECK(r.code == 2);
    for (const auto& s : c.says) CHECK(r.out.find(s) != std::string::npos);
    CHECK_FALSE(fs::exists(out));
  }
  // A scheme field outside the vocabulary (how a paper names its setup) is kept, said, and the run simulated.
  const std::string kept = measurements("kept.json", R"("cluster": "local-cpu", "nodes": 1, "gpus_per_node": 1,
      "model": "lenet5", "scheme": {"name": "allreduce", "nccl_algo": "tree"})");
  const Result r = run("validate -q --calibration " + calibration + " --measurements " + kept);
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(r.out.find("validate: scheme field \"nccl_algo\" ignored") != std::string::npos);
  CHECK(r.out.find(": 1 run (first: " + kept + " at /runs/1/scheme/nccl_algo)") != std::string::npos);
  CHECK(r.out.find("MAPE") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("validate --cv fits on a compound filter and predicts the rest and its fit options need --cv", "[cli]") {
  const fs::path dir = scratch();
  const std::string file = write(dir / "m.json", R"({"format": "scaletwin-measurements/1", "runs": [
      {"id": "one", "cluster": "local-cpu", "nodes": 1, "gpus_per_node": 1, "model": "lenet5", "batch_per_gpu": 64,
       "scheme": {"name": "allreduce"}, "images_per_sec": 2000},
      {"id": "two", "cluster": "local-cpu", "nodes": 1, "gpus_per_node": 2, "model": "lenet5", "batch_per_gpu": 64,
       "scheme": {"name": "allreduce"}, "images_per_sec": 3600}]})");
  // lenet5's one-GPU run calibrates its factor; its two-GPU run is predicted.
  const Result r = run("validate -q --cv 'model!=lenet5 || gpus<=1' --model-factors --measurements " + file +
                       " --json -");
  INFO(r.out);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["runs"].size() == 1);
  CHECK(j["runs"][0]["id"] == "two");
  // two ranks of the one that was fitted to 2,000 images/s: at most twice that, and not less than it
  const double predicted = j["runs"][0]["predicted_images_per_sec"].get<double>();
  CHECK(predicted <= 4000.0 * 1.01);
  CHECK(predicted >= 2000.0);
  for (const char* option : {"--model-factors", "--fix devices/cpu/conv", "--fit stacks/mxnet/op_overhead_s"}) {
    const Result alone = run(std::string("validate -q --calibration none --measurements ") + file + " " + option);
    INFO(option << ": " << alone.out);
    CHECK(alone.code == 2);
    CHECK(alone.out.find(std::string(option).substr(0, std::string(option).find(' '))) != std::string::npos);
    CHECK(alone.out.find("--cv as well") != std::string::npos);
  }
  fs::remove_all(dir);
}

TEST_CASE("a user's own network: its factor from one-GPU runs on the shipped calibration carries to predict", "[cli]") {
  using nlohmann::json;
  const fs::path dir = scratch();
  const std::string model = write(dir / "mynet.json", R"({"format": "scaletwin-model/1", "name": "mynet",
      "input": [3, 224, 224], "classes": 1000, "layers": [
      {"name": "c1", "type": "conv", "out_channels": 64, "kernel": 7, "stride": 2, "padding": 3},
      {"name": "r1", "type": "relu"}, {"name": "p1", "type": "maxpool", "kernel": 2},
      {"name": "c2", "type": "conv", "out_channels": 128, "kernel": 3, "padding": 1},
      {"name": "r2", "type": "relu"}, {"name": "p2", "type": "maxpool", "kernel": 8},
      {"name": "fc", "type": "fc", "out_features": "classes"}, {"name": "loss", "type": "softmax_cross_entropy"}]})");
  const json common = {{"cluster", "aws-p2.8xlarge"}, {"nodes", 1}, {"model", model}, {"framework", "tensorflow"},
                       {"scheme", {{"name", "allreduce"}}}};
  json scenario = common;
  scenario.update({{"name", "mine"}, {"gpus_per_node", 8}, {"batch_per_gpu", 64}, {"sweep", {{"gpus", {1, 8}}}}});
  const std::string scenario_file = write(dir / "s.json", scenario.dump());
  const Result shipped = run("predict -q " + scenario_file + " --json -");
  REQUIRE(shipped.code == 0);
  const json before = json::parse(shipped.out)["predictions"];
  const double one = before[0]["images_per_sec"].get<double>();
  // "measured" on one GPU 20% slower than the shipped calibration predicts, at batch 64 and 32
  json runs = {{"format", "scaletwin-measurements/1"}, {"runs", json::array()}};
  for (const int batch : {64, 32}) {
    json r = common;
    r.update({{"id", "b" + std::to_string(batch)}, {"gpus_per_node", 1}, {"batch_per_gpu", batch},
              {"images_per_sec", 0.8 * one}});
    runs["runs"].push_back(r);
  }
  const std::string runs_file = write(dir / "runs.json", runs.dump());
  const std::string mine = (dir / "mine.json").string();
  const Result fit = run("calibrate -q --start shipped:k80 --model-factors-only --measurements " + runs_file + " -o " +
                         mine);
  INFO(fit.out);
  REQUIRE(fit.code == 0);
  CHECK(fit.out.find("fitted 1 parameters") != std::string::npos);
  CHECK(fit.out.find("model_factors/mynet") != std::string::npos);
  json calibration, shipped_file;
  std::ifstream(mine) >> calibration;
  std::ifstream(std::string(SCALETWIN_SOURCE_DIR) + "/calibrations/k80.json") >> shipped_file;
  CHECK(calibration["prediction_interval"]["log_sd"] == shipped_file["prediction_interval"]["log_sd"]);
  const Result own = run("predict -q " + scenario_file + " --calibration " + mine + " --json -");
  REQUIRE(own.code == 0);
  const json after = json::parse(own.out)["predictions"];
  // the network runs slower by what its one-GPU runs said, on one GPU and on eight
  CHECK(after[0]["images_per_sec"].get<double>() < 0.9 * one);
  CHECK(after[0]["images_per_sec"].get<double>() > 0.7 * one);
  CHECK(after[1]["images_per_sec"].get<double>() < 0.9 * before[1]["images_per_sec"].get<double>());
  fs::remove_all(dir);
}

TEST_CASE("describe names the software stack a scenario runs on", "[cli]") {
  const fs::path dir = scratch();
  const std::string ps = write(dir / "ps.json", R"({"model": "lenet5", "cluster": "aws-p2.8xlarge",
      "scheme": {"name": "ps"}})");
  const std::string mx = write(dir / "mx.json", R"({"model": "lenet5", "cluster": "aws-p2.8xlarge",
      "scheme": {"name": "ps"}, "framework": "mxnet"})");
  const Result a = run("describe " + ps + " --json -");
  const Result b = run("describe " + mx);
  REQUIRE(a.code == 0);
  REQUIRE(b.code == 0);
  CHECK(nlohmann::json::parse(a.out).at("stack") == "tensorflow");
  CHECK(b.out.find("stack     mxnet") != std::string::npos);
  fs::remove_all(dir);
}

// A scheme silent on its servers: the spec's one under TensorFlow, one per worker node under MXNet (its launcher's
// default); describe gives each point's count.
TEST_CASE("describe gives the servers of every point: MXNet's default is one per worker node", "[cli]") {
  const fs::path dir = scratch();
  const std::string scheme = R"("scheme": {"name": "ps"}, "nodes": 2, "sweep": {"gpus": [8, 16]})";
  const std::string tf = write(dir / "tf.json", R"({"model": "lenet5", "cluster": "aws-p2.8xlarge", )" + scheme + "}");
  const std::string mx = write(dir / "mx.json", R"({"model": "lenet5", "cluster": "aws-p2.8xlarge",
      "framework": "mxnet", )" + scheme + "}");
  const auto servers = [](const Result& r) {
    INFO(r.out);
    REQUIRE(r.code == 0);
    const nlohmann::json j = nlohmann::json::parse(r.out);
    std::vector<int> out;
    for (const auto& p : j.at("sweep")) out.push_back(p.at("servers").get<int>());
    return out;
  };
  CHECK(servers(run("describe " + tf + " --json -")) == std::vector<int>{1, 1});
  CHECK(servers(run("describe " + mx + " --json -")) == std::vector<int>{1, 2});
  const Result text = run("describe " + mx);
  CHECK(text.out.find("servers  max share  endpoints") != std::string::npos);
  // The largest share of the parameters one server holds: a quarter of VGG16 on 4 servers when every tensor is
  // split, fc6's 74% and more when TensorFlow keeps each whole.
  const auto share = [&](const std::string& tensors) {
    const std::string vgg = write(dir / ("vgg-" + tensors + ".json"), R"({"model": "vgg16", "cluster": "aws-p2.8xlarge",
        "framework": "tensorflow", "scheme": {"name": "ps", "servers": 4, "placement": "device", "tensors": ")" +
                                                                        tensors + R"("}, "sweep": {"gpus": [4]}})");
    const Result r = run("describe " + vgg + " --json -");
    INFO(r.out);
    REQUIRE(r.code == 0);
    return nlohmann::json::parse(r.out).at("sweep").at(0).at("largest_server_share").get<double>();
  };
  CHECK(share("sliced") == Approx(0.25).margin(1e-6));
  CHECK(share("whole") > 0.74);
  const auto none = nlohmann::json::parse(run("describe " + tf + " --json -").out).at("sweep").at(0);
  CHECK(none.at("largest_server_share") == 1.0);  // one server holds everything
  const auto p = run("predict " + mx + " --fidelity fast --json - -q");
  REQUIRE(p.code == 0);
  CHECK(nlohmann::json::parse(p.out).at("scheme") ==
        "ps(sync, a server per node (mxnet's default), colocated, local aggregation (mxnet's default), kvstore "
        "tensors (mxnet's default))");
  fs::remove_all(dir);
}

TEST_CASE("the scaletwin binary needs no CUDA library: the CUDA backend is a module loaded on demand", "[cli]") {
  const auto r = scaletwin::test::run_scaletwin("", "readelf -d ");  // readelf -d BINARY
  INFO(r.out.substr(0, 3000));
  REQUIRE(r.code == 0);
  CHECK(r.out.find("(NEEDED)") != std::string::npos);
  for (const char* lib : {"libcudart", "libcublas", "libcudnn", "libnccl"}) CHECK(r.out.find(lib) == std::string::npos);
}

// MXNet's kvstore on one GPU keeps the parameters on that GPU: its server pays the update's memory traffic, not
// the host threads' cost per byte that stacks/mxnet.json gives its ps-lite servers (which once made this 10x slow).
TEST_CASE("a parameter server on the worker's own GPU costs about what the worker's own update costs", "[cli]") {
  const std::string base = R"({"name": "one-gpu", "model": "alexnet_mxnet", "framework": "mxnet",
    "cluster": "aws-p2.xlarge", "nodes": 1, "gpus_per_node": 1, "batch_per_gpu": 16, "sweep": {"gpus": [1]}, )";
  const auto rate = [&](const std::string& scheme, const std::string& file) {
    const auto r = run("predict " + write(scratch() / file, base + "\"scheme\": " + scheme + "}") + " --json - -q");
    INFO(r.out);
    REQUIRE(r.code == 0);
    return nlohmann::json::parse(r.out).at("predictions").at(0).at("images_per_sec").get<double>();
  };
  const double ring = rate(R"({"name": "allreduce", "algorithm": "ring"})", "one-gpu-ring.json");
  const double ps = rate(R"({"name": "ps", "placement": "device"})", "one-gpu-ps.json");
  // The server's update overlaps the backward pass where the worker's own waits for it: ps may be a little faster.
  CHECK(ps / ring == Approx(1.0).margin(0.15));
  const double host = rate(R"({"name": "ps", "placement": "host_cpu"})", "one-gpu-ps-host.json");
  CHECK(host < ps);  // a host server: the gradients cross PCIe and its threads pay per byte
}

// MXNet's dist kvstore sums a node's gradients before they leave it; a scheme that does not say so gets that from
// the stack (stacks/mxnet.json "ps_local_aggregation"), and the report says where it came from.
TEST_CASE("predict and describe name the stack whose default sums a node's gradients", "[cli]") {
  const std::string path = write(scratch() / "mx-dist.json", R"({"name": "mx-dist", "model": "resnet50",
    "framework": "mxnet", "cluster": "aws-p2.16xlarge", "nodes": 2, "batch_per_gpu": 32,
    "scheme": {"name": "ps", "servers": 2, "placement": "colocated"}, "sweep": {"gpus": [32]}})");
  const auto p = run("predict " + path + " --fidelity fast --json - -q");
  INFO(p.out);
  REQUIRE(p.code == 0);
  CHECK(nlohmann::json::parse(p.out).at("scheme") ==
        "ps(sync, 2 servers, colocated, local aggregation (mxnet's default), kvstore tensors (mxnet's default))");
  const auto d = run("describe " + path + " --json -");
  REQUIRE(d.code == 0);
  CHECK(d.out.find("\"local_aggregation\": true") != std::string::npos);
}

TEST_CASE("validate without --calibration predicts each run with its device's calibration and tells in-sample runs "
          "from held-out ones, and --report writes the table too",
          "[cli]") {
  const fs::path reference = fs::path(SCALETWIN_SOURCE_DIR) / ".." / "shared" / "reference";
  if (!fs::exists(reference / "mxnet-k80-single.json")) {
    WARN("skipped: " << reference.string() << " is not there");
    return;
  }
  const fs::path dir = scratch();
  // Two of the K80 runs the shipped calibration was fitted on, and one of the same configuration under another id:
  // the same prediction, but not in the calibration's data.
  const std::string mixed = write(dir / "k80.json", R"({"format": "scaletwin-measurements/1", "runs": [
    {"id": "mxnet12-k80-resnet50-bs32-1gpu", "cluster": "aws-p2.xlarge", "nodes": 1, "gpus_per_node": 1, "model": "resnet50",
     "framework": "mxnet", "batch_per_gpu": 32, "scheme": {"name": "allreduce", "algorithm": "ring"},
     "data": "synthetic", "images_per_sec": 50.0},
    {"id": "mine", "cluster": "aws-p2.xlarge", "nodes": 1, "gpus_per_node": 1, "model": "resnet50",
     "framework": "mxnet", "batch_per_gpu": 32, "scheme": {"name": "allreduce", "algorithm": "ring"},
     "data": "synthetic", "images_per_sec": 50.0}]})");
  const Result r = run("validate --measurements " + mixed + " --json " + (dir / "v.json").string() + " --report " +
                       (dir / "report").string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("validate: 2 runs predicted with calibrations/k80.json (shipped)") != std::string::npos);
  std::ifstream in(dir / "v.json");
  const auto j = nlohmann::json::parse(in);
  REQUIRE(j.at("runs").size() == 2);
  for (const auto& row : j.at("runs")) CHECK(row.at("calibration") == "calibrations/k80.json (shipped)");
  CHECK(j.at("runs").at(0).at("predicted_images_per_sec") == j.at("runs").at(1).at("predicted_images_per_sec"));
  // Whether the shipped file lists the ids it was fitted on decides what is known: where it does, the one is in, the
  // other out, and the MAPE of each part is given apart.
  if (j.at("runs").at(0).contains("in_sample")) {
    CHECK(j.at("runs").at(0).at("in_sample") == true);
    CHECK(j.at("runs").at(1).at("in_sample") == false);
    CHECK(j.at("in_sample").at("runs") == 1);
    CHECK(j.at("held_out").at("runs") == 1);
  }
  CHECK(fs::exists(dir / "report" / "report.json"));
  CHECK(fs::exists(dir / "report" / "report.html"));
  std::ifstream txt(dir / "report" / "report.txt");
  const std::string table((std::istreambuf_iterator<char>(txt)), std::istreambuf_iterator<char>());
  CHECK(table.find("MAPE") != std::string::npos);
  CHECK(table.find("mine") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("vs 1 node is over one full node of workers, simulated where the sweep has no such point", "[cli]") {
  const std::string scenario = (fs::path(SCALETWIN_SOURCE_DIR) / "scenarios" / "bsc-resnet50-sync-ps.json").string();
  const auto over_node = [&](const std::string& gpus) {
    const Result r = run("predict " + scenario + " --gpus " + gpus + " -q --json -");
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    std::map<int, double> by_gpus;
    for (const auto& p : j.at("predictions")) by_gpus[p.at("gpus")] = p.at("speedup_over_one_node");
    return by_gpus;
  };
  const auto with_node = over_node("4,64");      // the node of 4 K80s is in the sweep
  const auto without_node = over_node("1,64");   // ... or not: then it is simulated, not replaced by one GPU
  const auto from_two = over_node("2,8");        // nor by the smallest point
  CHECK(with_node.at(4) == 0.0);                 // within one node: no multi-node speedup
  CHECK(with_node.at(64) > 10.0);
  CHECK(without_node.at(64) == Approx(with_node.at(64)).epsilon(1e-9));
  CHECK(without_node.at(1) == 0.0);
  CHECK(from_two.at(2) == 0.0);
  const auto with_eight = over_node("4,8");
  CHECK(from_two.at(8) == Approx(with_eight.at(8)).epsilon(1e-9));
  CHECK(from_two.at(8) < 2.0);  // 2 nodes over one: at most 2x
}

TEST_CASE("predict A.json B.json sets scenarios side by side and notes a stack that differs besides the scheme",
          "[cli]") {
  const fs::path dir = scratch();
  const std::string scenarios = (fs::path(SCALETWIN_SOURCE_DIR) / "scenarios").string();
  const std::string ps = scenarios + "/bsc-resnet50-sync-ps.json";
  // The same ring, once on the stack a ps scenario defaults to (TensorFlow) and once on NCCL's.
  const auto ring_on = [&](const std::string& framework) {
    nlohmann::json s = nlohmann::json::parse(std::ifstream(scenarios + "/bsc-resnet50-ring.json"));
    s["name"] = "ring-" + framework;
    s["cluster"] = "bsc-minotauro-k80";
    s["framework"] = framework;
    return write(dir / ("ring-" + framework + ".json"), s.dump());
  };
  const std::string tf_ring = ring_on("tensorflow"), nccl_ring = ring_on("nccl");
  const Result like = run("predict " + ps + " " + tf_ring + " --gpus 4,16 -q --json " + (dir / "like.json").string());
  INFO(like.out);
  REQUIRE(like.code == 0);
  CHECK(like.out.find("A  bsc-resnet50-sync-ps") != std::string::npos);
  CHECK(like.out.find("B  ring-tensorflow") != std::string::npos);
  CHECK(like.out.find("the stacks differ") == std::string::npos);
  CHECK(like.out.find("predict: written " + (dir / "like.json").string()) != std::string::npos);
  const auto j = nlohmann::json::parse(std::ifstream(dir / "like.json"));
  REQUIRE(j.at("reports").size() == 2);
  CHECK(j.at("differences").empty());
  // Each report is the one predict gives the scenario alone.
  const Result alone = run("predict " + tf_ring + " --gpus 4,16 -q --json -");
  REQUIRE(alone.code == 0);
  CHECK(j.at("reports").at(1).at("predictions").at(1).at("images_per_sec") ==
        nlohmann::json::parse(alone.out).at("predictions").at(1).at("images_per_sec"));

  const Result unlike = run("predict " + ps + " " + nccl_ring + " --gpus 4 -q --report " + (dir / "r").string());
  REQUIRE(unlike.code == 0);
  CHECK(unlike.out.find("note: the stacks differ: A tensorflow, B nccl") != std::string::npos);
  CHECK(fs::exists(dir / "r" / "report.html"));
  CHECK(nlohmann::json::parse(std::ifstream(dir / "r" / "report.json")).at("differences").size() == 1);
  CHECK(run("predict " + ps + " " + tf_ring + " --layers").code == 2);
  fs::remove_all(dir);
}
