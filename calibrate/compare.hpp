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
//   the phases of the critical worker, as sim::time_breakdown splits a prediction: compute (without data),
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

namespace scaletwin::calibrate {

// The figures of one side at one GPU count, seconds per iteration unless named otherwise.
struct PointFigures {
  std::string run;  // measured: the run's id; predicted: ""
  int gpus = 0;
  double iteration_s = 0.0;
  double images_per_sec = 0.0;
  std::map<std::string, double> phases_s;   // compute, exposed_comm, data, idle (those known)
  std::map<std::string, double> buckets_s;  // collective label -> seconds
  // Time to accuracy where both sides have it: predicted time_to_target_s and images_to_target; measured
  // time_to_target.seconds and .images of a run that reached its target (0: none).
  double time_to_target_s = 0.0;
  double images_to_target = 0.0;
};

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

// Readers: InputError naming the file, the JSON path and what was expected.
std::vector<PointFigures> load_predicted_figures(const std::string& path, std::string* scenario = nullptr);
std::vector<PointFigures> load_measured_figures(const std::string& path);

Comparison compare_figures(const std::vector<PointFigures>& predicted, const std::vector<PointFigures>& measured);
Comparison compare_files(const std::string& prediction_path, const std::string& measurements_path);

// {"prediction", "measurements", "scenario", "rows": [{"gpus", "run", "figure", "predicted", "measured", "error"}],
//  "predicted_only_gpus", "measured_only_runs"}
Json comparison_to_json(const Comparison& c);
std::string comparison_table(const Comparison& c);

}  // namespace scaletwin::calibrate
