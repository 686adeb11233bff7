// A validation: measured runs beside their predictions, the error of each and the mean absolute percentage error,
// with its renderings (JSON, table, HTML page). calibrate/validate.hpp fills one by simulating measured runs.
//
//   error = (predicted - measured) / measured        mape = 100 * mean |error|        (../shared/spec.md)
//
// The HTML page of `validate --report DIR` (DIR/report.html) is one self-contained page (inline CSS and SVG, no
// scripts, nothing fetched) that shows how far the predictions are from the measured runs:
//
//   - a parity chart: predicted against measured images/s for every run, one colour per scheme family, beside the
//     line predicted = measured;
//   - one chart per configuration (model, cluster, batch per GPU, data): images/s against GPUs, for each scheme the
//     measured runs (solid) and the predictions (dashed, hollow markers), every prediction labelled with its
//     error "+3.1%";
//   - the table of runs (id, GPUs, scheme, measured and predicted images/s and iteration time, error) and the MAPE;
//   - the calibration used: its source and its values.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/json_reader.hpp"
#include "report/report.hpp"
#include "report/run_record.hpp"

namespace scaletwin::report {

// What the page shows of a measured run beside its figures (calibrate/validate.cpp fills it from the run).
struct RunLabels {
  int gpus = 0;
  int nodes = 0;
  std::string model, cluster;
  int64_t batch_per_gpu = 0;
  std::string data;           // "synthetic" | "real"
  std::string scheme;         // described: "allreduce(ring, 25 MB buckets, overlapped)"
  std::string scheme_family;  // the parity chart's colour: "ps", "allreduce", "hybrid"
};

struct ValidationRow {
  std::string id;
  double measured_images_per_sec = 0.0;
  double predicted_images_per_sec = 0.0;
  double error = 0.0;  // (predicted - measured) / measured
  int repeats = 1;                    // runs pooled into the measured figure (calibrate/measurements.hpp)
  double measured_std_error = 0.0;    // relative standard error of the measured figure (0 for one run)
  double interval_low = 0.0, interval_high = 0.0;  // the prediction's 90% interval (0, 0 without one)
  // A run on several nodes of a cluster whose NIC rate is an assumption with a range: images/s predicted at its low
  // and high end (the smaller first), which the interval covers too (report.hpp: interval_ratios); 0, 0 elsewhere.
  double range_low_images_per_sec = 0.0, range_high_images_per_sec = 0.0;
  // Images/s under each alternative the model cannot rule out for the run (report.hpp: PointResult::alternatives),
  // which the interval covers too. dispatch_share: the share of the worker's compute the dispatch adds (0: none).
  std::map<std::string, double> alternatives;
  double dispatch_share = 0.0;
  std::string fidelity = "";  // the simulator that predicted it ("message" or "fast": predict's rule); "" when unknown
  // Whether the run is among those its calibration was fitted on (1), not (0), or unknown (-1: the calibration does
  // not list them); calibration: which calibration predicted it, where validate chose one per run ("" otherwise).
  int in_sample = -1;
  std::string calibration;
  RunLabels run;
  // Whether the row has an interval (set_intervals) and the measured figure lies inside it.
  bool inside_interval() const {
    return interval_high > 0.0 && measured_images_per_sec >= interval_low && measured_images_per_sec <= interval_high;
  }
};

// The rows that share the values of some run fields (validate --by framework,model): how many, their MAPE, their
// largest |error|, and how many of those with an interval lie inside it.
struct ValidationGroup {
  std::vector<std::string> values;  // one per field of Validation::group_fields
  int runs = 0;
  double mape = 0.0;           // percent
  double max_abs_error = 0.0;  // a fraction, as ValidationRow::error
  int with_interval = 0;
  int inside_interval = 0;
};

struct Validation {
  std::vector<ValidationRow> rows;
  double mape = 0.0;  // percent
  // The calibration's prediction interval (its prediction_log_sd; 0: none) and how many measured figures fall
  // inside it.
  double interval_log_sd = 0.0;
  int inside_interval = 0;
  int fast_above_gpus = 0;  // predict's rule for the rows' fidelity (0: not stated)
  // The largest dispatch_share of each stack's rows (what a calibration fitted on these runs supports:
  // scripts/fit-calibrations writes it into the calibration's prediction_interval.dispatch_support).
  std::map<std::string, double> dispatch_support;
  // The networks of the rows that the calibration was not fitted on for their device (sim::unfitted_network), each
  // with its number of rows.
  std::vector<std::pair<UnfittedNetwork, int>> unfitted_networks;
  std::vector<std::string> group_fields;  // set_groups: what the rows are grouped by (none: no groups)
  std::vector<ValidationGroup> groups;    // sorted by their values
};

// Builds the rows and the MAPE from measured and predicted figures (same order and length).
Validation make_validation(const std::vector<std::string>& ids, const std::vector<double>& measured,
                           const std::vector<double>& predicted);
// The same from records (report/run_record.hpp), measured[i] beside predicted[i]: ids from the measured side,
// images/s from both.
Validation make_validation(const std::vector<RunRecord>& measured, const std::vector<RunRecord>& predicted);

// Sets every row's 90% interval from log_sd (row i's from row_log_sd[i] where given) and its range
// (interval_ratios) and counts the measured figures inside; with log_sd 0 only rows with a range get one.
void set_intervals(Validation& v, double log_sd, const std::vector<double>& row_log_sd = {});

// Groups the rows by `keys` (keys[i]: the values of `fields` for row i), after set_intervals; groups sorted by
// their values, numbers as numbers (nodes 2 before 16).
void set_groups(Validation& v, const std::vector<std::string>& fields,
                const std::vector<std::vector<std::string>>& keys);

// {"runs": [{"id", "measured_images_per_sec", "predicted_images_per_sec", "error", "repeats",
// "measured_std_error", "fidelity"[, "predicted_interval"][, "predicted_assumed_range"]}], "mape"[, "interval"]
// [, "groups": {"by": [fields], "groups": [{"values": {field: value}, "runs", "mape", "max_abs_error",
// "with_interval", "inside_interval"}]}]}
Json validation_to_json(const Validation& v);
// One line per run and the MAPE, for people; with repeats, their number and the measured figure's standard error;
// then one line per group, if any.
std::string validation_table(const Validation& v);

struct ValidationReportContext {
  std::vector<std::string> measurement_files;
  std::string calibration_source;  // the calibration file, or how it was obtained
  Json calibration;                // sim::calibration_to_json(...); null: not shown
};

// The page described above. Charts from svg_chart.hpp, the frame and the calibration table from html.hpp.
std::string validation_html(const Validation& v, const ValidationReportContext& context);

}  // namespace scaletwin::report
