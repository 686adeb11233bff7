// Validation: predict measured runs and report the error of each and the mean absolute percentage error.
//
//   error = (predicted - measured) / measured        mape = 100 * mean |error|        (../shared/spec.md)
//
// validate_runs simulates every run at message level (the simulator `predict` uses), one forked child per run.
#pragma once

#include <string>
#include <vector>

#include "calibrate/measurements.hpp"
#include "core/json_reader.hpp"
#include "sim/calibration.hpp"

namespace scaletwin::calibrate {

struct ValidationRow {
  std::string id;
  double measured_images_per_sec = 0.0;
  double predicted_images_per_sec = 0.0;
  double error = 0.0;  // (predicted - measured) / measured
  int repeats = 1;                    // runs pooled into the measured figure (measurements.hpp, pool_repeats)
  double measured_std_error = 0.0;    // relative standard error of the measured figure (0 for one run)
  double interval_low = 0.0, interval_high = 0.0;  // the prediction's 90% interval (0, 0 without one)
  std::string fidelity = "";  // the simulator that predicted it ("message" or "fast": predict's rule); "" when unknown
};

struct Validation {
  std::vector<ValidationRow> rows;
  double mape = 0.0;  // percent
  // The calibration's prediction interval (Calibration::prediction_log_sd; 0: none) and how many measured
  // figures fall inside it.
  double interval_log_sd = 0.0;
  int inside_interval = 0;
};

// Sets every row's 90% interval from log_sd and counts the measured figures inside.
void set_intervals(Validation& v, double log_sd);

// Builds the rows and the MAPE from measured and predicted figures (same order and length).
Validation make_validation(const std::vector<std::string>& ids, const std::vector<double>& measured,
                           const std::vector<double>& predicted);

// Simulates every run with `calibration` (`parallel` children at a time) and compares.
Validation validate_runs(const std::vector<MeasuredRun>& runs, const sim::Calibration& calibration, int parallel);

// {"runs": [{"id", "measured_images_per_sec", "predicted_images_per_sec", "error", "repeats",
// "measured_std_error"}], "mape"}
Json validation_to_json(const Validation& v);
// One line per run and the MAPE, for people; with repeats, their number and the measured figure's standard error.
std::string validation_table(const Validation& v);

}  // namespace scaletwin::calibrate
