// Simulating many measured runs: each point in a forked child (SimGrid allows one simulation per process), up to
// `parallel` children at a time, results read back over pipes in the order of the jobs. Each child applies the
// calibration's per-model factors (Calibration::for_model) for the scenario's model.
#pragma once

#include <vector>

#include "plan/scenario.hpp"
#include "sim/calibration.hpp"
#include "sim/report.hpp"
#include "sim/runner.hpp"

namespace scaletwin::calibrate {

struct SimJob {
  plan::Scenario scenario;
  int gpus = 1;
  sim::Calibration calibration;
};

// Simulates every job at message level; an error in any child is rethrown with its kind (InputError, SystemError,
// InternalError) after the running children have been reaped.
std::vector<sim::PointResult> simulate_all(const std::vector<SimJob>& jobs, int parallel,
                                           const sim::RunOptions& options);

}  // namespace scaletwin::calibrate
