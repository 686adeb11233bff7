// Validation: predict measured runs and report the error of each and the mean absolute percentage error
// (report/validation.hpp: the rows, the MAPE, their JSON, table and HTML page).
//
// validate_runs simulates every run as `predict` would (sim::simulate's automatic fidelity), one forked child per
// run.
#pragma once

#include <vector>

#include "calibrate/measurements.hpp"
#include "report/validation.hpp"
#include "sim/calibration.hpp"

namespace scaletwin::calibrate {

// What the validation page shows of a run: GPUs, nodes, model, cluster, batch, data, scheme.
report::RunLabels run_labels(const MeasuredRun& run);

// Simulates every run with `calibration` (`parallel` children at a time) and compares; rows in the runs' order.
report::Validation validate_runs(const std::vector<MeasuredRun>& runs, const sim::Calibration& calibration,
                                 int parallel);
// The same with each run's own calibration, calibrations[i] for runs[i] (validate without --calibration: each run's
// device's, sim::choose_calibration); each row's interval from its own.
report::Validation validate_runs(const std::vector<MeasuredRun>& runs,
                                 const std::vector<sim::Calibration>& calibrations, int parallel);

}  // namespace scaletwin::calibrate
