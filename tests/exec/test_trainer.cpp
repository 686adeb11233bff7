// The training driver under mpirun: synchronous schemes on several ranks give the weights of one rank training on
// the same global batches (up to float reassociation), and the asynchronous ones run and count their staleness.
// Test cases are tagged with the rank count they need ([np2], [np3], [np4], [np5]); CTest runs each tag under
// mpirun with that many ranks.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.hpp"
#include "report/run_record.hpp"
#include "test_trainer_support.hpp"

namespace scaletwin::test {

namespace {

constexpr double kTolerance = 1e-5;  // relative; the observed differences are around 3e-8 after 4 steps

int world_size() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

// Trains `scenario` on every rank of the job and compares each worker's final weights with a one-rank run.
void check_matches_one_rank(const plan::Scenario& scenario) {
  const exec::TrainResult run = exec::train(scenario, trainer_options(), MPI_COMM_WORLD);
  const int workers = exec::workers_for_ranks(scenario, world_size());
  const exec::TrainResult reference = reference_run(scenario, scenario.batch_per_gpu * workers);
  WeightDiff diff;
  if (run.worker) diff = compare_weights(run.weights, reference.weights, kTolerance);
  const int64_t mismatches = sum_over_ranks(diff.mismatches);
  const int64_t compared = sum_over_ranks(diff.compared);
  const double max_abs = max_over_ranks(diff.max_abs);
  INFO("scheme " << scenario.scheme.describe() << ": max |difference| " << max_abs << " over " << compared
                 << " weights");
  CHECK(compared == 61706 * workers);  // lenet5's parameters, on every worker
  CHECK(mismatches == 0);
  CHECK(std::isfinite(run.final_train_loss));
}

Json allreduce(const std::string& algorithm, const Json& extra = Json::object()) {
  Json s = {{"name", "allreduce"}, {"algorithm", algorithm}};
  s.update(extra);
  return s;
}

}  // namespace

TEST_CASE("trainer: data parallelism on 2 ranks gives the weights of 1 rank, for every all-reduce", "[np2]") {
  REQUIRE(world_size() == 2);
  // 40 kB buckets: lenet5's gradients go as three buckets ({fc3, fc2}, {fc1}, {conv2, conv1}).
  for (const char* algorithm : {"ring", "interval_pairing", "halving_doubling", "double_binary_tree", "direct"}) {
    SECTION(algorithm) { check_matches_one_rank(trainer_scenario(allreduce(algorithm, {{"bucket_bytes", 40000}}), 1, 2, 8)); }
  }
  SECTION("ring without overlap") {
    check_matches_one_rank(trainer_scenario(allreduce("ring", {{"bucket_bytes", 40000}, {"overlap", false}}), 1, 2, 8));
  }
}

TEST_CASE("trainer: the hybrid scheme on 2 ranks gives the weights of 1 rank", "[np2]") {
  REQUIRE(world_size() == 2);
  const Json scheme = {{"name", "hybrid"}, {"data_parallel", allreduce("ring")}};
  check_matches_one_rank(trainer_scenario(scheme, 1, 2, 8));
}

TEST_CASE("trainer: bf16 or fp16 on --device cpu is refused on every rank and the record states fp32", "[np2]") {
  REQUIRE(world_size() == 2);
  plan::Scenario s = trainer_scenario(allreduce("ring"), 1, 2, 8, 2);
  const exec::TrainResult fp32 = exec::train(s, trainer_options(), MPI_COMM_WORLD);
  if (fp32.rank == 0) CHECK(fp32.run.at("precision") == "fp32");
  for (plan::Precision p : {plan::Precision::kBf16, plan::Precision::kFp16}) {
    s.training.precision = p;
    int64_t refused = 0;
    try {
      exec::train(s, trainer_options(), MPI_COMM_WORLD);
    } catch (const InputError& e) {
      const std::string what = e.what();
      refused = what.find("trainer-test.json") != std::string::npos &&
                what.find("/training/precision") != std::string::npos &&
                what.find(plan::precision_name(p)) != std::string::npos &&
                what.find("--device cuda") != std::string::npos;
    }
    CHECK(sum_over_ranks(refused) == 2);
  }
}

TEST_CASE("trainer: batch norm left one value per channel (batch 1 on 1x1 maps) is refused on every rank", "[np2]") {
  REQUIRE(world_size() == 2);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // conv1 turns a 4x4 input into 8 channels of 1x1, which bn1 normalises.
  const std::string model = (std::filesystem::temp_directory_path() /
                             ("scaletwin-bn1x1-" + std::to_string(::getpid()) + "-" + std::to_string(rank) + ".json"))
                                .string();
  std::ofstream(model) << R"({"name": "bn1x1", "input": [1, 4, 4], "classes": 10, "layers": [
    {"name": "conv1", "type": "conv", "out_channels": 8, "kernel": 4},
    {"name": "bn1", "type": "batchnorm"}, {"name": "relu1", "type": "relu"},
    {"name": "fc", "type": "fc", "out_features": "classes"}, {"name": "loss", "type": "softmax_cross_entropy"}]})";
  plan::Scenario s = trainer_scenario(allreduce("ring"), 1, 2, 1, 2);
  s.model = model;
  int64_t refused = 0;
  try {
    exec::train(s, trainer_options(), MPI_COMM_WORLD);
  } catch (const InputError& e) {
    const std::string what = e.what();
    refused = what.find("trainer-test.json") != std::string::npos && what.find("/batch_per_gpu") != std::string::npos &&
              what.find("\"bn1\"") != std::string::npos && what.find("1x1") != std::string::npos;
  }
  CHECK(sum_over_ranks(refused) == 2);
  s.batch_per_gpu = 2;  // two values per channel: it trains
  CHECK(std::isfinite(exec::train(s, trainer_options(), MPI_COMM_WORLD).final_train_loss));
  std::filesystem::remove(model);
}

TEST_CASE("trainer: a synchronous parameter server on 2 workers + 1 server gives the weights of 1 rank", "[np3]") {
  REQUIRE(world_size() == 3);
  const Json scheme = {{"name", "ps"}, {"mode", "sync"}, {"servers", 1}};
  check_matches_one_rank(trainer_scenario(scheme, 1, 2, 8));
}

TEST_CASE("trainer: 2 server shards with local aggregation, and the hierarchical all-reduce on 2 nodes", "[np4]") {
  REQUIRE(world_size() == 4);
  SECTION("ps sync, 2 workers on one node + 2 shards, local aggregation") {
    const Json scheme = {{"name", "ps"}, {"servers", 2}, {"local_aggregation", true}};
    check_matches_one_rank(trainer_scenario(scheme, 1, 2, 8));
  }
  SECTION("ps sync, a server per node: 2 nodes of 1 worker + their 2 servers") {
    const Json scheme = {{"name", "ps"}, {"servers", "per_node"}};
    const plan::Scenario s = trainer_scenario(scheme, 2, 1, 8);
    CHECK(exec::workers_for_ranks(s, 4) == 2);
    CHECK(exec::servers_of(s, 2) == 2);
    CHECK_THROWS_AS(exec::workers_for_ranks(s, 3), InputError);  // 1 worker + 1 server, or 2 + 2: never 3
    CHECK(exec::workers_for_ranks(trainer_scenario(scheme, 2, 2, 8), 3) == 2);  // 2 workers share a node
    const Json per_gpu = {{"name", "ps"}, {"servers", "per_gpu"}, {"placement", "device"}};
    CHECK(exec::workers_for_ranks(trainer_scenario(per_gpu, 1, 2, 8), 4) == 2);
    CHECK_THROWS_AS(exec::workers_for_ranks(trainer_scenario(per_gpu, 1, 2, 8), 3), InputError);
    check_matches_one_rank(s);
  }
  SECTION("hierarchical all-reduce, 2 nodes of 2 workers") {
    check_matches_one_rank(trainer_scenario(allreduce("hierarchical", {{"bucket_bytes", 40000}}), 2, 2, 4));
  }
  SECTION("hybrid with a parameter server for the backbone: 3 workers and 1 server") {
    // 3 workers do not divide lenet5's 10 classes: the driver refuses with an input error on every rank.
    const Json scheme = {{"name", "hybrid"}, {"data_parallel", {{"name", "ps"}, {"servers", 1}}}};
    const plan::Scenario s = trainer_scenario(scheme, 1, 3, 4);
    int64_t refused = 0;
    try {
      exec::train(s, trainer_options(), MPI_COMM_WORLD);
    } catch (const InputError& e) {
      refused = std::string(e.what()).find("divide evenly") != std::string::npos ? 1 : 0;
    }
    CHECK(sum_over_ranks(refused) == 4);
  }
}

TEST_CASE("trainer: asynchronous parameter server, 2 workers + 1 server: runs and reports staleness", "[np3]") {
  REQUIRE(world_size() == 3);
  const Json scheme = {{"name", "ps"}, {"mode", "async"}, {"servers", 1}};
  plan::Scenario s = trainer_scenario(scheme, 1, 2, 8, 6);
  s.scheme.allreduce.bucket_bytes = 40000;  // three buckets, each pushed and pulled on its own
  const exec::TrainResult run = exec::train(s, trainer_options(), MPI_COMM_WORLD);
  // Every worker pushes every bucket once per iteration, and the server serves each push.
  CHECK(run.staleness.pushes == 2 * 6 * 3);
  CHECK(run.staleness.mean >= 0.0);
  CHECK(run.staleness.mean <= static_cast<double>(run.staleness.max));
  CHECK(run.staleness.max <= 6);  // at most the other worker's pushes of that bucket
  CHECK(std::isfinite(run.final_train_loss));
  if (run.rank == 0) {
    REQUIRE(run.run.contains("staleness"));
    CHECK(run.run["staleness"]["pushes"] == 36);
    REQUIRE(run.run["ranks"].size() == 3);
    // Workers keep their own pace: the job's rate is the sum of theirs, as the simulator counts it.
    double sum = 0.0;
    for (const auto& rank : run.run["ranks"])
      if (rank["kind"] == "worker") sum += rank["images_per_sec"].get<double>();
    CHECK(sum > 0.0);
    CHECK(run.run["images_per_sec"].get<double>() == Approx(sum).epsilon(1e-12));
    // The run's figures are a report::RunRecord, read back as compare reads a measured run.
    const report::RunRecord r = report::measured_record(JsonObject(run.run, "run.json", "/runs/0"),
                                                        run.run["id"], 2, 2 * 8, run.run["images_per_sec"]);
    CHECK(r.plan_hash.size() == 16);
    CHECK(r.iteration_s == Approx(run.run["iteration_s"].get<double>()));
    CHECK(r.iteration_s == Approx(16.0 / sum));
    CHECK(r.phases_s.at("compute") > 0.0);
    CHECK(r.phases_s.count("exposed_comm") == 1);
  }
}

TEST_CASE("trainer: mixed_async on 2 nodes of 2 workers + 1 server", "[np5]") {
  REQUIRE(world_size() == 5);
  const Json scheme = {{"name", "ps"}, {"mode", "mixed_async"}, {"servers", 1}};
  const exec::TrainResult run = exec::train(trainer_scenario(scheme, 2, 2, 4, 5), trainer_options(), MPI_COMM_WORLD);
  // Only the node leaders talk to the server: 2 leaders × 5 iterations × 1 bucket.
  CHECK(run.staleness.pushes == 2 * 5);
  CHECK(run.staleness.max <= 5);
  CHECK(std::isfinite(run.final_train_loss));
  // Inside a node the workers stay in step: both hold the weights their leader pulled.
  std::vector<float> first;
  if (run.worker) first = run.weights.at(1);  // conv1
  int64_t differs = 0;
  if (run.worker) {
    std::vector<float> other(first.size());
    MPI_Comm node;
    MPI_Comm_split(MPI_COMM_WORLD, run.rank / 2, run.rank, &node);
    MPI_Bcast(first.data(), static_cast<int>(first.size()), MPI_FLOAT, 0, node);
    other = run.weights.at(1);
    differs = other == first ? 0 : 1;
    MPI_Comm_free(&node);
  } else {
    MPI_Comm node;
    MPI_Comm_split(MPI_COMM_WORLD, MPI_UNDEFINED, run.rank, &node);
  }
  CHECK(sum_over_ranks(differs) == 0);
}

}  // namespace scaletwin::test
