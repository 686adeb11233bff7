// Time to accuracy in the training driver, under mpirun: a run with a target accuracy stops at the first
// evaluation that reaches it (parameter servers, synchronous or on demand, stop with the workers instead of
// hanging), records its curve, and an all-reduce run measures the gradient noise scale.
#include <catch2/catch.hpp>

#include "core/error.hpp"
#include "test_trainer_support.hpp"

namespace scaletwin::test {

namespace {

// lenet5 on Fashion-MNIST to a low target (reached within the first epoch), evaluated every 2% of an epoch.
plan::Scenario target_scenario(const Json& scheme, int gpus_per_node, int64_t batch) {
  const Json j = {{"name", "target-test"},
                  {"model", "lenet5"},
                  {"cluster", "aws-p2.8xlarge"},
                  {"nodes", 1},
                  {"gpus_per_node", gpus_per_node},
                  {"batch_per_gpu", batch},
                  {"scheme", scheme},
                  {"training",
                   {{"data", "real"},
                    {"dataset", "fashion-mnist"},
                    {"target_accuracy", 0.6},
                    {"max_epochs", 2},
                    {"eval_every_epochs", 0.02},
                    {"learning_rate", 0.02},
                    {"lr_reference_batch", 64},
                    {"seed", 3}}}};
  return plan::parse_scenario(j, "target-test.json");
}

exec::TrainOptions target_options() {
  exec::TrainOptions o;
  o.threads = 1;
  return o;
}

// The run record of a target run, checked on rank 0: stopped early, at the first evaluation at or above the
// target, with the crossing interpolated between it and the one before.
void check_stopped_at_target(const exec::TrainResult& run, int64_t budget_iterations) {
  if (run.rank != 0) return;
  const Json& r = run.run;
  REQUIRE(r.contains("time_to_target"));
  const Json& t = r["time_to_target"];
  REQUIRE(t["reached"].get<bool>());
  const int64_t done = r["iterations"].get<int64_t>();
  CHECK(done < budget_iterations);
  const Json& curve = r["curve"];
  REQUIRE(curve.size() >= 2);
  const Json& last = curve.back();
  CHECK(last["iteration"].get<int64_t>() == done);
  CHECK(last["test_accuracy"].get<double>() >= 0.6);
  for (size_t i = 0; i + 1 < curve.size(); ++i) {
    CHECK(curve[i]["iteration"].get<int64_t>() < curve[i + 1]["iteration"].get<int64_t>());
    CHECK(curve[i]["test_accuracy"].get<double>() < 0.6);  // it stopped at the first evaluation at the target
  }
  const double images = t["images"].get<double>();
  CHECK(images <= last["images"].get<double>());
  CHECK(images > curve[curve.size() - 2]["images"].get<double>());
  CHECK(t["seconds"].get<double>() > 0.0);
  CHECK(t["seconds"].get<double>() <= last["train_s"].get<double>());
  CHECK(r["eval_s"].get<double>() > 0.0);
}

}  // namespace

TEST_CASE("trainer: a target accuracy stops an all-reduce run, which measures the gradient noise scale", "[np2]") {
  const plan::Scenario s = target_scenario({{"name", "allreduce"}, {"algorithm", "ring"}}, 2, 32);
  const exec::TrainResult run = exec::train(s, target_options(), MPI_COMM_WORLD);
  check_stopped_at_target(run, 2 * 60000 / 64);
  if (run.rank == 0) {
    REQUIRE(run.run.contains("noise_scale"));
    const Json& whole = run.run["noise_scale"]["whole_run"];
    // Unbiased estimates from the per-worker and all-reduced norms: both positive over a run of this length, and
    // B_simple a batch size (McCandlish et al. find tens to hundreds for small image classifiers).
    CHECK(whole["gradient_sq"].get<double>() > 0.0);
    CHECK(whole["trace_sigma"].get<double>() > 0.0);
    REQUIRE(whole["b_simple"].is_number());
    CHECK(whole["b_simple"].get<double>() > 1.0);
    CHECK(whole["b_simple"].get<double>() < 1e5);
    CHECK(run.run["update_batch"] == 64);
  }
}

TEST_CASE("trainer: a target accuracy stops a synchronous parameter server's job, servers included", "[np3]") {
  const plan::Scenario s = target_scenario({{"name", "ps"}, {"mode", "sync"}, {"servers", 1}}, 2, 32);
  const exec::TrainResult run = exec::train(s, target_options(), MPI_COMM_WORLD);
  check_stopped_at_target(run, 2 * 60000 / 64);
  if (run.rank == 0) CHECK_FALSE(run.run.contains("noise_scale"));  // the workers never see the global gradient
}

TEST_CASE("trainer: a target accuracy stops an asynchronous parameter server's job", "[np3]") {
  const plan::Scenario s = target_scenario({{"name", "ps"}, {"mode", "async"}, {"servers", 1}}, 2, 32);
  const exec::TrainResult run = exec::train(s, target_options(), MPI_COMM_WORLD);
  check_stopped_at_target(run, 2 * 60000 / 64);
  if (run.rank == 0) {
    CHECK(run.run["update_batch"] == 32);  // each push is one worker's batch
    CHECK(run.run["staleness"]["mean"].get<double>() > 0.0);
  }
}

}  // namespace scaletwin::test
