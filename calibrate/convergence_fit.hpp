// Fitting and validating the convergence model (sim/convergence.hpp) from measured runs to a target accuracy.
//
// Input: measurements files of `scaletwin run --target-accuracy A` (every run record with a "time_to_target"):
// the images each run needed, the batch one update averaged over, the mean staleness of its updates. The fit is a
// least-squares fit of log(images) over (log images_min, log critical_batch, staleness_cost >= 0): a grid over the
// two nonlinear parameters with images_min in closed form, refined on a finer grid; standard errors from the
// Jacobian at the optimum (s² (JᵀJ)⁻¹), the spread of log errors by leave-one-configuration-out cross-validation
// (every seed of a configuration left out together: the model's error at a configuration it did not see and a run's
// seed-to-seed spread, what a prediction interval of a run nobody fitted should use). Runs that did not reach the target are censored: they
// are listed, not fitted.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/json_reader.hpp"
#include "plan/scenario.hpp"

namespace scaletwin::calibrate {

struct ConvergenceRun {
  std::string id;
  std::string file;
  std::string scheme;          // the run's scheme, described
  int gpus = 0;
  double update_batch = 0.0;
  double staleness = 0.0;      // mean (0 for synchronous runs)
  bool reached = false;
  double images = 0.0;         // to the target
  double seconds = 0.0;        // to the target, training only
  double images_per_sec = 0.0; // the run's measured throughput (after warm-up)
  std::optional<double> noise_scale;  // B_simple over the second half of the run, where measured
};

struct ConvergenceData {
  std::vector<ConvergenceRun> runs;
  double target_accuracy = 0.0;
  std::string lr_scaling = "linear";
  double reference_batch = 0.0;
  std::string model;
  std::string dataset;
};

// Reads every run with a time_to_target from the files; InputError (file, run, field) when a run lacks a field or
// the runs disagree on the target, the learning-rate rule or its reference batch.
ConvergenceData read_convergence_runs(const std::vector<std::string>& files);

struct ConvergenceFit {
  plan::Convergence model;                  // log_sd: leave one configuration out
  std::optional<double> se_log_images_min;  // standard errors (log scale for the two positive parameters)
  std::optional<double> se_log_critical_batch;
  std::optional<double> se_staleness_cost;  // empty when no run was stale (the cost is then 0, not identified)
  double in_sample_mape = 0.0;
  std::vector<double> loo_log_errors;       // per reached run, log(predicted / measured), its configuration left out
};

// InputError when fewer than 3 runs reached the target or they span a single update batch.
ConvergenceFit fit_convergence(const ConvergenceData& data);

// The calibrate --convergence file (format "scaletwin-convergence/1"), read back by plan::load_convergence.
Json convergence_to_json(const ConvergenceFit& fit, const ConvergenceData& data);

struct ConvergenceCheck {
  struct Row {
    const ConvergenceRun* run = nullptr;
    double predicted_images = 0.0;
    double predicted_seconds = 0.0;  // predicted images at the run's measured throughput
    double error = 0.0;              // predicted / measured seconds - 1
    bool inside = false;             // inside the 90% interval of the model's log_sd
  };
  std::vector<Row> rows;
  double mape = 0.0;
  int inside = 0;
  // The run-to-run spread of the measured time to target: per configuration (scheme, GPUs, update batch) with
  // two or more runs, the coefficient of variation of the seconds; its mean over those configurations.
  double spread_cv = 0.0;
  int spread_configurations = 0;
  int unreached = 0;
  // Asynchronous configurations set beside the synchronous runs of the same update batch: the measured slowdown
  // (their mean images over the synchronous runs' mean, minus 1) against the model's, staleness_cost · tau ·
  // lr(B) / lr(B_ref), and both per unit of rate-weighted staleness.
  struct Staleness {
    std::string configuration;
    double update_batch = 0.0;
    double staleness = 0.0;  // mean over the configuration's runs
    double weighted = 0.0;   // staleness · lr(B) / lr(B_ref)
    double measured_slowdown = 0.0;
    double predicted_slowdown = 0.0;
    int async_runs = 0, sync_runs = 0;
  };
  std::vector<Staleness> staleness;
};

ConvergenceCheck check_convergence(const plan::Convergence& model, const ConvergenceData& data);
Json convergence_check_json(const ConvergenceCheck& check, const plan::Convergence& model);
std::string convergence_check_table(const ConvergenceCheck& check, const plan::Convergence& model);

}  // namespace scaletwin::calibrate
