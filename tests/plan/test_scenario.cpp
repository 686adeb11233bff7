// Scenario loading: the spec's scheme vocabulary with its defaults, and strict errors that name the place.
#include <catch2/catch.hpp>

#include "core/error.hpp"
#include "plan/scenario.hpp"

using namespace scaletwin;
using namespace scaletwin::plan;

namespace {
Scenario parse(const std::string& text) { return parse_scenario(parse_json_text(text, "s.json"), "s.json"); }

// The message of the InputError that parsing `text` throws ("" when none).
std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("a minimal scenario gets the spec's defaults", "[scenario]") {
  const Scenario s = parse(R"({"model": "resnet50", "cluster": "aws-p2.8xlarge"})");
  CHECK(s.nodes == 1);
  CHECK(s.scheme.kind == SchemeKind::kAllReduce);
  CHECK(s.scheme.allreduce.algorithm == Algorithm::kRing);
  CHECK(s.scheme.allreduce.bucket_bytes == 25'000'000);
  CHECK(s.scheme.allreduce.overlap);
  CHECK(s.training.data == Data::kSynthetic);
}

TEST_CASE("ps options and their defaults", "[scenario]") {
  Scenario s = parse(R"({"model": "m", "cluster": "c", "scheme": {"name": "ps"}})");
  CHECK(s.scheme.kind == SchemeKind::kPs);
  CHECK(s.scheme.ps.mode == PsMode::kSync);
  CHECK(s.scheme.ps.servers == 1);
  CHECK(s.scheme.ps.placement == PsPlacement::kColocated);
  CHECK_FALSE(s.scheme.ps.local_aggregation);
  s = parse(R"({"model": "m", "cluster": "c", "scheme": {"name": "ps", "mode": "mixed_async", "servers": 8,
               "placement": "dedicated", "local_aggregation": true}})");
  CHECK(s.scheme.ps.mode == PsMode::kMixedAsync);
  CHECK(s.scheme.ps.servers == 8);
  CHECK(s.scheme.ps.placement == PsPlacement::kDedicated);
  CHECK(s.scheme.ps.local_aggregation);
  CHECK(s.scheme.ps.count(5, 40) == 8);
  // One server per worker node, resolved at each point of a sweep.
  s = parse(R"({"model": "m", "cluster": "c", "scheme": {"name": "ps", "servers": "per_node"}})");
  CHECK(s.scheme.ps.servers_per == PsScheme::Per::kNode);
  CHECK(s.scheme.ps.count(1, 4) == 1);
  CHECK(s.scheme.ps.count(5, 40) == 5);
  CHECK(s.scheme.to_json()["servers"] == "per_node");
  CHECK(s.scheme.describe() == "ps(sync, a server per node, colocated)");
  CHECK(parse_scenario(Json{{"model", "m"}, {"cluster", "c"}, {"scheme", s.scheme.to_json()}}, "r.json")
            .scheme.ps.servers_per == PsScheme::Per::kNode);  // written as read
  s = parse(R"({"model": "m", "cluster": "c", "scheme": {"name": "ps", "servers": "per_gpu", "placement": "device"}})");
  CHECK(s.scheme.ps.count(5, 40) == 40);
  CHECK(s.scheme.to_json()["servers"] == "per_gpu");
  CHECK(s.scheme.describe() == "ps(sync, a server per GPU, device)");
  // How tensors spread over the servers: split evenly unless the scheme (or its stack) says otherwise.
  CHECK(s.scheme.ps.tensors == TensorPlacement::kSliced);
  CHECK_FALSE(s.scheme.ps.tensors_stated);
  s = parse(R"({"model": "m", "cluster": "c", "scheme": {"name": "ps", "servers": 4, "tensors": "whole"}})");
  CHECK(s.scheme.ps.tensors == TensorPlacement::kWhole);
  CHECK(s.scheme.ps.tensors_stated);
  CHECK(s.scheme.to_json()["tensors"] == "whole");
  CHECK(s.scheme.describe() == "ps(sync, 4 servers, colocated, whole tensors)");
  s = parse(R"({"model": "m", "cluster": "c", "scheme": {"name": "ps", "servers": 4, "tensors": "largest_first"}})");
  CHECK(s.scheme.ps.tensors == TensorPlacement::kLargestFirst);
  CHECK(s.scheme.to_json()["tensors"] == "largest_first");
  CHECK(s.scheme.describe() == "ps(sync, 4 servers, colocated, largest_first tensors)");
  CHECK_THROWS_WITH(parse(R"({"model": "m", "cluster": "c", "scheme": {"name": "ps", "tensors": "round_robin"}})"),
                    Catch::Contains("/scheme/tensors") && Catch::Contains("kvstore"));
}

TEST_CASE("hybrid and hierarchical schemes, units in the bucket size", "[scenario]") {
  Scenario s = parse(R"({"model": "vgg16_cifar", "cluster": "c", "scheme": {"name": "hybrid",
      "data_parallel": {"name": "allreduce", "algorithm": "hierarchical", "intra": "ring",
                        "inter": "interval_pairing", "bucket_bytes": "4MiB", "overlap": false}}})");
  CHECK(s.scheme.kind == SchemeKind::kHybrid);
  CHECK(s.scheme.data_parallel == SchemeKind::kAllReduce);
  CHECK(s.scheme.model_parallel_fc);
  CHECK(s.scheme.allreduce.inter == Algorithm::kIntervalPairing);
  CHECK(s.scheme.allreduce.intra == Algorithm::kRing);
  CHECK(s.scheme.to_json()["data_parallel"]["inter"] == "interval_pairing");
  CHECK(s.scheme.allreduce.bucket_bytes == 4 * 1024 * 1024);
  CHECK_FALSE(s.scheme.allreduce.overlap);
  s = parse(R"({"model": "m", "cluster": "c", "scheme": {"name": "hybrid", "model_parallel": ["fc6", "fc7"]}})");
  CHECK(s.scheme.model_parallel_layers == std::vector<std::string>{"fc6", "fc7"});
  // The scheme round-trips through its JSON form.
  const Scheme again = parse_scheme(JsonObject::root(s.scheme.to_json(), "x"));
  CHECK(again.to_json() == s.scheme.to_json());
}

TEST_CASE("paths in a scenario are relative to the scenario file", "[scenario]") {
  const Scenario s = parse_scenario(parse_json_text(R"({"model": "models/m.json", "cluster": "../c.json"})", ""),
                                    "/data/scen/s.json");
  CHECK(s.model == "/data/scen/models/m.json");
  CHECK(s.cluster == "/data/c.json");
  // A bare file name is a file beside the scenario, an ONNX model's as a JSON model's.
  CHECK(parse_scenario(parse_json_text(R"({"model": "net.onnx", "cluster": "c"})", ""), "/data/scen/s.json").model ==
        "/data/scen/net.onnx");
  CHECK(parse_scenario(parse_json_text(R"({"model": "net.json", "cluster": "c"})", ""), "/data/scen/s.json").model ==
        "/data/scen/net.json");
}

TEST_CASE("bad scenarios: each error names the file, the path and what was expected", "[scenario]") {
  struct Case {
    const char* text;
    const char* path;
    const char* expected;
  };
  const Case cases[] = {
      {R"({"model": "m", "cluster": "c", "nodes": "four"})", "/nodes", "an integer"},
      {R"({"model": "m", "cluster": "c", "batch_per_gpu": -64})", "/batch_per_gpu", "an integer in [1,"},
      {R"({"model": "m", "cluster": "c", "nodse": 4})", "/nodse", "unknown key"},
      {R"({"cluster": "c"})", "/model", "required"},
      {R"({"model": "m", "cluster": "c", "scheme": {"name": "gossip"}})", "/scheme/name", "ps, allreduce, hybrid"},
      {R"({"model": "m", "cluster": "c", "scheme": {"name": "allreduce", "algorithm": "butterfly"}})",
       "/scheme/algorithm", "interval_pairing"},
      {R"({"model": "m", "cluster": "c", "scheme": {"name": "allreduce", "intra": "ring"}})", "/scheme/intra",
       "hierarchical"},
      {R"({"model": "m", "cluster": "c", "scheme": {"name": "allreduce", "algorithm": "hierarchical",
          "intra": "double_binary_tree"}})", "/scheme/intra", "halving_doubling"},
      {R"({"model": "m", "cluster": "c", "scheme": {"name": "allreduce", "algorithm": "hierarchical",
          "intra": "double_binary_tree"}})", "/scheme/intra", "an all-reduce only: name it in \"inter\""},
      {R"({"model": "m", "cluster": "c", "scheme": {"name": "allreduce", "algorithm": "hierarchical",
          "inter": "hierarchical"}})", "/scheme/inter", "double_binary_tree"},
      {R"({"model": "m", "cluster": "c", "scheme": {"name": "ps", "servers": 0}})", "/scheme/servers", "[1,"},
      {R"({"model": "m", "cluster": "c", "scheme": {"name": "ps", "servers": "per_rack"}})", "/scheme/servers",
       "\"per_node\" (one server per worker node) or \"per_gpu\""},
      {R"({"model": "m", "cluster": "c", "scheme": {"name": "ps", "placement": "moon"}})", "/scheme/placement",
       "dedicated"},
      {R"({"model": "m", "cluster": "c", "scheme": {"name": "allreduce", "bucket_bytes": "lots"}})",
       "/scheme/bucket_bytes", "25MB"},
      {R"({"model": "m", "cluster": "c", "sweep": {"gpus": [1, 0, 4]}})", "/sweep/gpus/1", "GPU count"},
      {R"({"model": "m", "cluster": "c", "nodes": 1000000000})", "/nodes", "[1,"},
      {R"({"model": "m", "cluster": "c", "input": [3, 224]})", "/input", "[C, H, W]"},
      {R"({"model": "m", "cluster": "c", "training": {"data": "imaginary"}})", "/training/data", "synthetic"},
      {R"({"model": "m", "cluster": "c", "scheme": {"name": "hybrid", "data_parallel": {"name": "hybrid"}}})",
       "/scheme/data_parallel/name", "cannot nest"},
      {R"({"model": "m", "cluster": "c", "scheme": {"name": "hybrid", "model_parallel": [3]}})",
       "/scheme/model_parallel/0", "layer name"},
      {R"([1, 2])", "/", "an object"},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    const std::string m = error_of(c.text);
    CHECK(m.find("s.json") != std::string::npos);
    CHECK(m.find(c.path) != std::string::npos);
    CHECK(m.find(c.expected) != std::string::npos);
  }
  CHECK(error_of("{\"model\": ").find("syntax error") != std::string::npos);
  CHECK_THROWS_AS(load_scenario("/no/such/scenario.json"), InputError);
}

TEST_CASE("the default scenario is the seed paper's set-up", "[scenario]") {
  const Scenario s = default_scenario();
  CHECK(s.model == "resnet50");
  CHECK(s.cluster == "bsc-minotauro-k80");
  CHECK(s.scheme.kind == SchemeKind::kPs);
  CHECK(s.sweep_gpus.back() == 64);
}

TEST_CASE("what-if faults: the three kinds read, bad values named by their JSON path", "[scenario]") {
  const Scenario s = parse(R"({"model": "m", "cluster": "c", "faults": [
      {"kind": "degraded_link", "link": {"kind": "network", "node": 1}, "bandwidth_factor": 0.25},
      {"kind": "failed_link", "link": {"endpoint": "node0/gpu1"}, "comment": "a dead port"},
      {"kind": "straggler", "gpu": 3, "slowdown": 1.5}]})");
  REQUIRE(s.faults.size() == 3);
  CHECK(s.faults[0].kind == Fault::Kind::kDegradedLink);
  CHECK(s.faults[0].link.kind == "network");
  CHECK(s.faults[0].link.node == 1);
  CHECK(s.faults[0].bandwidth_factor == 0.25);
  CHECK(s.faults[1].kind == Fault::Kind::kFailedLink);
  CHECK(s.faults[1].link.endpoint == "node0/gpu1");
  CHECK(s.faults[1].link.node == -1);
  CHECK(s.faults[1].json_path == "/faults/1");
  CHECK(s.faults[2].kind == Fault::Kind::kStraggler);
  CHECK(s.faults[2].gpu == 3);
  CHECK(s.faults[2].slowdown == 1.5);
  CHECK(parse(R"({"model": "m", "cluster": "c"})").faults.empty());  // absent: a healthy cluster

  const std::pair<const char*, const char*> bad[] = {
      {R"({"kind": "meteor"})", "/faults/0/kind"},
      {R"({"kind": "degraded_link", "link": {"kind": "network"}, "bandwidth_factor": 0})", "/faults/0/bandwidth_factor"},
      {R"({"kind": "degraded_link", "link": {"kind": "network"}, "bandwidth_factor": 1.5})", "/faults/0/bandwidth_factor"},
      {R"({"kind": "degraded_link", "link": {"kind": "network"}})", "/faults/0/bandwidth_factor"},
      {R"({"kind": "failed_link", "link": {}})", "/faults/0/link"},
      {R"({"kind": "failed_link", "link": {"node": -1}})", "/faults/0/link/node"},
      {R"({"kind": "failed_link", "link": {"kind": "network", "colour": "red"}})", "/faults/0/link/colour"},
      {R"({"kind": "straggler", "gpu": 2, "slowdown": 0.5})", "/faults/0/slowdown"},
      {R"({"kind": "straggler", "gpu": -1, "slowdown": 2})", "/faults/0/gpu"},
      {R"({"kind": "straggler", "slowdown": 2})", "/faults/0/gpu"},
      {R"({"kind": "straggler", "gpu": 1, "slowdown": 2, "bandwidth_factor": 0.5})", "/faults/0/bandwidth_factor"},
      {R"(3)", "/faults/0"},
  };
  for (const auto& [fault, path] : bad) {
    INFO(fault);
    const std::string m = error_of(std::string(R"({"model": "m", "cluster": "c", "faults": [)") + fault + "]}");
    CHECK(m.find("s.json") != std::string::npos);
    CHECK(m.find(path) != std::string::npos);
  }
  CHECK(error_of(R"({"model": "m", "cluster": "c", "faults": {"kind": "straggler"}})").find("/faults") !=
        std::string::npos);
}
