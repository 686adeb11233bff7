// The fast simulation mode (issue 5): the same iteration semantics as the message-level runner (runner.hpp), at
// the granularity of collective rounds instead of messages, without SimGrid.
//
//   compute     as in the message-level runner: one compute stream per endpoint (lowest ready item first), the
//               same ComputeModel; communication items run concurrently with it; deps honoured; the next
//               iteration starts when every item of the previous one has completed on that endpoint
//   collectives start when every participant has reached its item, then run their rounds (fast_rounds.hpp) in
//               lockstep; a round = [sender overhead + largest route latency] → [transfer: its flows share the
//               links, max-min fairly, with the flows of every other collective transferring at the same time]
//               → [reductions and copies on the receivers]; every participant's item completes with the last round
//   contention  the rates of the transferring rounds are recomputed whenever one starts or ends (fluid model);
//               a round's progress is the fraction of its slowest flow's bytes moved
//   symmetry    endpoints with identical programs (same compute ops, deps and collectives: data-parallel workers)
//               are twins and are simulated once; rounds whose network state repeats are timed by one lookup
//               (fast_network.hpp)
//
// Plans whose schedules were not materialized (plan::LowerOptions::materialize_schedules = false) are timed from
// their recipes: symbolic rounds for the ring generators, a materialized schedule for the others.
// Asynchronous plans (on-demand collectives) are not handled: fast_mode_supports() says so and callers use the
// message-level runner for them.
//
// Agreement with the message level (bench/bench_fidelity, tests/sim/test_fast.cpp): within 0.03% for ring,
// hierarchical, PS without local aggregation and the tf/bsc/dgx scenarios up to 64 GPUs. Known gaps: lockstep
// levels are pessimistic where a level mixes fast and slow links and the message level lets ranks run ahead
// (double binary tree, binomial reduce/broadcast of local aggregation: up to 8% at 6 GPUs, 2% at 16); several
// buckets of interval_pairing transferring at once over a 10 Gbit/s star come out 2-5% optimistic (the
// per-round fluid progress of concurrent collectives).
#pragma once

#include "plan/iteration_plan.hpp"
#include "sim/calibration.hpp"
#include "sim/report.hpp"
#include "sim/runner.hpp"
#include "topology/cluster.hpp"

namespace scaletwin::sim {

// Whether run_iteration_plan_fast can simulate `plan` (no on-demand collectives).
bool fast_mode_supports(const plan::IterationPlan& plan);

// Simulates `plan` like run_iteration_plan (same PointResult fields), with fidelity "fast". Can run many times
// per process (no SimGrid engine).
PointResult run_iteration_plan_fast(const plan::IterationPlan& plan, const topology::Cluster& cluster,
                                    const Calibration& calibration, const RunOptions& options);

}  // namespace scaletwin::sim
