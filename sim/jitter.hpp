// Compute jitter: synchronous workers wait for the slowest of them every iteration.
//
// The simulator's compute times are means; a real worker's compute time varies from one iteration to the next
// (the executor measures the coefficient of variation cv of each worker's compute per iteration: the run
// record's "compute_jitter", the calibration's devices/<device>/compute_jitter). Workers coupled by synchronous
// collectives (an all-reduce, a synchronous push and pull, a node's reduce under mixed_async, the hybrid's
// model-parallel exchange) cannot start the next iteration before the last of them has delivered its gradients,
// so each iteration of a group of g such workers lasts, on average, E[max of g compute times] instead of their
// mean. With independent, normally distributed compute times of standard deviation sigma = cv * compute, that is
//
//   wait = sigma * e(g),   e(g) = E[max of g standard normal variables]   (e(1) = 0, e(2) = 0.564, e(8) = 1.424,
//                                                                          e(64) = 2.409, e(1024) = 3.245)
//
// added to the iteration time and to its exposed communication (the faster workers wait). g is the number of
// workers in the critical worker's group: workers joined, directly or through other workers and servers, by the
// plan's collectives that are not on demand (an asynchronous worker is a group of 1: no wait).
//
// Synchronisation points. A worker waits for the slowest of its group wherever its compute needs a synchronous
// collective's result: before a compute item that depends on one (the hybrid's blocking all-gathers and
// reduce-scatters in the classifier, the update after the gradient all-reduce), and at the end of the iteration
// for collectives no compute item reads (a synchronous PS's pulled weights). Between two such points the
// workers run free, so the wait at each point is that of the compute since the previous one, and the iteration
// pays one wait per point. Compute noise accumulates like independent increments (its variance grows with the
// time it runs over: preemptions and cache misses land anywhere), so a segment holding the fraction f_k of the
// iteration's compute has sigma_k = sigma * sqrt(f_k), and
//
//   wait = sigma * e(g) * sum_k sqrt(f_k)
//
// which is the single-point formula for data-parallel plans (one point per iteration: the gradients' collectives
// overlap the backward pass and the first compute that needs them is the update) and grows with the number of
// blocking exchanges (the hybrid has two per model-parallel layer). The segments are cyclic: the compute after
// the last point of an iteration runs on to the first point of the next.
#pragma once

#include <vector>

#include "plan/iteration_plan.hpp"
#include "sim/calibration.hpp"
#include "report/report.hpp"
#include "topology/cluster.hpp"

namespace scaletwin::sim {

// E[max of g independent standard normal variables]; 0 for g <= 1.
double expected_max_of_normals(int g);

// The workers coupled with worker endpoint `endpoint` by synchronous (not on-demand) collectives, itself included.
int synchronous_group_size(const plan::IterationPlan& plan, int endpoint);

// The fractions f_k of worker endpoint `endpoint`'s compute (data loading excluded, times from the compute model
// under `calibration`) between its consecutive synchronisation points, in program order, the last one wrapping
// round to the first point; {1} with one point, {} without any synchronous collective. They sum to 1.
std::vector<double> synchronous_segments(const plan::IterationPlan& plan, const topology::Cluster& cluster,
                                         const Calibration& calibration, int endpoint);

// Adds the expected wait for the slowest worker to a simulated point (iteration_s, images_per_sec,
// exposed_comm_s, jitter_wait_s), from the compute_jitter of the critical worker's device in `calibration`, the
// calibration the point was simulated with (Calibration::for_model applied): its compute model times the segments.
void apply_compute_jitter(report::PointResult& point, const plan::IterationPlan& plan, const topology::Cluster& cluster,
                          const Calibration& calibration);

}  // namespace scaletwin::sim
