// The compute jitter of a calibration, from the runs that measured it (sim/jitter.hpp says what it does).
//
// scaletwin run records each worker's coefficient of variation of compute time per measured iteration (the run's
// "compute_jitter", the mean over its workers). It is a measurement, not a fitted value: calibrate sets
// devices/<device>/compute_jitter to the mean over the runs on that device that carry it, taking only runs with
// co-runners (at least 2 workers per node) when there are any, because workers that share a node's cores jitter
// more than one alone, and predictions of more than one worker are the ones it changes; of those, only runs
// without parameter-server processes when there are any, because a server that shares the workers' cores (the
// closed loop's 2-core node: two workers and a server) disturbs their compute by its own work, which the fit
// finds as the server's processing cost (ps_cost_per_byte_s) and which schemes without servers do not have.
// Done before the fit, so the fitted values explain what the jitter does not.
#pragma once

#include <string>
#include <vector>

#include "calibrate/measurements.hpp"
#include "core/json_reader.hpp"
#include "sim/calibration.hpp"

namespace scaletwin::calibrate {

struct MeasuredJitter {
  std::string device;     // the key in Calibration::devices
  double value = 0.0;     // the mean compute_jitter of `runs`
  std::vector<std::string> runs;  // ids of the runs it came from
};

// The device key a run's workers use in a calibration (its cluster's device type name).
std::string run_device(const MeasuredRun& run);

// Sets compute_jitter of every device some run measured it on; returns what was set (empty: no run carries it,
// the calibration is unchanged).
std::vector<MeasuredJitter> apply_measured_jitter(const std::vector<MeasuredRun>& runs, sim::Calibration& c);

Json measured_jitter_to_json(const std::vector<MeasuredJitter>& jitter);

}  // namespace scaletwin::calibrate
