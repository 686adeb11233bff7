// What-if faults resolved for one point (see faults.hpp): selected edges, straggler endpoints, routes around
// failed edges.
#include "sim/faults.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <queue>
#include <tuple>

#include "core/error.hpp"

namespace scaletwin::sim {

namespace {

// The node an edge belongs to: the node of either end (intra-node links, NIC links), -1 for switch-to-switch.
int edge_node(const topology::Cluster& cluster, const topology::Edge& e) {
  const auto& v = cluster.vertices();
  const int a = v[static_cast<size_t>(e.a)].node, b = v[static_cast<size_t>(e.b)].node;
  return a >= 0 ? a : b;
}

bool selects(const plan::LinkSelector& s, const topology::Cluster& cluster, const topology::Edge& e) {
  const auto& v = cluster.vertices();
  const bool endpoint = s.endpoint.empty() || v[static_cast<size_t>(e.a)].name == s.endpoint ||
                        v[static_cast<size_t>(e.b)].name == s.endpoint;
  return endpoint && (s.kind.empty() || s.kind == e.kind) && (s.node < 0 || s.node == edge_node(cluster, e));
}

// "node12/gpu1" → 12; -1 for other names.
int node_of_name(const std::string& name) {
  if (name.rfind("node", 0) != 0) return -1;
  int node = 0;
  size_t i = 4;
  for (; i < name.size() && name[i] >= '0' && name[i] <= '9'; ++i) node = std::min(node * 10 + (name[i] - '0'), 1 << 24);
  return i > 4 && i < name.size() && name[i] == '/' ? node : -1;
}

}  // namespace

AppliedFaults::AppliedFaults(const std::vector<plan::Fault>& faults, const std::string& file,
                             const topology::Cluster& cluster, const plan::IterationPlan& plan)
    : file_(file) {
  if (faults.empty()) return;
  any_ = true;
  const auto& edges = cluster.edges();
  bandwidth_factor_.assign(edges.size(), 1.0);
  failed_.assign(edges.size(), 0);
  slowdown_.assign(plan.endpoints.size(), 1.0);
  for (const plan::Fault& f : faults) {
    if (f.kind == plan::Fault::Kind::kStraggler) {
      for (size_t e = 0; e < plan.endpoints.size(); ++e)
        if (plan.endpoints[e].kind == plan::EndpointKind::kWorker && plan.endpoints[e].worker_index == f.gpu)
          slowdown_[e] *= f.slowdown;
      continue;
    }
    if (f.link.node >= cluster.nodes() || node_of_name(f.link.endpoint) >= cluster.nodes())
      continue;  // a node beyond this point's cluster (a sweep's smaller points): nothing there to degrade
    size_t matched = 0;
    for (size_t e = 0; e < edges.size(); ++e) {
      if (!selects(f.link, cluster, edges[e])) continue;
      ++matched;
      if (f.kind == plan::Fault::Kind::kFailedLink) {
        failed_[e] = 1;
        if (failed_path_.empty()) failed_path_ = f.json_path;
      } else {
        bandwidth_factor_[e] *= f.bandwidth_factor;
      }
    }
    if (matched == 0) {
      std::vector<std::string> kinds;
      for (const topology::Edge& e : edges)
        if (std::find(kinds.begin(), kinds.end(), e.kind) == kinds.end()) kinds.push_back(e.kind);
      throw InputError(file, f.json_path + "/link",
                       fmt::format("a selector matching links of cluster {} with {} nodes (link kinds: {}; got kind "
                                   "\"{}\", node {}, endpoint \"{}\")",
                                   cluster.spec().name, cluster.nodes(), fmt::join(kinds, ", "), f.link.kind,
                                   f.link.node, f.link.endpoint));
    }
  }
}

topology::Route AppliedFaults::route(const topology::Cluster& cluster, int from, int to) const {
  if (failed_path_.empty()) return cluster.route(from, to);
  topology::Route r;
  if (from == to) return r;
  // Dijkstra from the smaller vertex (as Cluster::route), cost (latency in ps, hops), devices not transit.
  const int s = std::min(from, to), t = std::max(from, to);
  const auto& edges = cluster.edges();
  const auto& vertices = cluster.vertices();
  auto it = tree_.find(s);
  if (it == tree_.end()) {
    using Cost = std::pair<long long, int>;
    const Cost inf{std::numeric_limits<long long>::max(), 0};
    std::vector<Cost> dist(vertices.size(), inf);
    std::vector<int> pred(vertices.size(), -1);
    std::vector<std::vector<int>> adjacent(vertices.size());
    for (size_t e = 0; e < edges.size(); ++e) {
      if (failed_[e]) continue;
      adjacent[static_cast<size_t>(edges[e].a)].push_back(static_cast<int>(e));
      adjacent[static_cast<size_t>(edges[e].b)].push_back(static_cast<int>(e));
    }
    using Entry = std::tuple<long long, int, int>;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue;
    dist[static_cast<size_t>(s)] = {0, 0};
    queue.push({0, 0, s});
    while (!queue.empty()) {
      const auto [lat, hops, u] = queue.top();
      queue.pop();
      if (Cost{lat, hops} != dist[static_cast<size_t>(u)]) continue;
      if (u != s && vertices[static_cast<size_t>(u)].kind == topology::VertexKind::kDevice) continue;
      for (int e : adjacent[static_cast<size_t>(u)]) {
        const topology::Edge& edge = edges[static_cast<size_t>(e)];
        const int v = edge.a == u ? edge.b : edge.a;
        const Cost c{lat + std::llround(edge.link.latency_s * 1e12), hops + 1};
        if (c < dist[static_cast<size_t>(v)]) {
          dist[static_cast<size_t>(v)] = c;
          pred[static_cast<size_t>(v)] = e;
          queue.push({c.first, c.second, v});
        }
      }
    }
    it = tree_.emplace(s, std::move(pred)).first;
  }
  const std::vector<int>& pred = it->second;
  for (int v = t; v != s;) {
    const int e = pred[static_cast<size_t>(v)];
    if (e < 0)
      throw InputError(file_, failed_path_,
                       fmt::format("failed links that leave a route between {} and {} (the cluster is partitioned)",
                                   vertices[static_cast<size_t>(s)].name, vertices[static_cast<size_t>(t)].name));
    r.edges.push_back(e);
    v = edges[static_cast<size_t>(e)].a == v ? edges[static_cast<size_t>(e)].b : edges[static_cast<size_t>(e)].a;
  }
  std::reverse(r.edges.begin(), r.edges.end());
  r.bottleneck_Bps = std::numeric_limits<double>::infinity();
  for (int e : r.edges) {
    r.latency_s += edges[static_cast<size_t>(e)].link.latency_s;
    r.bottleneck_Bps = std::min(r.bottleneck_Bps, edges[static_cast<size_t>(e)].link.bandwidth_Bps);
  }
  if (from != s) std::reverse(r.edges.begin(), r.edges.end());
  return r;
}

}  // namespace scaletwin::sim
