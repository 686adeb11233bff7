// Comparing one prediction with measured runs, figure by figure: `scaletwin compare PREDICTION MEASUREMENTS`.
//
// PREDICTION is what `predict --json` writes (or DIR/report.json of `predict --report DIR`): {"predictions":
// [{"gpus", "iteration_s", "images_per_sec", "compute_s", "exposed_comm_s", "phases_s"?, "collectives"?}]}.
// MEASUREMENTS is a measurements file (calibrate/measurements.hpp); a run of `scaletwin run` also carries
// "phases_per_iteration_s": {"compute", "exposed_comm", "data", "idle"?} and may carry per-bucket times
// "collectives": [{"label", "seconds"}] (the labels the prediction's collectives have).
//
// Each measured run is joined with the predicted point of the same GPU count, and compared on
//   iteration_s (measured: global batch / images/s), images_per_sec,
//   the phases of the critical worker, as report::time_breakdown splits a prediction: compute (without data),
//   exposed_comm, data, and idle when the run states it (only measured phases are compared),
//   every bucket (collective label) that both sides have.
// error = (predicted - measured) / measured, none when measured is 0. Runs without a predicted point and predicted
// points without a run are listed, not compared; no pair at all is bad input.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/json_reader.hpp"
#include "report/run_record.hpp"

namespace scaletwin::report {

struct ComparedFigure {
  int gpus = 0;
  std::string run;
  std::string figure;  // iteration_s, images_per_sec, compute_s, exposed_comm_s, data_s, idle_s, bucket:LABEL,
                       // time_to_target_s, images_to_target
  double predicted = 0.0;
  double measured = 0.0;
  std::optional<double> error;  // (predicted - measured) / measured; none when measured is 0
};

struct Comparison {
  std::string prediction_file;
  std::string measurements_file;
  std::string scenario;
  std::vector<ComparedFigure> rows;
  std::vector<int> predicted_only_gpus;         // predicted points no run matched
  std::vector<std::string> measured_only_runs;  // runs at a GPU count the prediction lacks
};

// Both sides as RunRecord (run_record.hpp). The prediction's reader (the measurements' is calibrate/compare.hpp):
// InputError naming the file, the JSON path and what was expected.
std::vector<RunRecord> load_predicted_records(const std::string& path, std::string* scenario = nullptr);

Comparison compare_records(const std::vector<RunRecord>& predicted,
                           const std::vector<RunRecord>& measured);

// {"prediction", "measurements", "scenario", "rows": [{"gpus", "run", "figure", "predicted", "measured", "error"}],
//  "predicted_only_gpus", "measured_only_runs"}
Json comparison_to_json(const Comparison& c);
std::string comparison_table(const Comparison& c);

}  // namespace scaletwin::report
