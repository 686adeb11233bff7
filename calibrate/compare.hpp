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

// Both files, compared; no pair at all (no run at a GPU count the prediction has) is an InputError.
report::Comparison compare_files(const std::string& prediction_path, const std::string& measurements_path);

}  // namespace scaletwin::calibrate
