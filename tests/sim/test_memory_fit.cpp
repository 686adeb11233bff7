// The training-memory lower bound predict refuses a point by (sim/memory_fit.hpp), and the note and interval of a
// GPU the calibration was not fitted on (sim::unfitted_device).
#include <catch2/catch.hpp>

#include "core/error.hpp"
#include "models/zoo.hpp"
#include "sim/memory_fit.hpp"
#include "sim/predict.hpp"

#include <cmath>

using namespace scaletwin;

namespace {

plan::Scenario resnet50_on(const std::string& cluster, int batch, const std::string& precision) {
  return plan::parse_scenario(Json{{"name", "m"}, {"model", "resnet50"}, {"cluster", cluster}, {"gpus_per_node", 1},
                                   {"batch_per_gpu", batch}, {"training", {{"precision", precision}}},
                                   {"scheme", {{"name", "allreduce"}}}, {"sweep", {{"gpus", {1}}}}},
                              "m.json");
}

}  // namespace

TEST_CASE("the memory bound counts the weights' state once and the layers' outputs per sample at the run's width",
          "[unit]") {
  const models::Model m = models::make_builtin_model("resnet50");
  const plan::Scenario s = resnet50_on("dgx-a100", 256, "fp32");
  const sim::MemoryBound fp32 = sim::training_memory_bound(m, s, 4);
  const sim::MemoryBound half = sim::training_memory_bound(m, s, 2);
  // 25.6 M parameters x 12 bytes (weights, gradients, momentum), 14 bytes with the half copy.
  CHECK(fp32.weight_state_bytes == Approx(12.0 * static_cast<double>(m.params())).epsilon(0.01));
  CHECK(half.weight_state_bytes == Approx(14.0 * static_cast<double>(m.params())).epsilon(0.01));
  CHECK(half.activation_bytes == Approx(fp32.activation_bytes / 2.0));
  plan::Scenario twice = s;
  twice.batch_per_gpu = 512;
  CHECK(sim::training_memory_bound(m, twice, 4).activation_bytes == Approx(2.0 * fp32.activation_bytes));
  // Less than what frameworks hold (PyTorch's fp32 ResNet-50 fits batch 256 in 32 GB, not in 16 GB: DeepLearningExamples
  // trains it at 112 on a 16 GB V100), so the bound must sit below 16 GB at 112 and well below 32 GB at 256.
  plan::Scenario dle = s;
  dle.batch_per_gpu = 112;
  CHECK(sim::training_memory_bound(m, dle, 4).total_bytes() < 16e9);
  CHECK(fp32.total_bytes() < 32e9);
}

TEST_CASE("predict refuses a batch that cannot fit in the GPU's memory, naming the field and the largest batch",
          "[sim]") {
  sim::PredictOptions options;
  options.gpus = {1};
  options.calibration = sim::default_calibration();
  // ResNet-50 at batch 4,096 per 80 GB A100, in mixed precision: no prediction.
  try {
    (void)sim::predict(resnet50_on("dgx-a100", 4096, "fp16"), options);
    FAIL("predicted a point that cannot fit");
  } catch (const InputError& e) {
    CHECK_THAT(e.what(), Catch::Contains("m.json"));
    CHECK_THAT(e.what(), Catch::Contains("/batch_per_gpu"));
    CHECK_THAT(e.what(), Catch::Contains("A100-SXM4-80GB"));
    CHECK_THAT(e.what(), Catch::Contains("so at most batch"));
  }
  CHECK(sim::predict(resnet50_on("dgx-a100", 256, "fp16"), options).predictions.size() == 1);
}

TEST_CASE("a GPU the calibration was not fitted on is named, with the entry it takes, and gets no narrower interval",
          "[sim]") {
  const plan::Scenario s = resnet50_on("dgx-h100", 256, "fp16");
  const sim::Calibration k80 = sim::choose_calibration("shipped:k80", "").calibration;
  const auto unfitted = sim::unfitted_device(sim::worker_step(s, k80), k80);
  REQUIRE(unfitted);
  CHECK(unfitted->device == "H100-SXM5-80GB");
  CHECK(unfitted->family == "hopper");
  CHECK(unfitted->entry == "family:hopper");
  CHECK(unfitted->fitted == std::vector<std::string>{"Tesla K80 (one GK210)"});
  const std::string note = report::unfitted_device_note(*unfitted);
  CHECK_THAT(note, Catch::Contains("H100-SXM5-80GB (hopper) is not a device the calibration was fitted on"));
  // Never narrower than the K80's own error: at least that, and the cross-device transfer error where one is known.
  CHECK(sim::interval_log_sd(std::nullopt, k80, unfitted) >= k80.prediction_log_sd);
  CHECK(sim::interval_log_sd(std::nullopt, k80, unfitted) >= unfitted->interval_log_sd);
  // The K80 on its own calibration is fitted: nothing to say.
  const plan::Scenario k = plan::parse_scenario(
      Json{{"name", "k"}, {"model", "resnet50"}, {"cluster", "aws-p2.xlarge"}, {"batch_per_gpu", 32},
           {"scheme", {{"name", "allreduce"}}}},
      "k.json");
  CHECK_FALSE(sim::unfitted_device(sim::worker_step(k, k80), k80));
  // A CPU is not a GPU of any family: the closed loop calibrates it.
  const plan::Scenario cpu = plan::parse_scenario(
      Json{{"name", "c"}, {"model", "lenet5"}, {"cluster", "local-cpu"}, {"batch_per_gpu", 32},
           {"scheme", {{"name", "allreduce"}}}},
      "c.json");
  CHECK_FALSE(sim::unfitted_device(sim::worker_step(cpu, sim::default_calibration()), sim::default_calibration()));
}

TEST_CASE("an interval widens per doubling beyond the fitted scale by what the calibration's scale fold measured",
          "[unit]") {
  sim::Calibration c;
  c.prediction_log_sd = 0.1;
  c.fitted_scale["tensorflow"] = {8, 64};
  c.fitted_scale["mxnet"] = {1, 1};
  c.cross_validation_folds = {{"model!=vgg16", 16, 17.5, 0.17},  // not a scale fold
                              {"nodes<=1", 3, 2.1, 0.03}};       // 1 node -> up to 8: 3 doublings
  const auto [growth, fold] = sim::scale_growth(c);
  CHECK(growth == Approx(0.01));
  CHECK(fold == "nodes<=1");
  CHECK(sim::extrapolation_log_sd("tensorflow", 8, 64, c) == 0.0);      // within the fitted scale
  CHECK(sim::extrapolation_log_sd("tensorflow", 32, 128, c) == Approx(0.02));  // 2 doublings of nodes
  CHECK(sim::extrapolation_log_sd("tensorflow", 8, 512, c) == Approx(0.03));   // 3 of GPUs
  CHECK(sim::extrapolation_log_sd("nccl", 4, 16, c) == Approx(0.04));  // no run of nccl: from 1 node, 1 GPU
  // A GPU-count fold that extrapolated further per unit of error grows faster, and the larger growth is taken.
  c.cross_validation_folds.push_back({"gpus<=1", 20, 6.0, 0.12});  // 1 GPU -> up to 64: 6 doublings
  CHECK(sim::scale_growth(c).first == Approx(0.02));
  CHECK(sim::scale_growth(c).second == "gpus<=1");
  // None recorded: no growth, and the interval is the calibration's alone.
  c.cross_validation_folds.clear();
  CHECK(sim::extrapolation_log_sd("tensorflow", 64, 512, c) == 0.0);
  // A point's ratios combine the two in quadrature.
  report::PointResult p;
  p.images_per_sec = 100.0;
  p.extrapolation_log_sd = 0.1;
  const auto [lo, hi] = report::interval_ratios(0.1, p);
  CHECK(std::log(hi) == Approx(1.6448536 * std::hypot(0.1, 0.1)).epsilon(1e-4));
  CHECK(lo == Approx(1.0 / hi));
}
