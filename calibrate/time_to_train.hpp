// Time to train, validated: published training times (DeepLearningExamples' 90-epoch tables in
// ../shared/reference/modern/time-to-accuracy.json; MLPerf-style records: system, GPUs, global batch, minutes per run)
// predicted as `predict` would, and each run's error reported (validate --time-to-train).
//
// A record's time is predicted as
//   epochs x training images / predicted images/s  +  evaluations x validation images / inference rate
// with images/s simulated for the record's system, devices, batch and stack exactly as a throughput run of the same
// record (calibrate/measurements.hpp reads it, its images/s absent), each with its device's calibration. The epochs:
// the record's ("epochs", "epochs_per_run", or its runs' "epochs") where stated, else the convergence model's at the
// record's global batch (--convergence, else the shipped fit of the record's model: sim::shipped_convergence), with the record's warm-up ("lr_warmup_epochs", else the recipe's at the nearest fitted batch) and
// the model's evaluation cadence (an offset that varies: half a period after the crossing). Evaluations of the 50,000
// ImageNet validation images at the simulated inference rate are counted at the record's period ("eval_every_epochs";
// every epoch for DeepLearningExamples' tables, whose scripts validate after each epoch). The interval: the throughput's (the row's) and the
// convergence model's, in quadrature, and the printed time's rounding ("~5 hours": +/- half an hour) beside it.
//
// The measured time: "time_to_train_s", "time_to_train_min" or "minutes" (a number, or one per run), or per run in
// "runs": [{"time_to_train_min_derived"}] (MLPerf); of several runs, MLPerf's score where there are 5 or more (the
// olympic mean: the fastest and the slowest dropped), else their mean.
//
// Every record of the files gets a row: predicted, or not with the reason (no time to train; epochs neither stated
// nor given by a convergence model; batch not stated; a field the throughput reader refuses).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "calibrate/measurements.hpp"
#include "core/json_reader.hpp"
#include "plan/scenario.hpp"

namespace scaletwin::calibrate {

// ImageNet-1k's validation set (ILSVRC-2012): what an MLPerf ResNet-50 evaluation infers.
inline constexpr double kImagenetValImages = 50000.0;

struct TrainTimeRecord {
  std::string id, file, json_path, model;
  double measured_s = 0.0;      // the mean of the runs where several are given
  std::string printed;          // as printed ("~5 hours"), "" when a number
  double rounding = 0.0;        // relative half-step of the printed figure (0.1 for "~5 hours")
  bool estimated = false;       // the README estimates it from throughput (time_estimated_per_readme)
  double epochs = 0.0;          // 0: to come from the convergence model
  std::string epochs_basis;     // "stated" | "convergence model"
  double warmup_epochs = 0.0;
  double eval_every_epochs = 0.0;  // stated epochs: the evaluations the time includes (0: none counted)
  double global_batch = 0.0;
  std::optional<MeasuredRun> run;  // the throughput run to simulate; empty when not predicted
  std::string why_not;             // when not predicted
  // Filled by check_time_to_train:
  double predicted_images_per_sec = 0.0;
  double inference_images_per_sec = 0.0;
  double evaluations = 0.0;      // counted in eval_s (an expectation where the offset varies)
  double train_s = 0.0, eval_s = 0.0, predicted_s = 0.0;
  double error = 0.0;            // predicted / measured - 1
  double low_s = 0.0, high_s = 0.0;  // 90% interval (0, 0: none)
  std::string calibration;       // which calibration predicted the images/s
  std::optional<plan::Convergence> convergence;  // where the epochs come from the model: which
};

// Every run of each file (format scaletwin-measurements/1, "runs"); InputError for a file that is not one.
// `convergence`: the model for records that state no epochs (nullopt: the shipped fit of each record's model).
std::vector<TrainTimeRecord> read_time_to_train(const std::vector<std::string>& files,
                                                const std::optional<plan::Convergence>& convergence);

struct TrainTimeCheck {
  std::vector<TrainTimeRecord> rows;
  int predicted = 0, inside = 0, with_interval = 0;
  double mape = 0.0;
};

// Simulates the predictable records (`parallel` at a time) with `calibration` (a file, shipped:NAME or none; "":
// each record's device's, as predict picks it) and fills their times and errors.
TrainTimeCheck check_time_to_train(std::vector<TrainTimeRecord> records, const std::string& calibration, int parallel,
                                   bool quiet);
// Whether the files hold time-to-train records and no throughput run (validate then checks the times).
bool only_time_to_train(const std::vector<std::string>& files);
Json time_to_train_json(const TrainTimeCheck& check);
std::string time_to_train_table(const TrainTimeCheck& check);

}  // namespace scaletwin::calibrate
