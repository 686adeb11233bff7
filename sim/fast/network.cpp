// The fast mode's flow-level network (see network.hpp): links and routes as sim/platform.cpp builds them,
// pattern registry, and max-min fair rates by progressive filling, memoized per combination of patterns.
#include "sim/fast/network.hpp"

#include <algorithm>
#include <limits>

#include "core/error.hpp"
#include "core/pair_key.hpp"

namespace scaletwin::sim::fast {

namespace {

uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h;
}

}  // namespace

FlowNetwork::FlowNetwork(const topology::Cluster& cluster, const Calibration& calibration, const AppliedFaults& faults)
    : cluster_(cluster), faults_(faults) {
  const auto& edges = cluster.edges();
  capacity_Bps_.assign(2 * edges.size(), 0.0);
  latency_factor_.assign(edges.size(), 1.0);
  for (size_t e = 0; e < edges.size(); ++e) {
    const LinkFactors& f = calibration.link(link_class_of(edges[e].kind));
    const double bandwidth = calibration.link_bandwidth_Bps(edges[e].kind, edges[e].link.bandwidth_Bps) *
                             faults.bandwidth_factor(static_cast<int>(e));
    ST_ASSERT(edges[e].link.bandwidth_Bps > 0.0, "link without bandwidth");
    capacity_Bps_[2 * e] = bandwidth;
    capacity_Bps_[2 * e + 1] = bandwidth;
    latency_factor_[e] = f.latency_factor;
  }
}

const FlowNetwork::RouteInfo& FlowNetwork::route(int from, int to) {
  const uint64_t key = pair_key(from, to);
  auto it = routes_.find(key);
  if (it != routes_.end()) return it->second;
  RouteInfo info;
  if (from != to) {
    // The platform's route for the unordered pair is built from the smaller vertex and used in both directions.
    const int a = std::min(from, to), b = std::max(from, to);
    const topology::Route r = cluster_route(a, b);
    int at = a;
    std::vector<int> links;
    for (int e : r.edges) {
      const topology::Edge& edge = cluster_.edges()[static_cast<size_t>(e)];
      const bool forward = edge.a == at;
      ST_ASSERT(forward || edge.b == at, "route edges do not form a path");
      const bool up = forward == (from == a);  // direction of travel for this flow
      links.push_back(edge.link.shared ? 2 * e : 2 * e + (up ? 0 : 1));
      info.latency_s += edge.link.latency_s * latency_factor_[static_cast<size_t>(e)];
      at = forward ? edge.b : edge.a;
    }
    info.links = std::move(links);
  }
  return routes_.emplace(key, std::move(info)).first->second;
}

topology::Route FlowNetwork::cluster_route(int a, int b) const {
  // Small clusters: the route itself. Large ones: each pair Cluster::route() has not seen costs a search, and a
  // collective over thousands of GPUs asks for tens of thousands of pairs, so the pair is translated by whole leaves
  // (whole nodes on a star) towards node 0, where the pairs of every leaf repeat, routed there, and the route
  // translated back: nodes are numbered in blocks
  // of vertices_per_node, intra-node edges in blocks per node, NIC edges after them, leaf uplinks last
  // (topology/cluster.cpp). A route that does not survive the translation falls back to the exact one.
  if (faults_.any()) return faults_.route(cluster_, a, b);
  const int nodes = cluster_.nodes();
  const auto& spec = cluster_.spec();
  if (nodes <= kExactRouteNodes || spec.network.kind == topology::NetworkKind::kNone) return cluster_.route(a, b);
  const int vpn = cluster_.device_vertex(1, 0) - cluster_.device_vertex(0, 0);
  const int node_a = a / vpn;
  if (a >= nodes * vpn || b >= nodes * vpn) return cluster_.route(a, b);
  const int per_leaf = spec.network.kind == topology::NetworkKind::kStar ? 1 : spec.network.nodes_per_leaf;
  const int shift = node_a - node_a % per_leaf, leaf_shift = spec.network.kind == topology::NetworkKind::kStar ? 0 : shift / per_leaf;
  if (shift == 0) return cluster_.route(a, b);
  const auto intra = static_cast<int>(spec.node.links.size()), nics = spec.node.nics;
  topology::Route r = cluster_.route(a - shift * vpn, b - shift * vpn);
  for (int& e : r.edges) {
    if (e < nodes * intra) e += shift * intra;
    else if (e < nodes * intra + nodes * nics) e += shift * nics;
    else e += leaf_shift;
  }
  int at = a;
  for (int e : r.edges) {
    if (e < 0 || static_cast<size_t>(e) >= cluster_.edges().size()) return cluster_.route(a, b);
    const topology::Edge& edge = cluster_.edges()[static_cast<size_t>(e)];
    if (edge.a != at && edge.b != at) return cluster_.route(a, b);
    at = edge.a == at ? edge.b : edge.a;
  }
  return at == b ? r : cluster_.route(a, b);
}

int FlowNetwork::add_pattern(const std::vector<VertexFlow>& flows) {
  uint64_t h = flows.size();
  for (const auto& [a, b] : flows) h = mix(mix(h, static_cast<uint64_t>(a)), static_cast<uint64_t>(b));
  auto& candidates = pattern_ids_[h];
  for (int id : candidates)
    if (patterns_[static_cast<size_t>(id)].flows == flows) return id;
  Pattern p;
  p.flows = flows;
  p.route_offset.reserve(flows.size() + 1);
  p.route_offset.push_back(0);
  for (const auto& [a, b] : flows) {
    const RouteInfo& r = route(a, b);
    p.route_links.insert(p.route_links.end(), r.links.begin(), r.links.end());
    p.route_offset.push_back(static_cast<int>(p.route_links.size()));
    p.latency_s.push_back(r.latency_s);
    p.max_latency_s = std::max(p.max_latency_s, r.latency_s);
  }
  patterns_.push_back(std::move(p));
  const int id = static_cast<int>(patterns_.size()) - 1;
  candidates.push_back(id);
  return id;
}

const std::map<int, FlowNetwork::PatternRates>& FlowNetwork::rates(std::vector<int> active) {
  std::sort(active.begin(), active.end());
  auto it = memo_.find(active);
  if (it != memo_.end()) return it->second;
  // Step-level collectives make many combinations that never repeat: bound the memo (it starts over when full).
  memo_flows_ += active.size();
  if (memo_flows_ > kMemoMaxFlows) {
    memo_.clear();
    ++memo_generation_;
    memo_flows_ = active.size();
  }
  ++computed_;
  return memo_.emplace(active, solve(active)).first->second;
}

namespace {

using LinkRange = std::pair<const int*, const int*>;  // the links a flow crosses

// Max-min fair rates by progressive filling: every flow weighs the same (with network/weight-S:0, CM02 shares a
// link equally among its flows; a weighting by route latency was tried and disagreed with SimGrid on mixed
// PCIe/InfiniBand pushes to a server). A flow that crosses no link (loopback) is unlimited. The links the flows
// cross get slots (in the order first crossed) and the work is over the slots alone: a cluster of thousands of
// GPUs has tens of thousands of links and a round a handful of flows. `slot_of_link` (one entry per link, all -1)
// is left as it was found.
std::vector<double> max_min_rates(const std::vector<LinkRange>& routes, const std::vector<double>& capacity_Bps,
                                  std::vector<int>& slot_of_link) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> rate(routes.size(), inf);
  std::vector<int> used_links;                       // per slot: its link
  std::vector<int> flow_offset{0}, flow_slots;       // CSR: flow i crosses flow_slots[flow_offset[i]..[i+1])
  flow_offset.reserve(routes.size() + 1);
  for (const auto& [first, last] : routes) {
    for (const int* l = first; l != last; ++l) {
      int& slot = slot_of_link[static_cast<size_t>(*l)];
      if (slot < 0) {
        slot = static_cast<int>(used_links.size());
        used_links.push_back(*l);
      }
      flow_slots.push_back(slot);
    }
    flow_offset.push_back(static_cast<int>(flow_slots.size()));
  }
  for (int l : used_links) slot_of_link[static_cast<size_t>(l)] = -1;
  const size_t slots = used_links.size();
  std::vector<double> load(slots, 0.0), remaining(slots);  // unfixed flows crossing each link; capacity left
  std::vector<int> users(slots, 0), cross_offset(slots + 1, 0);
  for (int s : flow_slots) ++cross_offset[static_cast<size_t>(s) + 1];
  for (size_t s = 0; s < slots; ++s) cross_offset[s + 1] += cross_offset[s];
  std::vector<int> crossing(flow_slots.size()), fill(cross_offset.begin(), cross_offset.end() - 1);
  for (size_t i = 0; i < routes.size(); ++i)
    for (int k = flow_offset[i]; k < flow_offset[i + 1]; ++k) {
      const auto s = static_cast<size_t>(flow_slots[static_cast<size_t>(k)]);
      crossing[static_cast<size_t>(fill[s]++)] = static_cast<int>(i);
      ++users[s];
      load[s] += 1.0;
    }
  for (size_t s = 0; s < slots; ++s) remaining[s] = capacity_Bps[static_cast<size_t>(used_links[s])];
  std::vector<char> fixed(routes.size(), 0);
  for (size_t i = 0; i < routes.size(); ++i) fixed[i] = routes[i].first == routes[i].second;
  for (;;) {
    double unit = inf;
    for (size_t s = 0; s < slots; ++s)
      if (users[s] > 0) unit = std::min(unit, std::max(0.0, remaining[s]) / load[s]);
    if (unit == inf) break;
    const double limit = unit * (1.0 + 1e-12);
    for (size_t s = 0; s < slots; ++s) {
      if (users[s] == 0 || std::max(0.0, remaining[s]) / load[s] > limit) continue;
      for (int c = cross_offset[s]; c < cross_offset[s + 1]; ++c) {
        const auto fi = static_cast<size_t>(crossing[static_cast<size_t>(c)]);
        if (fixed[fi]) continue;
        fixed[fi] = 1;
        rate[fi] = unit;
        for (int k = flow_offset[fi]; k < flow_offset[fi + 1]; ++k) {
          const auto t = static_cast<size_t>(flow_slots[static_cast<size_t>(k)]);
          remaining[t] -= rate[fi];
          load[t] -= 1.0;
          --users[t];
        }
      }
    }
  }
  return rate;
}

}  // namespace

std::map<int, FlowNetwork::PatternRates> FlowNetwork::solve(const std::vector<int>& active) const {
  // The routes of every flow of every copy of every active pattern.
  std::vector<LinkRange> routes;
  for (int id : active) {
    const Pattern& p = patterns_.at(static_cast<size_t>(id));
    const int* links = p.route_links.data();
    for (size_t f = 0; f < p.flows.size(); ++f)
      routes.emplace_back(links + p.route_offset[f], links + p.route_offset[f + 1]);
  }
  if (slot_of_link_.size() != capacity_Bps_.size()) slot_of_link_.assign(capacity_Bps_.size(), -1);
  const std::vector<double> rate = max_min_rates(routes, capacity_Bps_, slot_of_link_);
  const double inf = std::numeric_limits<double>::infinity();
  std::map<int, PatternRates> out;
  size_t i = 0;
  for (int id : active) {
    const Pattern& p = patterns_.at(static_cast<size_t>(id));
    const bool first_copy = out.find(id) == out.end();
    PatternRates& pr = out[id];
    for (size_t f = 0; f < p.flows.size(); ++f, ++i) {
      if (!first_copy) continue;
      const double inv = rate[i] == inf ? 0.0 : 1.0 / rate[i];
      pr.inverse_rate.push_back(inv);
      pr.max_inverse_rate = std::max(pr.max_inverse_rate, inv);
    }
  }
  return out;
}

}  // namespace scaletwin::sim::fast
