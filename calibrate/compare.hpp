// `scaletwin compare PREDICTION MEASUREMENTS`: the prediction read by report::load_predicted_records, the measured
// runs by calibrate's measurements reader (measurements.hpp) as report::RunRecord, compared figure by figure by
// report::compare_records (report/compare.hpp says what is compared and how).
#pragma once

#include <string>
#include <vector>

#include "report/compare.hpp"
#include "report/run_record.hpp"

namespace scaletwin::calibrate {

// Every run of a measurements file as a record: its figures, with the GPU count and global batch of its
// configuration. InputError naming the file, the JSON path and what was expected.
std::vector<report::RunRecord> load_measured_records(const std::string& path);

// A run joined to a prediction whose configuration differs from it: the run's field ("/runs/3/batch_per_gpu"), the
// prediction's value and the run's.
struct Mismatch {
  std::string field;
  std::string predicted;
  std::string measured;
};

// What compare joins must be the same configuration: for every run at a GPU count the prediction has, its model,
// cluster, batch per GPU and scheme against those the prediction states ("model", "cluster", "batch_per_gpu",
// "scheme" of predict --json; a field the prediction leaves out is not checked), and its plan hash against the
// point's where both have one. Models and clusters named by a file compare by file name.
std::vector<Mismatch> configuration_mismatches(const std::string& prediction_path,
                                               const std::string& measurements_path);

// Both files, compared; no pair at all (no run at a GPU count the prediction has) is an InputError, and so is the
// first mismatch of configuration_mismatches unless allow_mismatch (then `mismatches` gets them all).
report::Comparison compare_files(const std::string& prediction_path, const std::string& measurements_path,
                                 bool allow_mismatch = false, std::vector<Mismatch>* mismatches = nullptr);

}  // namespace scaletwin::calibrate
