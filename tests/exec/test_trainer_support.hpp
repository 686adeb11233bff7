// Helpers of the training-driver tests (test_trainer*.cpp): small lenet5 scenarios on synthetic data, a
// one-rank reference run with the same global batch, and a comparison of weights that every rank agrees on.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "exec/train/trainer.hpp"
#include "plan/scenario.hpp"

namespace scaletwin::test {

// lenet5, synthetic data, `iterations` steps of SGD with momentum and weight decay; no warm-up of the rate.
inline plan::Scenario trainer_scenario(const Json& scheme, int nodes, int gpus_per_node, int64_t batch,
                                       int64_t iterations = 4) {
  const Json j = {{"name", "trainer-test"},
                  {"model", "lenet5"},
                  {"cluster", "aws-p2.8xlarge"},
                  {"nodes", nodes},
                  {"gpus_per_node", gpus_per_node},
                  {"batch_per_gpu", batch},
                  {"scheme", scheme},
                  {"training",
                   {{"data", "synthetic"},
                    {"iterations", iterations},
                    {"warmup_iterations", 1},
                    {"learning_rate", 0.05},
                    {"lr_reference_batch", 16},
                    {"momentum", 0.9},
                    {"weight_decay", 5e-4},
                    {"seed", 7}}}};
  return plan::parse_scenario(j, "trainer-test.json");
}

inline exec::TrainOptions trainer_options() {
  exec::TrainOptions o;
  o.threads = 1;
  o.keep_weights = true;
  o.synthetic_samples = 512;
  return o;
}

// The same training on this rank alone with the whole global batch (data parallelism on one worker).
inline exec::TrainResult reference_run(plan::Scenario scenario, int64_t global_batch) {
  scenario.scheme = plan::parse_scheme(JsonObject::root(Json{{"name", "allreduce"}}, "reference"));
  scenario.nodes = 1;
  scenario.gpus_per_node = 1;
  scenario.batch_per_gpu = global_batch;
  return exec::train(scenario, trainer_options(), MPI_COMM_SELF);
}

struct WeightDiff {
  double max_abs = 0.0;
  int64_t mismatches = 0;  // elements with |a - b| > tolerance · max(1, |b|)
  int64_t compared = 0;
};

inline WeightDiff compare_weights(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b,
                                  double tolerance) {
  WeightDiff d;
  if (a.size() != b.size()) {
    d.mismatches = 1;
    return d;
  }
  for (size_t l = 0; l < a.size(); ++l) {
    if (a[l].size() != b[l].size()) {
      ++d.mismatches;
      continue;
    }
    for (size_t i = 0; i < a[l].size(); ++i) {
      const double diff = std::fabs(static_cast<double>(a[l][i]) - b[l][i]);
      d.max_abs = std::max(d.max_abs, diff);
      d.mismatches += diff > tolerance * std::max(1.0, std::fabs(static_cast<double>(b[l][i]))) ? 1 : 0;
      ++d.compared;
    }
  }
  return d;
}

// Sums over every rank of the job (so that every rank asserts the same thing).
inline int64_t sum_over_ranks(int64_t v) {
  int64_t out = 0;
  MPI_Allreduce(&v, &out, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  return out;
}
inline double max_over_ranks(double v) {
  double out = 0;
  MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return out;
}

}  // namespace scaletwin::test
