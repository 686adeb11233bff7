// The flow-level network of the fast simulation mode (issue 5): the cluster's links as the message-level platform
// builds them (sim/platform.cpp: one split-duplex link per topology edge, one shared link per `shared` edge,
// bandwidth and latency scaled by the calibration's factors of the link class, Cluster::route() between hosts),
// flow patterns (sets of concurrent flows between vertices), and the max-min fair rates of a combination of
// patterns sharing the links.
//
// Rates are computed by progressive filling (the bottleneck algorithm of SimGrid's fairbottleneck solver under
// CM02 with cross-traffic, TCP-gamma and weight-S off): repeatedly, the link with the smallest fair share
// (remaining capacity / unfixed flows through it) fixes the rates of its flows. A flow between two endpoints of one host
// (loopback) has no link and no limit, as the platform's 1e12 B/s FATPIPE loopback makes it (rate → ∞, 1/rate 0).
//
// Memoization: a pattern is identified by its flows (same flows → same id), a combination by the sorted multiset
// of its pattern ids; the rates of a combination are computed once. Rounds of collectives whose network state
// repeats (every step around a cycle of ranks, every bucket of a data-parallel all-reduce) cost one lookup.
#pragma once

#include <cstdint>
#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/calibration.hpp"
#include "sim/faults.hpp"
#include "topology/cluster.hpp"

namespace scaletwin::sim::fast {

using VertexFlow = std::pair<int, int>;  // (source vertex, destination vertex)

class FlowNetwork {
 public:
  // `faults` (kept by reference): degraded edges' bandwidths, routes around failed ones.
  FlowNetwork(const topology::Cluster& cluster, const Calibration& calibration,
              const AppliedFaults& faults = kNoFaults);

  // Registers the flows of a pattern (order matters for the rates returned); the same flows give the same id.
  int add_pattern(const std::vector<VertexFlow>& flows);
  size_t flow_count(int pattern) const { return patterns_.at(static_cast<size_t>(pattern)).flows.size(); }
  // Largest route latency of the pattern's flows (seconds).
  double max_latency_s(int pattern) const { return patterns_.at(static_cast<size_t>(pattern)).max_latency_s; }

  // Rates when the patterns of `active` (ids; a pattern listed k times has k copies of its flows in the network)
  // share the links: for each distinct id, 1/rate per flow (seconds per byte) and their maximum.
  struct PatternRates {
    std::vector<double> inverse_rate;  // per flow of the pattern
    double max_inverse_rate = 0.0;
  };
  const std::map<int, PatternRates>& rates(std::vector<int> active);
  size_t combinations_computed() const { return computed_; }
  // Incremented whenever the memo is emptied: a PatternRates reference stays valid within one generation.
  size_t memo_generation() const { return memo_generation_; }

 private:
  struct Pattern {
    std::vector<VertexFlow> flows;
    std::vector<int> route_offset;  // CSR into route_links: flow f uses route_links[route_offset[f]..[f+1])
    std::vector<int> route_links;
    std::vector<double> latency_s;  // per flow
    double max_latency_s = 0.0;
  };
  struct RouteInfo {
    std::vector<int> links;  // link ids (2 per edge: one per direction, or one shared)
    double latency_s = 0.0;
  };
  const RouteInfo& route(int from, int to);
  topology::Route cluster_route(int a, int b) const;
  static constexpr int kExactRouteNodes = 128;
  std::map<int, PatternRates> solve(const std::vector<int>& active) const;

  static inline const AppliedFaults kNoFaults{};
  const topology::Cluster& cluster_;
  const AppliedFaults& faults_;
  std::vector<double> capacity_Bps_;  // per link id
  std::vector<double> latency_factor_;  // per edge
  mutable std::vector<int> slot_of_link_;  // solve()'s scratch: -1 per link between calls
  std::unordered_map<uint64_t, RouteInfo> routes_;
  std::vector<Pattern> patterns_;
  std::unordered_map<uint64_t, std::vector<int>> pattern_ids_;  // hash of flows → candidate ids
  std::map<std::vector<int>, std::map<int, PatternRates>> memo_;
  static constexpr size_t kMemoMaxFlows = size_t{1} << 22;  // pattern ids held by the memo's keys, at most
  size_t memo_flows_ = 0;
  size_t memo_generation_ = 0;
  size_t computed_ = 0;
};

}  // namespace scaletwin::sim::fast
