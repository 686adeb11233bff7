// A prediction file against a measurements file (see compare.hpp).
#include "calibrate/compare.hpp"

#include <fmt/format.h>

#include "calibrate/measurements.hpp"
#include "core/error.hpp"

namespace scaletwin::calibrate {

std::vector<report::RunRecord> load_measured_records(const std::string& path) {
  std::vector<report::RunRecord> out;
  for (const MeasuredRun& run : load_measurements(path)) out.push_back(run_record(run));
  return out;
}

report::Comparison compare_files(const std::string& prediction_path, const std::string& measurements_path) {
  std::string scenario;
  const std::vector<report::RunRecord> predicted = report::load_predicted_records(prediction_path, &scenario);
  const std::vector<report::RunRecord> measured = load_measured_records(measurements_path);
  report::Comparison c = report::compare_records(predicted, measured);
  if (c.rows.empty()) {
    std::string have;
    for (const report::RunRecord& p : predicted) {
      if (!have.empty()) have += ',';
      have += std::to_string(p.gpus);  // appended, not "," + string: GCC 12's -Wrestrict misfires on that at -O3
    }
    throw InputError(measurements_path, "/runs",
                     fmt::format("a run at a GPU count {} predicts ({})", prediction_path, have));
  }
  c.prediction_file = prediction_path;
  c.measurements_file = measurements_path;
  c.scenario = scenario;
  return c;
}

}  // namespace scaletwin::calibrate
