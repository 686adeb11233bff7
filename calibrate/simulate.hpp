// Simulating many measured runs for calibrate and validate: sim's fork pool (sim/point_pool.hpp), each finished
// simulation ticking the command's current progress, if any (core/progress.hpp).
#pragma once

#include <vector>

#include "core/progress.hpp"
#include "sim/point_pool.hpp"

namespace scaletwin::calibrate {

using SimJob = sim::PointJob;

// Simulates every job with predict's fidelity rule (sim/point_pool.hpp), up to `parallel` at a time; errors are
// rethrown with their type.
inline std::vector<report::PointResult> simulate_all(const std::vector<SimJob>& jobs, int parallel,
                                                     const sim::RunOptions& options) {
  return sim::simulate_points_forked(jobs, parallel, options, [] { tick_current_progress(); });
}

}  // namespace scaletwin::calibrate
