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
#pragma once

#include "plan/iteration_plan.hpp"
#include "sim/calibration.hpp"
#include "sim/report.hpp"
#include "topology/cluster.hpp"

namespace scaletwin::sim {

// E[max of g independent standard normal variables]; 0 for g <= 1.
double expected_max_of_normals(int g);

// The workers coupled with worker endpoint `endpoint` by synchronous (not on-demand) collectives, itself included.
int synchronous_group_size(const plan::IterationPlan& plan, int endpoint);

// Adds the expected wait for the slowest worker to a simulated point (iteration_s, images_per_sec,
// exposed_comm_s, jitter_wait_s), from the compute_jitter of the critical worker's device in `calibration`.
void apply_compute_jitter(PointResult& point, const plan::IterationPlan& plan, const topology::Cluster& cluster,
                          const Calibration& calibration);

}  // namespace scaletwin::sim
