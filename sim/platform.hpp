// SimGrid platforms: the engine set-up shared by every simulation, the platform built from a topology::Cluster,
// and the contention-free test platform on which schedules must match the analytical oracle exactly.
//
// Cluster platform (one full zone, explicit routes):
//
//   node0/gpu0 ──pcie── node0/pcie_sw0 ──pcie── node0/cpu ──nic── node0/nic0 ──net── switch ── ... node1/...
//
// One SimGrid host per GPU and per host CPU; switches, NICs and network switches are not hosts, their links are:
// every topology edge becomes one split-duplex link (bandwidth per direction, latency), scaled by the
// calibration's factors for its link class. The route between two hosts is Cluster::route(), so flows that share
// a link share its bandwidth (SimGrid's max-min sharing, CM02, cross-traffic off, TCP-gamma off). Routes are added
// only for the pairs that communicate, so large clusters stay cheap.
//
// Contention-free platform (tests, oracle): p hosts on a star; host i's uplink is a FATPIPE link of latency α and
// bandwidth B (every flow gets B whatever else is in flight), its downlink a FATPIPE link of zero latency and the
// same bandwidth (an "unbounded" 1e300 one upsets the solver's precision). Every transfer then takes exactly
// α + bytes / B once both sides are ready, and hosts have one core per rank so that concurrent reductions never
// slow each other: the semantics of plan/oracle.hpp, reproduced to the last bit (tests/sim/test_oracle.cpp).
//
// Host speeds: every host computes at kTicksPerSecond "flops" per second with kCores cores, and the simulator
// turns a duration t (from the compute model) into t * kTicksPerSecond flops: a power of two, so the duration is
// reproduced exactly. Compute items of one endpoint are sequential anyway; the cores let reductions of concurrent
// collectives run beside them.
#pragma once

#include <simgrid/s4u.hpp>

#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "sim/calibration.hpp"
#include "sim/faults.hpp"
#include "topology/cluster.hpp"

namespace scaletwin::sim {

namespace sg4 = simgrid::s4u;

constexpr double kTicksPerSecond = 1073741824.0;  // 2^30
constexpr int kCores = 64;

// Creates the process's SimGrid engine with scaletwin's network configuration (CM02, no cross-traffic,
// TCP-gamma 0, factors 1, fairbottleneck solver, surf/precision 1e-12 s) and silenced logs unless `verbose`.
// One per process.
std::unique_ptr<sg4::Engine> make_engine(bool verbose = false);

class ClusterPlatform {
 public:
  // `pairs`: (vertex, vertex) pairs that exchange messages; a route is built for each (both directions).
  // `faults`: degraded edges keep a fraction of their bandwidth, failed ones are routed around.
  ClusterPlatform(const topology::Cluster& cluster, const Calibration& calibration,
                  const std::set<std::pair<int, int>>& pairs, const AppliedFaults& faults = AppliedFaults());
  sg4::Host* host(int vertex) const;  // a device or host-CPU vertex

 private:
  std::vector<sg4::Host*> hosts_;  // per vertex; nullptr for non-host vertices
};

// p hosts named "r0".."r{p-1}" on a contention-free star (see above).
std::vector<sg4::Host*> build_contention_free_platform(int ranks, double latency_s, double bandwidth_Bps);

}  // namespace scaletwin::sim
