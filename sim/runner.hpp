// The iteration runner: simulates an IterationPlan for warm-up + measured iterations on the platform of its
// cluster and reports one report::PointResult.
//
// One actor per endpoint runs its program each iteration: compute items one at a time (the endpoint's compute
// stream, lowest ready item first), communication items concurrently (each a RankPart of the interpreter, driven
// by the same actor's event loop), deps honoured; the next iteration starts when every item of the previous one
// has completed on that endpoint. Collectives couple endpoints; nothing else does (no global barrier).
//
// On-demand collectives (async parameter server, and between nodes for mixed_async) are started by their
// initiator alone: it queues a request at every other participant, whose serving actor handles requests one at a
// time in arrival order (its part of the schedule, then the instance's serve_compute, which applies the update).
// Staleness of an update = the updates to the same parameter slice (server, layers of the collective) that the
// server applied between this stream's previous request (its last pull) and the application of this push.
// Asynchronous workers keep training, unrecorded, until the slowest has finished its measured iterations.
//
// Timing (measured iterations only): sync: iteration_s = (latest end of the last iteration - latest end of the
// last warm-up iteration) / iterations, images/s = global batch / iteration_s; async: each worker's own mean
// iteration time t_w, images/s = sum of batch_w / t_w, iteration_s = mean t_w. The critical worker is the last
// to finish (sync) or the slowest (async).
#pragma once

#include <string>
#include <vector>

#include "plan/iteration_plan.hpp"
#include "plan/scenario.hpp"
#include "sim/calibration.hpp"
#include "sim/compute_model.hpp"
#include "report/report.hpp"
#include "topology/cluster.hpp"

namespace scaletwin::sim {

struct RunOptions {
  int iterations = 3;
  int warmup = 1;
  bool real_data = false;
  Arithmetic arithmetic;  // the run's precision and its stack's TF32 (compute_model.hpp)
  bool trace = false;
  std::vector<plan::Fault> faults;  // what-if faults (sim/faults.hpp); both runners apply them
  std::string faults_file;          // the scenario file, for their errors
};

// Simulates `plan` on `cluster`. One simulation per process (SimGrid's engine cannot be restarted).
report::PointResult run_iteration_plan(const plan::IterationPlan& plan, const topology::Cluster& cluster,
                                       const Calibration& calibration, const RunOptions& options);

}  // namespace scaletwin::sim
