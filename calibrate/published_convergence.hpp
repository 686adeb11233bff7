// Convergence from published runs: the convergence model (sim/convergence.hpp) fitted to MLPerf's reference
// convergence points (RCPs) and checked against Goyal et al. 2017's error-per-minibatch rows, as
// ../shared/reference/modern/convergence.json holds them ("rcp", "goyal_2017").
//
// RCP records: for one global batch B and the recipe's hyperparameters (optimizer, warm-up W epochs), the epochs each
// seed needed to reach the target (75.9% top-1 for ResNet-50), read at an evaluation every 4 epochs from an offset
// that differs between runs. A seed's epochs are the first evaluation at or after its crossing, so on average half an
// evaluation period after it. The model, in epochs of the D-image training set:
//
//   epochs(B, W) = m (1 + B / B_crit) + w W + every / 2        (m = images_min / D, w = warmup_cost in [0, 1])
//
// is linear in (m, m / B_crit, w): an ordinary least-squares fit over every seed, w held at a bound where the free fit
// leaves [0, 1]; standard errors from s² (XᵀX)⁻¹, se(log B_crit) by the delta method. The interval of a prediction:
// the leave-one-batch-out error (every seed of one batch left out, its mean predicted) and the seed-to-seed spread
// (pooled within-batch standard deviation of log epochs), in quadrature. Records that repeat a batch's seeds (the same
// RCP in several MLPerf rounds) are read once and named.
//
// Goyal rows (SGD with momentum, linear scaling, gradual warm-up, a fixed 90-epoch schedule): the top-1 error after
// 90 epochs per minibatch, not epochs to a target. A larger batch that needs (1 + B / B_crit) / (1 + B_0 / B_crit)
// times the epochs of the baseline B_0 trains, in 90 epochs, as the baseline would in fewer, and its error rises by
// the local slope of the error against log epochs near 90 epochs:
//   err(B) = err_0 + s ln((1 + B / B_crit) / (1 + B_0 / B_crit)),   s = kTop1PointsPerEfold
// fitted (B_crit, err_0) by weighted least squares over the rows the slope covers (a rise of at most
// kSlopeRangePoints); SGD's critical batch, reported beside LARS's (a scenario with SGD states its own convergence).
// Every row read is either fitted or listed with why not.
#pragma once

#include <string>
#include <vector>

#include "core/json_reader.hpp"
#include "plan/scenario.hpp"

namespace scaletwin::calibrate {

// The local slope of ResNet-50's top-1 error against ln(epochs) near 90 epochs: DeepLearningExamples' ResNet-50
// accuracy tables at 50, 90 and 250 epochs (../shared/reference/modern/time-to-accuracy.json; PyTorch AMP 76.25,
// 77.23, 78.42; MXNet 76.31, 77.15, 78.46; TensorFlow AMP 75.96, 77.01, 78.35): 1.2 to 1.8 points per e-fold on
// either side of 90 epochs, 1.45 on average.
inline constexpr double kTop1PointsPerEfold = 1.45;
// The rise over the baseline's error that slope covers: one e-fold of epochs (90 to 250) at most, 1.5 points.
inline constexpr double kSlopeRangePoints = 1.5;
// MLPerf ResNet-50 evaluates every 4 epochs (../shared/reference/modern/README.md: read each RCP value as +/- 2
// epochs), the offset varying between runs.
inline constexpr double kRcpEvalEveryEpochs = 4.0;
// ImageNet-1k's training set (ILSVRC-2012).
inline constexpr double kImagenetTrainImages = 1281167.0;

struct RcpPoint {
  std::string key;                  // "resnet_ref_1632"
  std::vector<std::string> rounds;  // the MLPerf rounds that list these seeds
  std::string json_path;            // of the first record
  double global_batch = 0.0;
  std::string optimizer;
  double warmup_epochs = 0.0;
  double base_learning_rate = 0.0;
  std::vector<double> epochs;       // per seed
};

struct GoyalRow {
  std::string json_path;
  std::string label;  // table or section
  double batch = 0.0;
  double top1_error = 0.0, sd = 0.0;  // percent
  bool fitted = false;
  std::string why_not;  // when not fitted (a variant, another model, beyond the slope's range, ...)
  double predicted = 0.0;
};

struct PublishedConvergence {
  std::string file;
  std::string benchmark;       // "ResNet-50 v1.5 / ImageNet-1k"
  double target_accuracy = 0.0;
  std::vector<RcpPoint> rcp;
  std::vector<std::string> rcp_repeats;  // "/rcp/5 repeats /rcp/0 (resnet_ref_1632, rounds ...)"
  std::vector<GoyalRow> goyal;           // every row of goyal_2017, fitted or not
};

// InputError naming the file and field where a record lacks what the fit needs.
PublishedConvergence read_published_convergence(const std::string& path);
// Whether a JSON document is such a file (it has an "rcp" array).
bool is_published_convergence(const Json& doc);

struct PublishedFit {
  plan::Convergence model;   // images_min, critical_batch (the RCPs' optimizer), warmup_cost, log_sd, batch range
  double se_epochs_min = 0.0, se_warmup_cost = 0.0;
  bool warmup_at_bound = false;
  double seed_log_sd = 0.0;  // pooled within-batch spread of log epochs
  double lobo_log_rms = 0.0;
  double lobo_mape = 0.0, in_sample_mape = 0.0;
  struct Batch {
    const RcpPoint* point = nullptr;
    double measured_mean = 0.0, fitted = 0.0, left_out = 0.0;  // epochs as read (evaluation included)
  };
  std::vector<Batch> batches;
  // Goyal et al.'s SGD: critical batch, its standard error (log) and the baseline error; 0 when no row was fitted.
  double sgd_critical_batch = 0.0, sgd_se_log_critical_batch = 0.0, sgd_base_error = 0.0;
  double sgd_chi2 = 0.0;
  int sgd_rows = 0;
};

// InputError when the RCPs span fewer than 3 batches or mix optimizers.
PublishedFit fit_published_convergence(PublishedConvergence& data);
// The calibrate --convergence file (scaletwin-convergence/1) with the fit, the checks and the provenance.
Json published_fit_to_json(const PublishedFit& fit, const PublishedConvergence& data);
std::string published_fit_table(const PublishedFit& fit, const PublishedConvergence& data);

}  // namespace scaletwin::calibrate
