// The measurements reader: a valid file (relative paths, unknown fields kept), and bad files whose errors name the
// file and the JSON path; the hold-out filter.
#include <catch2/catch.hpp>
#include <cmath>
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
    pool_repeats(parse_measurements(doc, file));
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
  CHECK(s.training.data == plan::Data::kSynthetic);
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
  r["scheme"]["servers"] = "three";  // an unknown scheme key is kept (the test below); a bad value is not
  cases.push_back({"bad scheme value", document(r), "/runs/0/scheme/servers"});
  r = good_run();
  r["data"] = "imaginary";
  cases.push_back({"bad data kind", document(r), "/runs/0/data"});
  r = good_run();
  r.erase("model");
  cases.push_back({"missing model", document(r), "/runs/0/model"});
  d = document(good_run());
  r = good_run();
  r["nodes"] = 4;
  d["runs"].push_back(r);
  cases.push_back({"an id repeated for another configuration", d, "/runs/1/nodes"});
  d = document(good_run());
  r = good_run();
  r["scheme"]["mode"] = "async";
  d["runs"].push_back(r);
  cases.push_back({"an id repeated for another scheme", d, "/runs/1/scheme"});
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

TEST_CASE("runs that share an id are repeats, pooled into one run: mean iteration time, its standard error, means",
          "[unit]") {
  // Three repeats at 100, 200 and 400 images/s: iteration times per image 1/100, 1/200, 1/400 s; their mean 7/1200
  // s, so the pooled rate is 1200/7 (the three as one long run), not the arithmetic 233.3.
  Json a = good_run(), b = good_run(), c = good_run(), other = good_run();
  a["images_per_sec"] = 100;
  a["compute_jitter"] = 0.1;
  a["phases_per_iteration_s"] = {{"compute", 0.3}, {"data", 0.01}, {"exposed_comm", 0.2}};
  b["images_per_sec"] = 200;
  b["compute_jitter"] = 0.2;
  b["phases_per_iteration_s"] = {{"compute", 0.5}, {"data", 0.03}, {"exposed_comm", 0.4}};
  c["images_per_sec"] = 400;  // no jitter, no phases: the means are over the repeats that have them
  other["id"] = "r2";
  const Json doc = {{"format", "scaletwin-measurements/1"}, {"runs", {a, other, b, c}}};
  const auto runs = pool_repeats(parse_measurements(doc, "m.json"));
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].id == "r1");  // in the order of each id's first run
  CHECK(runs[1].id == "r2");
  const MeasuredRun& r = runs[0];
  CHECK(r.repeats == 3);
  CHECK(r.images_per_sec == Approx(1200.0 / 7.0));
  // Times 12/1200, 6/1200, 3/1200 (mean 7/1200): sample variance (25 + 1 + 16) / 2 = 21 (in 1/1200^2), so the
  // standard error of the mean is sqrt(21 / 3) / 7 relative to it.
  CHECK(r.images_per_sec_std_error == Approx(std::sqrt(7.0) / 7.0));
  CHECK(*r.compute_jitter == Approx(0.15));
  CHECK(*r.compute_per_iteration_s == Approx(0.4));
  CHECK(*r.data_per_iteration_s == Approx(0.02));
  CHECK(r.raw.at("images_per_sec").get<double>() == Approx(1200.0 / 7.0));
  CHECK(r.raw.at("repeats") == 3);
  CHECK(r.raw.at("phases_per_iteration_s").at("exposed_comm").get<double>() == Approx(0.3));
  CHECK(runs[1].repeats == 1);
  CHECK(runs[1].images_per_sec == 751);
  CHECK(runs[1].images_per_sec_std_error == 0.0);
}

TEST_CASE("repeats are pooled across measurements files, and one file alone is read as it is", "[unit]") {
  const auto dir = std::filesystem::temp_directory_path() / "scaletwin-test-repeats";
  std::filesystem::create_directories(dir);
  Json fast = good_run(), slow = good_run();
  fast["images_per_sec"] = 300;
  slow["images_per_sec"] = 100;
  const std::string one = (dir / "r-1.json").string(), two = (dir / "r-2.json").string();
  std::ofstream(one) << document(fast).dump();
  std::ofstream(two) << document(slow).dump();
  const auto pooled = load_measurements(std::vector<std::string>{one, two});
  REQUIRE(pooled.size() == 1);
  CHECK(pooled[0].repeats == 2);
  CHECK(pooled[0].images_per_sec == Approx(150.0));  // 2 / (1/300 + 1/100)
  CHECK(pooled[0].images_per_sec_std_error == Approx(0.5));  // times 1/300, 1/100: sd 0.00471, mean 0.00667, n 2
  CHECK(load_measurements(one)[0].images_per_sec == 300);
  slow["batch_per_gpu"] = 32;
  std::ofstream(two) << document(slow).dump();
  try {
    (void)load_measurements(std::vector<std::string>{one, two});
    FAIL("a repeat of another batch was pooled");
  } catch (const InputError& e) {
    CHECK(e.file() == two);
    CHECK(e.json_path() == "/runs/0/batch_per_gpu");
    CHECK(std::string(e.what()).find(one) != std::string::npos);  // names the run it would repeat
  }
  std::filesystem::remove_all(dir);
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

TEST_CASE("hold-out filters join terms with && before ||", "[unit]") {
  const MeasuredRun r = parse_measurements(document(good_run()), "m.json")[0];  // resnet50, 2 nodes, 16 GPUs
  CHECK(parse_run_filter("model!=resnet50 || gpus<=16", "--cv")(r));
  CHECK_FALSE(parse_run_filter("model!=resnet50 || gpus<=1", "--cv")(r));
  CHECK(parse_run_filter("model==resnet50&&nodes==2", "--cv")(r));
  CHECK_FALSE(parse_run_filter("model==resnet50 && nodes==1", "--cv")(r));
  // a && b || c && d is (a && b) || (c && d): the first pair fails, the second holds
  CHECK(parse_run_filter("model==vgg16 && nodes==2 || data!=real && gpus>8", "--cv")(r));
  CHECK_FALSE(parse_run_filter("model==vgg16 && nodes==2 || data==real && gpus>8", "--cv")(r));
  for (const char* bad : {"nodes>1 ||", "|| nodes>1", "nodes>1 && ", "nodes>1 | gpus>2", "nodes>1 & gpus>2"}) {
    INFO(bad);
    try {
      parse_run_filter(bad, "--cv");
      FAIL("accepted");
    } catch (const InputError& e) {
      CHECK(std::string(e.what()).find("--cv") != std::string::npos);
      CHECK(std::string(e.what()).find(bad) != std::string::npos);  // quotes the whole filter
    }
  }
}

TEST_CASE(
    "compute_jitter: read when present, its range checked, and set per device from the co-running runs, those "
    "without servers first",
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
  // A co-running run without a parameter server (ring all-reduce) is preferred to the PS ones: a server sharing
  // the workers' cores disturbs their compute, which the fit finds as the server's cost.
  Json ring = good_run();
  ring["id"] = "ring";
  ring["scheme"] = {{"name", "allreduce"}, {"algorithm", "ring"}};
  ring["compute_jitter"] = 0.03;
  const auto with_ring = parse_measurements({{"format", "scaletwin-measurements/1"}, {"runs", {one, two, ring}}}, "m.json");
  sim::Calibration no_server = sim::default_calibration();
  const auto from_ring = apply_measured_jitter(with_ring, no_server);
  REQUIRE(from_ring.size() == 1);
  CHECK(from_ring[0].runs == std::vector<std::string>{"ring"});
  CHECK(no_server.device(from_ring[0].device).compute_jitter == Approx(0.03));

  // No run carries it: nothing changes.
  sim::Calibration none = sim::default_calibration();
  CHECK(apply_measured_jitter({runs[3]}, none).empty());
  Json bad = good_run();
  bad["compute_jitter"] = -1;
  const InputError e = error_of(document(bad));
  CHECK(e.file() == "m.json");
  CHECK(e.json_path() == "/runs/0/compute_jitter");
}

TEST_CASE("a run's framework: its field, else the framework its source names, else the scheme's default", "[unit]") {
  Json run = good_run();
  CHECK(parse_measurements(document(run), "m.json").at(0).framework.empty());  // source "test": no framework
  run["source"] = "TensorFlow performance benchmarks (tf_cnn_benchmarks), May 2017 revision";
  CHECK(parse_measurements(document(run), "m.json").at(0).framework == "tensorflow");
  run["source"] = "Apache MXNet docs/faq/perf.md";
  CHECK(parse_measurements(document(run), "m.json").at(0).framework == "mxnet");
  run["framework"] = "nccl";
  const MeasuredRun r = parse_measurements(document(run), "m.json").at(0);
  CHECK(r.framework == "nccl");
  CHECK(scenario_of(r).framework == "nccl");
  CHECK(run_field(r, "framework") == "nccl");
  CHECK(run_configuration(r).at("framework") == "nccl");
  run["framework"] = "mxnet";  // its servers over the network: a node's GPUs push one merged array where unsaid
  run["scheme"].erase("local_aggregation");
  const plan::Scenario mx = scenario_of(parse_measurements(document(run), "m.json").at(0));
  CHECK(mx.scheme.ps.local_aggregation);
  CHECK(mx.scheme.ps.local_aggregation_by == "mxnet");
  run["framework"] = "tensorflow";
  CHECK_FALSE(scenario_of(parse_measurements(document(run), "m.json").at(0)).scheme.ps.local_aggregation);
  run["framework"] = "caffe";  // not a spec field: a framework without a stack model is noted, not refused
  const MeasuredRun caffe = parse_measurements(document(run), "m.json").at(0);
  CHECK(caffe.framework == "mxnet");  // as the source says
  REQUIRE(caffe.notes.size() == 1);
  CHECK(caffe.notes[0].path == "/runs/0/framework");
  run["framework"] = 3;
  CHECK_THROWS_WITH(parse_measurements(document(run), "m.json"), Catch::Contains("/runs/0/framework"));
}

TEST_CASE("a run's model is the network its framework means by the name (MXNet's alexnet)", "[unit]") {
  Json run = good_run();
  run["model"] = "alexnet";
  run["framework"] = "mxnet";
  const MeasuredRun mx = parse_measurements(document(run), "m.json").at(0);
  CHECK(mx.model == "alexnet_mxnet");               // what train_imagenet.py --network alexnet builds
  CHECK(scenario_of(mx).model == "alexnet_mxnet");  // and what is simulated
  CHECK(run_field(mx, "model") == "alexnet");       // selected by the name the run gives
  CHECK(parse_run_filter("model==alexnet", "--cv")(mx));
  run["framework"] = "tensorflow";
  CHECK(parse_measurements(document(run), "m.json").at(0).model == "alexnet");  // tf_cnn_benchmarks' own
  run["framework"] = "mxnet";
  run["model"] = "resnet50";
  CHECK(parse_measurements(document(run), "m.json").at(0).model == "resnet50");  // names without an entry stay
  run["framework"] = "tensorflow";  // tf_cnn_benchmarks' ResNets of 2017 are v1
  const MeasuredRun tf = parse_measurements(document(run), "m.json").at(0);
  CHECK(tf.model == "resnet50_v1");
  CHECK(run_field(tf, "model") == "resnet50");
  CHECK(parse_run_filter("model!=resnet50", "--cv")(tf) == false);
}

TEST_CASE("an unknown built-in model or cluster is refused at the run that names it", "[unit]") {
  Json run = good_run();
  run["model"] = "squeezenet1_0";
  const InputError model = error_of(document(run));
  CHECK(model.file() == "m.json");
  CHECK(model.json_path() == "/runs/0/model");
  CHECK(std::string(model.what()).find("inception_v3") != std::string::npos);  // the known names are listed
  run = good_run();
  run["cluster"] = "aws-p3.16xlarge";
  const InputError cluster = error_of(document(run));
  CHECK(cluster.json_path() == "/runs/0/cluster");
  CHECK(std::string(cluster.what()).find("aws-p2.8xlarge") != std::string::npos);
  run = good_run();
  run["model"] = "models/mine.json";  // a path is resolved, and read, when the run is simulated
  CHECK(parse_measurements(document(run), "m.json").at(0).model == "models/mine.json");
}

TEST_CASE("an MXNet kvstore named in a measured run's scheme reads as the placement and mode it stands for",
          "[unit]") {
  const auto read = [](const std::string& scheme, const std::string& extra = "") {
    Json run = Json::parse(R"({"id": "m", "cluster": "aws-p2.16xlarge", "gpus_per_node": 16, "model": "alexnet",
      "batch_per_gpu": 128, "images_per_sec": 3000, "scheme": )" + scheme + extra + "}");
    return parse_measurements(document(run), "m.json").at(0);
  };
  MeasuredRun r = read(R"({"name": "ps", "kvstore": "device"})");
  CHECK(r.scheme.ps.placement == plan::PsPlacement::kDevice);  // summed on the GPUs (CommDevice)
  CHECK(r.framework == "mxnet");                               // a kvstore is MXNet's
  CHECK(r.model == "alexnet_mxnet");                           // so is the network its runs mean by "alexnet"
  REQUIRE(r.notes.size() == 1);
  CHECK(r.notes[0].path == "/runs/0/scheme/kvstore");
  CHECK(r.notes[0].what == "scheme field \"kvstore\": \"device\" read as MXNet's device kvstore: placement "
                          "\"device\", framework mxnet");
  CHECK(read(R"({"name": "ps", "kvstore": "local"})").scheme.ps.placement == plan::PsPlacement::kHostCpu);
  r = read(R"({"name": "ps", "kvstore": "Dist_Async"})");
  CHECK(r.scheme.ps.mode == plan::PsMode::kAsync);
  CHECK(r.scheme.ps.placement == plan::PsPlacement::kColocated);  // servers over the network: the spec's default
  r = read(R"({"name": "ps", "kvstore": "dist_sync"})");
  CHECK(r.scheme.ps.mode == plan::PsMode::kSync);
  CHECK(r.notes.at(0).what ==
        "scheme field \"kvstore\": \"dist_sync\" read as MXNet's dist_sync kvstore: framework mxnet");
  // What the scheme and the run state stand.
  r = read(R"({"name": "ps", "kvstore": "device", "placement": "host_cpu"})", R"(, "framework": "tensorflow")");
  CHECK(r.scheme.ps.placement == plan::PsPlacement::kHostCpu);
  CHECK(r.framework == "tensorflow");
  CHECK(r.notes.at(0).what ==
        "scheme field \"kvstore\": \"device\" read as MXNet's device kvstore: what the run states already");
  r = read(R"({"name": "ps", "kvstore": "dist_async", "mode": "sync"})");
  CHECK(r.scheme.ps.mode == plan::PsMode::kSync);
  // A kvstore without servers, or outside a parameter-server scheme, stays a note.
  r = read(R"({"name": "allreduce", "kvstore": "nccl"})");
  CHECK(r.framework.empty());
  CHECK(r.notes.at(0).what.find("scheme field \"kvstore\" ignored") == 0);
  CHECK(read(R"({"name": "ps", "kvstore": "nccl"})").notes.at(0).what.find("ignored") != std::string::npos);
}

TEST_CASE("a scheme field outside the vocabulary is kept and named in a note, not refused, in a measured run",
          "[unit]") {
  Json run = good_run();
  run["scheme"]["tf_variable_update"] = "distributed_replicated";  // how a table names what the scheme already says
  Json other = good_run();
  other["id"] = "r2";
  other["scheme"] = Json::parse(R"({"name": "hybrid", "data_parallel": {"name": "ps", "kvstore": "device"}})");
  Json doc = document(run);
  doc["runs"].push_back(other);
  const auto runs = parse_measurements(doc, "m.json");
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].scheme.ps.servers == 2);  // the vocabulary's fields are read as ever
  REQUIRE(runs[0].notes.size() == 1);
  CHECK(runs[0].notes[0].path == "/runs/0/scheme/tf_variable_update");
  REQUIRE(runs[1].notes.size() == 1);
  CHECK(runs[1].notes[0].path == "/runs/1/scheme/data_parallel/kvstore");
  CHECK(runs[0].raw.at("scheme").at("tf_variable_update") == "distributed_replicated");
  const std::string note = reading_notes(runs);
  CHECK(note.find("scheme field \"tf_variable_update\" ignored") != std::string::npos);
  CHECK(note.find(": 1 run (first: m.json at /runs/0/scheme/tf_variable_update)") != std::string::npos);
  CHECK(note.find("scheme field \"data_parallel/kvstore\" ignored") != std::string::npos);
  CHECK(reading_notes(parse_measurements(document(good_run()), "m.json")).empty());
  // A scenario stays strict: the same scheme there is a typo to report.
  CHECK_THROWS_AS(plan::parse_scheme(JsonObject(run["scheme"], "s.json", "/scheme")), InputError);
  // A value of a vocabulary field is still checked.
  run["scheme"]["mode"] = "eventual";
  CHECK(error_of(document(run)).json_path() == "/runs/0/scheme/mode");
}

TEST_CASE("a model or cluster in a table's spelling is read as the built-in it names and a framework without a stack "
          "is noted",
          "[unit]") {
  Json a = good_run(), b = good_run(), c = good_run();
  a["model"] = "ResNet-152";
  b["id"] = "r2";
  b["model"] = "Inception-v3";
  b["framework"] = "MXNet";  // case aside, a stack's name
  c["id"] = "r3";
  c["model"] = "ResNet-152";
  c["framework"] = "caffe2";
  c["source"] = "a TensorFlow table";
  Json doc = document(a);
  doc["runs"].push_back(b);
  doc["runs"].push_back(c);
  const auto runs = parse_measurements(doc, "m.json");
  REQUIRE(runs.size() == 3);
  CHECK(runs[0].model == "resnet152");
  CHECK(runs[1].model == "inception_v3");
  CHECK(runs[1].framework == "mxnet");
  CHECK(runs[2].framework == "tensorflow");  // as its source says
  CHECK(runs[2].model == "resnet152_v1");    // the network TensorFlow's benchmark meant
  CHECK(run_field(runs[0], "model") == "resnet152");  // as filters name it
  const std::string note = reading_notes(runs);
  INFO(note);
  CHECK(note.find("model \"ResNet-152\" read as the built-in resnet152: 2 runs (first: m.json at /runs/0/model)") !=
        std::string::npos);
  CHECK(note.find("framework \"caffe2\" has no stack model") != std::string::npos);
  CHECK(note.find("simulated with tensorflow, as the source says: 1 run (first: m.json at /runs/2/framework)") !=
        std::string::npos);
  // A stack's name among other words (a version, a vendor) is that stack; "mpi" is only scaletwin's own executor.
  for (const auto& [named, stack] : std::vector<std::pair<std::string, std::string>>{
           {"TensorFlow 1.2", "tensorflow"}, {"Apache MXNet", "mxnet"}, {"mxnet-1.2.0", "mxnet"},
           {"tensorflow1.1", "tensorflow"}, {"TF 1.x", "tensorflow"}, {"NCCL 2.4", "nccl"}, {"Open MPI", ""},
           {"Caffe2", ""}}) {
    CAPTURE(named);
    Json e = good_run();
    e["framework"] = named;
    e["source"] = "a paper";
    const MeasuredRun run = parse_measurements(document(e), "m.json").at(0);
    CHECK(run.framework == stack);
    const std::string said = reading_notes({run});
    CHECK(said.find(stack.empty() ? "has no stack model" : "read as the stack " + stack) != std::string::npos);
  }
  // A cluster as a table names its instance: the provider's prefix may be left out.
  Json d = good_run();
  d["cluster"] = "p2.16xlarge";
  const MeasuredRun p2 = parse_measurements(document(d), "m.json").at(0);
  CHECK(p2.cluster == "aws-p2.16xlarge");
  CHECK(reading_notes({p2}).find("cluster \"p2.16xlarge\" read as the built-in aws-p2.16xlarge") != std::string::npos);
  d["cluster"] = "AWS p2.xlarge";
  CHECK(parse_measurements(document(d), "m.json").at(0).cluster == "aws-p2.xlarge");
  d["cluster"] = "p3.16xlarge";
  CHECK(error_of(document(d)).json_path() == "/runs/0/cluster");
  // The benchmarks' own names of a built-in network.
  Json e = good_run();
  e["model"] = "inception3";  // tf_cnn_benchmarks --model
  CHECK(parse_measurements(document(e), "m.json").at(0).model == "inception_v3");
  e["model"] = "Inception-v1";
  CHECK(parse_measurements(document(e), "m.json").at(0).model == "googlenet");
  // A name that spells no built-in is still refused where it stands.
  a["model"] = "ResNet-153";
  CHECK(error_of(document(a)).json_path() == "/runs/0/model");
}
