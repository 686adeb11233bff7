// The fast simulation mode (issue 5): the same iteration semantics as the message-level runner (runner.hpp), at
// the granularity of collective rounds instead of messages, without SimGrid.
//
//   compute     as in the message-level runner: one compute stream per endpoint (lowest ready item first), the
//               same ComputeModel; communication items run concurrently with it; deps honoured; the next
//               iteration starts when every item of the previous one has completed on that endpoint
//   collectives step by step (dataflow.hpp) for schedules up to 64 ranks (except those whose generator registers
//               rounds exact in lockstep, plan/collectives.hpp): every rank starts
//               its part when its endpoint reaches the item, each transfer when both its sides are posted, as the
//               message level does; a participant's item completes when its ranks are done (for a twin class,
//               when all of its ranks are)
//               or in lockstep rounds (plan/rounds.hpp) for those and for larger schedules: they start
//               when every participant has reached its item; a round = [sender overhead + largest route latency]
//               → [transfer: its flows share the links, max-min fairly, with every other transfer in flight]
//               → [reductions and copies on the receivers]; every participant's item completes with the last round
//   contention  the rates of the transfers in flight (rounds and single flows) are recomputed whenever one starts
//               or ends (fluid model); a round's progress is the fraction of its slowest flow's bytes moved
//   symmetry    endpoints with identical programs (same compute ops, deps and collectives: data-parallel workers)
//               are twins and are simulated once; combinations of transfers that repeat (every step of a cycle, every
//               bucket of a data-parallel all-reduce) are timed by one lookup (network.hpp)
//   faults      what-if faults (faults.hpp) as the message level applies them: link bandwidths, routes, and the
//               straggler's compute times (a straggler is a twin class of its own)
//
// Plans whose schedules were not materialized (plan::LowerOptions::materialize_schedules = false) are timed from
// their recipes: the generator's symbolic rounds where it registers them (plan/collectives.hpp), else the
// rounds of the schedule generated for the time it takes to extract them.
// Asynchronous plans (on-demand collectives) are not handled: fast_mode_supports() says so and callers use the
// message-level runner for them (the point's fidelity says "message").
//
// Agreement with the message level: within 1% on iteration time for every scheme (tests/sim/test_fast.cpp;
// bench/bench_fidelity and sim/README.md for the measured differences and speed).
#pragma once

#include "plan/iteration_plan.hpp"
#include "sim/calibration.hpp"
#include "report/report.hpp"
#include "sim/runner.hpp"
#include "topology/cluster.hpp"

namespace scaletwin::sim {

// Whether run_iteration_plan_fast can simulate `plan` (no on-demand collectives).
bool fast_mode_supports(const plan::IterationPlan& plan);

// Simulates `plan` like run_iteration_plan (same report::PointResult fields), with fidelity "fast". Can run many times
// per process (no SimGrid engine).
report::PointResult run_iteration_plan_fast(const plan::IterationPlan& plan, const topology::Cluster& cluster,
                                            const Calibration& calibration, const RunOptions& options);

}  // namespace scaletwin::sim
