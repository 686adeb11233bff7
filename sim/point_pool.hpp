// Simulating points in forked children. SimGrid's engine runs once per process, so every point is simulated in a
// child of its own: up to `parallel` children at a time, each replying with its report::PointResult (or its
// error) as JSON over a pipe, read back in the order of the jobs. predict forks one point at a time; calibrate and
// validate run many at once. Each child applies the calibration's per-model factors (Calibration::for_model).
#pragma once

#include <functional>
#include <vector>

#include "plan/scenario.hpp"
#include "report/report.hpp"
#include "sim/calibration.hpp"
#include "sim/predict.hpp"
#include "sim/runner.hpp"

namespace scaletwin::sim {

struct PointJob {
  plan::Scenario scenario;
  int gpus = 1;
  Calibration calibration;
  Fidelity fidelity = Fidelity::kAuto;  // predict's rule unless the caller asks for one simulator
};

// Simulates every job with its fidelity (by default predict's rule, Fidelity::kAuto: message level up to
// kAutoFastAboveGpus GPUs and for asynchronous plans, the fast mode above; report::PointResult::fidelity says
// which). An error in any child is rethrown in the parent with its type
// (InputError keeps the file and JSON path it named) once the running children have been reaped; no new child
// starts after an error. on_done, if set, is called after each finished simulation (progress).
std::vector<report::PointResult> simulate_points_forked(const std::vector<PointJob>& jobs, int parallel,
                                                        const RunOptions& options,
                                                        const std::function<void()>& on_done = {});

}  // namespace scaletwin::sim
