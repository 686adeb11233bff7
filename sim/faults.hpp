// What-if faults (issue 10) as the simulator applies them to one point: the scenario's faults
// (plan::Scenario::faults, validated by plan/scenario.cpp) resolved against the cluster and the plan of that point.
//
//   degraded_link  every selected edge keeps bandwidth_factor of its bandwidth (both directions; factors of
//                  several faults multiply), on top of the calibration's factor of its link class
//   failed_link    every selected edge is removed from routing: routes are recomputed with the metric of
//                  Cluster::route() (least latency, then fewest hops, devices are not transit vertices) over the
//                  remaining edges; a pair that talks and has no route left is an InputError naming the fault
//                  ("the cluster is partitioned"), exit 2
//   straggler      the compute items of that worker's endpoint take `slowdown` times longer (a worker beyond the
//                  point's GPU count: the fault does not apply at that point)
//
// A selector (kind and/or node) that matches no edge of the point's cluster is an InputError. Both fidelities
// apply the same faults: the message level in its platform and compute times, the fast mode in its flow network
// and twin classes (a straggler is a class of its own).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "plan/iteration_plan.hpp"
#include "plan/scenario.hpp"
#include "topology/cluster.hpp"

namespace scaletwin::sim {

class AppliedFaults {
 public:
  AppliedFaults() = default;
  // `file`: the scenario file, for errors.
  AppliedFaults(const std::vector<plan::Fault>& faults, const std::string& file, const topology::Cluster& cluster,
                const plan::IterationPlan& plan);

  bool any() const { return any_; }
  double bandwidth_factor(int edge) const {
    return bandwidth_factor_.empty() ? 1.0 : bandwidth_factor_[static_cast<size_t>(edge)];
  }
  double slowdown(int endpoint) const { return slowdown_.empty() ? 1.0 : slowdown_[static_cast<size_t>(endpoint)]; }
  // The route between two vertices avoiding failed edges (Cluster::route() when none failed).
  topology::Route route(const topology::Cluster& cluster, int from, int to) const;

 private:
  bool any_ = false;
  std::vector<double> bandwidth_factor_;  // per edge
  std::vector<char> failed_;              // per edge
  std::vector<double> slowdown_;          // per endpoint
  std::string file_, failed_path_;
  mutable std::map<int, std::vector<int>> tree_;  // source vertex → predecessor edge per vertex
};

}  // namespace scaletwin::sim
