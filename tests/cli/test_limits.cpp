// Hostile inputs through the scaletwin command: absurd sizes (a billion GPUs, a million nodes, a conv with 10^9
// channels, numbers beyond a double), zero or negative bandwidths and batches, layers with no output. Each must
// end in exit 2 with a message naming the file or option, the place and what was expected: no crash, no exit 70,
// no hang (every command runs under `timeout`, so a hang fails as exit 124 instead of stalling the suite), no
// wrapped-around count.
#include <catch2/catch.hpp>

#include "run_binary.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using scaletwin::test::Result;

Result run(const std::string& args) { return scaletwin::test::run_scaletwin(args, "timeout 120 "); }

struct Scratch {
  fs::path dir = fs::temp_directory_path() / ("scaletwin_limits_" + std::to_string(getpid()));
  Scratch() { fs::create_directories(dir); }
  ~Scratch() { fs::remove_all(dir); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  }
};

struct Case {
  std::string args;
  std::vector<std::string> says;  // substrings the message must contain
};

void expect_bad_input(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    INFO(c.args);
    const Result r = run(c.args);
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK(r.out.find("error") != std::string::npos);
    for (const auto& s : c.says) CHECK(r.out.find(s) != std::string::npos);
  }
}

// A built-in cluster file, changed by `edit`, written as NAME.
std::string edited_cluster(const Scratch& s, const std::string& name, void (*edit)(json&)) {
  std::ifstream in(std::string(SCALETWIN_SOURCE_DIR) + "/clusters/aws-p2.8xlarge.json");
  json j = json::parse(in);
  edit(j);
  return s.write(name, j.dump());
}

std::string tiny_model(const std::string& layers, const std::string& input = "[3, 32, 32]") {
  return R"({"name": "m", "input": )" + input + R"(, "classes": 10, "layers": [)" + layers +
         R"(, {"name": "fc", "type": "fc", "out_features": "classes"},
             {"name": "loss", "type": "softmax_cross_entropy"}]})";
}

}  // namespace

TEST_CASE("absurd GPU and node counts exit 2 before anything is built", "[cli][limits]") {
  const Scratch s;
  const std::string head = R"({"model": "lenet5", "cluster": "aws-p2.8xlarge", )";
  const std::string billion = s.write("billion.json", head + R"("nodes": 1000000000})");
  const std::string million = s.write("million.json", head + R"("nodes": 1000000})");
  const std::string sweep = s.write("sweep.json", head + R"("nodes": 1, "sweep": {"gpus": [1, 1000000000]}})");
  // 8192 GPUs exist (1024 nodes of 8) but a plan with every schedule step for them (what describe prints) would
  // take hours and tens of GB.
  const std::string wide = s.write("wide.json", head + R"("nodes": 1024, "sweep": {"gpus": [8192]}})");
  expect_bad_input({
      {"predict " + billion, {"billion.json", "/nodes"}},
      {"describe " + billion, {"billion.json", "/nodes"}},
      {"predict " + million, {"aws-p2.8xlarge", "/max_nodes", "131072 devices"}},
      {"describe " + million, {"aws-p2.8xlarge", "/max_nodes", "131072 devices"}},
      {"predict " + sweep, {"sweep.json", "/sweep/gpus"}},
      {"describe " + wide, {"wide.json", "/sweep/gpus", "at most 4096 GPUs"}},
      {"predict " + s.write("ok.json", head + R"("nodes": 1})") + " --gpus 1000000000", {"--gpus"}},
      {"describe --cluster aws-p2.8xlarge --nodes 1000000", {"aws-p2.8xlarge", "131072 devices"}},
      {"describe --cluster aws-p2.8xlarge --nodes 1000000000", {"aws-p2.8xlarge", "/max_nodes"}},
      {"describe --cluster aws-p2.8xlarge --nodes -3", {"--nodes"}},
  });
}

TEST_CASE("negative, zero and unrepresentable scenario values exit 2", "[cli][limits]") {
  const Scratch s;
  const std::string head = R"({"model": "lenet5", "cluster": "aws-p2.8xlarge", )";
  expect_bad_input({
      {"predict " + s.write("neg.json", head + R"("batch_per_gpu": -64})"), {"neg.json", "/batch_per_gpu"}},
      {"predict " + s.write("zero.json", head + R"("batch_per_gpu": 0})"), {"zero.json", "/batch_per_gpu"}},
      {"predict " + s.write("huge.json", head + R"("batch_per_gpu": 1e400})"), {"huge.json", "representable"}},
      {"predict " + s.write("bucket.json", head + R"("scheme": {"name": "allreduce", "bucket_bytes": 1e300}})"),
       {"bucket.json", "/scheme/bucket_bytes", "1 PB"}},
      {"predict " + s.write("servers.json", head + R"("scheme": {"name": "ps", "servers": -1}})"),
       {"servers.json", "/scheme/servers"}},
      {"describe " + s.write("input.json", R"({"model": "resnet50", "cluster": "aws-p2.8xlarge",
                                               "input": [100000, 100000, 100000]})"),
       {"2^36"}},
  });
}

TEST_CASE("a model with enormous dimensions or a layer with no output exits 2", "[cli][limits]") {
  const Scratch s;
  auto model = [&](const std::string& name, const std::string& layers, const std::string& input = "[3, 32, 32]") {
    return "describe --model " + s.write(name, tiny_model(layers, input));
  };
  expect_bad_input({
      // 10^9 × 3 × 3 × 3 weights fit, but the output (10^9 × 32 × 32 per sample) and the next layer do not.
      {model("giga.json", R"({"name": "c", "type": "conv", "out_channels": 1000000000, "kernel": 3, "padding": 1},
                             {"name": "c2", "type": "conv", "out_channels": 1000000000, "kernel": 3})"),
       {"giga.json", "/layers/0", "2^36"}},
      // 3072 × 10^6 weights fit, 10^6 × 10^9 do not (and 10^15 would still fit an int64: the bound is ours).
      {model("wide_fc.json", R"({"name": "f", "type": "fc", "out_features": 1000000},
                                {"name": "g", "type": "fc", "out_features": 1000000000})"),
       {"wide_fc.json", "/layers/1", "weights", "2^36"}},
      {model("kernel.json", R"({"name": "c", "type": "conv", "out_channels": 4, "kernel": 4000000000000000000})"),
       {"kernel.json", "/layers/0", "kernel height at most"}},
      {model("pad.json", R"({"name": "c", "type": "conv", "out_channels": 4, "kernel": 3,
                             "padding": 4611686018427387904})"),
       {"pad.json", "/layers/0", "padding"}},
      {model("input.json", R"({"name": "r", "type": "relu"})", "[1000000, 1000000, 1000000]"),
       {"input.json", "/input", "2^36"}},
      // No output: a window larger than what is left, an fc with no neurons, a negative channel count.
      {model("empty.json", R"({"name": "p", "type": "maxpool", "kernel": 32},
                              {"name": "p2", "type": "maxpool", "kernel": 2})"),
       {"empty.json", "/layers/1", "kernel"}},
      {model("nofc.json", R"({"name": "f", "type": "fc", "out_features": 0})"), {"nofc.json", "/layers/0"}},
      {model("negc.json", R"({"name": "c", "type": "conv", "out_channels": -8, "kernel": 3})"),
       {"negc.json", "/layers/0/out_channels"}},
      {"describe --model " + s.write("nolayers.json", R"({"name": "m", "input": [1, 4, 4], "classes": 2,
                                                           "layers": []})"),
       {"nolayers.json", "/layers"}},
  });
}

TEST_CASE("zero, negative and absurd link figures in a cluster file exit 2", "[cli][limits]") {
  const Scratch s;
  expect_bad_input({
      {"describe --cluster " +
           edited_cluster(s, "zero_bw.json", [](json& j) { j["network"]["nic_link"]["bandwidth"] = 0; }),
       {"zero_bw.json", "/network/nic_link/bandwidth"}},
      {"describe --cluster " +
           edited_cluster(s, "neg_bw.json", [](json& j) { j["node"]["links"][0]["bandwidth"] = "-10Gbps"; }),
       {"neg_bw.json", "/node/links/0/bandwidth"}},
      {"describe --cluster " +
           edited_cluster(s, "latency.json", [](json& j) { j["network"]["nic_link"]["latency"] = 1e300; }),
       {"latency.json", "/network/nic_link/latency", "1000 s"}},
      {"describe --cluster " +
           edited_cluster(s, "devices.json", [](json& j) { j["node"]["devices_per_node"] = 1000000000; }),
       {"devices.json", "/node/devices_per_node"}},
      {"describe --cluster " + edited_cluster(s, "dense.json",
                                              [](json& j) {
                                                j["max_nodes"] = 1048576;
                                                j["default_nodes"] = 65536;
                                              }),
       {"dense.json", "131072 devices"}},
  });
}
