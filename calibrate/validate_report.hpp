// The HTML page of `validate --report DIR` (DIR/report.html): one self-contained page (inline CSS and SVG, no
// scripts, nothing fetched) that shows how far the simulator's predictions are from measured runs:
//
//   - a parity chart: predicted against measured images/s for every run, one colour per scheme, beside the line
//     predicted = measured;
//   - one chart per configuration (model, cluster, batch per GPU, data): images/s against GPUs, for each scheme the
//     measured runs (solid) and the predictions (dashed, hollow markers), every prediction labelled with its
//     error "+3.1%";
//   - the table of runs (id, GPUs, scheme, measured and predicted images/s and iteration time, error) and the MAPE;
//   - the calibration used: its source and its values.
//
// Error and MAPE as the spec defines them (validate.hpp). The charts come from report/svg_chart.hpp, the page frame
// and the calibration table from report/html.hpp (shared with predict's report).
#pragma once

#include <string>
#include <vector>

#include "calibrate/measurements.hpp"
#include "calibrate/validate.hpp"
#include "core/json_reader.hpp"

namespace scaletwin::calibrate {

struct ValidationReportContext {
  std::vector<std::string> measurement_files;
  std::string calibration_source;  // the calibration file, or how it was obtained
  Json calibration;                // sim::calibration_to_json(...); null: not shown
};

// `runs` and `v.rows` in the same order (as validate_runs returns them).
std::string validation_html(const std::vector<MeasuredRun>& runs, const Validation& v,
                            const ValidationReportContext& context);

}  // namespace scaletwin::calibrate
