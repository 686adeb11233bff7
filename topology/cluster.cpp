// Cluster: a ClusterSpec instantiated for `nodes` nodes as a Boost.Graph graph; routes and rank placement.
//
// Vertices: node n holds, in this order, its devices, its host CPU "cpu", its NICs and the switches of the file
// (vertices_per_node of them, starting at n * vertices_per_node); the network switches come after all nodes.
//
//   star:      node0/nic0 ─┐                        fat_tree:   net/spine            (only with > 1 leaf)
//              node1/nic0 ─┼─ net/switch                      ╱          ╲    uplinks: npl·nics·bw / oversub
//              node2/nic0 ─┘                             net/leaf0     net/leaf1
//                                                        ╱    ╲         ╱    ╲
//                                                     node0  node1   node2  node3   (nodes_per_leaf = 2)
//
//   fat_tree with "rail_optimized": NIC i of each node on its rail's leaf (net/rail<i>/leaf<g>, g = node /
//   nodes_per_leaf), every leaf up to the spine: GPU i of two nodes under the same leaves is one switch apart.
//
// A network switch's latency is split over its links (half on each), so a route through k switches pays k of
// them. Routes are shortest paths by latency, then by hops (Dijkstra over a directed graph with both arcs of
// every link, latencies in integer picoseconds so ties are exact); a device is never a transit vertex, nor is a
// third node. Among equal routes the search keeps the first found: vertices settle in order of (latency, hops,
// vertex index) and a vertex keeps the edge that first reached it at its final cost, so the choice is fixed by
// the cluster alone. route(a, b) is computed from min(a, b), so both directions use the same links. Each search
// stops once it settles its target (the path to a vertex is fixed when it is settled, so the route is the one the
// whole tree would give), never enters a third node's vertices (a spine above hundreds of leaves is one hop from
// thousands of NICs) and resets only the vertices it touched: a route costs the neighbourhood it crosses, not the
// cluster, and a ring over 65,536 GPUs asks for 65,536 of them. Routes are cached by pair.
#include <fmt/format.h>

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <climits>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <tuple>
#include <unordered_map>

#include "core/error.hpp"
#include "topology/cluster.hpp"

namespace scaletwin::topology {

namespace {

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, boost::no_property,
                                   boost::property<boost::edge_index_t, int>>;

struct Cost {
  int64_t latency_ps = 0;
  int hops = 0;
};
constexpr int64_t kInfPs = std::numeric_limits<int64_t>::max();
constexpr Cost kInfCost{kInfPs, INT_MAX};

struct CostLess {
  bool operator()(const Cost& a, const Cost& b) const {
    return a.latency_ps != b.latency_ps ? a.latency_ps < b.latency_ps : a.hops < b.hops;
  }
};

}  // namespace

const char* vertex_kind_name(VertexKind k) {
  switch (k) {
    case VertexKind::kDevice: return "device";
    case VertexKind::kHostCpu: return "host_cpu";
    case VertexKind::kSwitch: return "switch";
    case VertexKind::kNic: return "nic";
    case VertexKind::kNetworkSwitch: return "network_switch";
  }
  return "unknown";
}

struct Cluster::Impl {
  Graph graph;
  int vertices_per_node = 0;
  std::map<std::string, int> local_offset;  // "gpu1" → offset inside a node's block of vertices
  std::vector<int> leaf_vertex_of_node;     // fat tree only
  std::vector<int64_t> edge_latency_ps;
  std::vector<char> is_device;
  std::vector<int> node_of;  // per vertex: its node, -1 for the network's switches
  mutable std::mutex mutex;
  // The search's state, kept between searches (all at rest: infinite distance, white, no predecessor edge).
  mutable std::vector<Cost> dist;
  mutable std::vector<int> pred;
  mutable std::vector<char> settled;
  mutable std::vector<int> touched;
  mutable std::vector<std::tuple<int64_t, int, int>> heap;  // (latency, hops, vertex): a min-heap
  mutable std::unordered_map<int64_t, std::vector<int>> path_by_pair;  // edges from target back to source

  // The edges of the shortest path from target back to source (empty when there is none; other_end(e, v) is the
  // vertex across edge e from v); call with mutex held.
  template <typename OtherEnd>
  const std::vector<int>& path(int source, int target, OtherEnd other_end) const;
};

template <typename OtherEnd>
const std::vector<int>& Cluster::Impl::path(int source, int target, OtherEnd other_end) const {
  const int64_t n = static_cast<int64_t>(boost::num_vertices(graph));
  const int64_t key = int64_t{source} * n + target;
  auto it = path_by_pair.find(key);
  if (it != path_by_pair.end()) return it->second;
  if (dist.size() != static_cast<size_t>(n)) {
    dist.assign(static_cast<size_t>(n), kInfCost);
    pred.assign(static_cast<size_t>(n), -1);
    settled.assign(static_cast<size_t>(n), 0);
  }
  const int source_node = node_of[static_cast<size_t>(source)], target_node = node_of[static_cast<size_t>(target)];
  // A third node is neither entered nor left: a node does not forward traffic between two others, so the search
  // stays within the two nodes and the network's switches (a large cluster has millions of vertices elsewhere).
  const auto outside = [&](int v) {
    const int node = node_of[static_cast<size_t>(v)];
    return node >= 0 && node != source_node && node != target_node;
  };
  const auto later = std::greater<std::tuple<int64_t, int, int>>();
  touched.clear();
  touched.push_back(source);
  dist[static_cast<size_t>(source)] = Cost{};
  heap.clear();
  heap.emplace_back(0, 0, source);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    const auto [latency_ps, hops, u] = heap.back();
    heap.pop_back();
    if (settled[static_cast<size_t>(u)]) continue;  // an older, longer entry of a vertex settled since
    settled[static_cast<size_t>(u)] = 1;
    if (u == target) break;
    if (u != source && is_device[static_cast<size_t>(u)]) continue;  // devices are not transit vertices
    const auto arcs = boost::out_edges(static_cast<Graph::vertex_descriptor>(u), graph);
    for (const auto& arc : boost::make_iterator_range(arcs)) {
      const auto v = static_cast<int>(boost::target(arc, graph));
      if (settled[static_cast<size_t>(v)] || outside(v)) continue;
      const int e = boost::get(boost::edge_index, graph, arc);
      const Cost c{latency_ps + edge_latency_ps[static_cast<size_t>(e)], hops + 1};
      Cost& d = dist[static_cast<size_t>(v)];
      if (!CostLess()(c, d)) continue;
      if (d.latency_ps == kInfPs) touched.push_back(v);
      d = c;
      pred[static_cast<size_t>(v)] = e;
      heap.emplace_back(c.latency_ps, c.hops, v);
      std::push_heap(heap.begin(), heap.end(), later);
    }
  }
  std::vector<int> edges;
  for (int v = target; v != source;) {
    const int e = pred[static_cast<size_t>(v)];
    if (e < 0) {  // unreachable: the caller reports it
      edges.clear();
      break;
    }
    edges.push_back(e);
    v = other_end(e, v);
  }
  for (int v : touched) {
    dist[static_cast<size_t>(v)] = kInfCost;
    pred[static_cast<size_t>(v)] = -1;
    settled[static_cast<size_t>(v)] = 0;
  }
  return path_by_pair.emplace(key, std::move(edges)).first->second;
}

Cluster::Cluster(ClusterSpec spec, int nodes) : spec_(std::move(spec)), nodes_(nodes) {
  const NetworkKind net_kind = spec_.network.kind;
  if (nodes_ > 1 && net_kind == NetworkKind::kNone)
    throw InputError(spec_.file, "/network/kind",
                     fmt::format("a network between nodes to use {} nodes of cluster {} (it has none: 1 node only)",
                                 nodes_, spec_.name));
  if (nodes_ < 1 || nodes_ > spec_.max_nodes)
    throw InputError(spec_.file, "/max_nodes",
                     fmt::format("a node count in [1, {}] for cluster {} (got {})", spec_.max_nodes, spec_.name, nodes_));
  // A million nodes would take minutes and tens of GB to build before anything could say it is too big: the
  // graph is bounded (2^17 devices, a few seconds and under 1 GB to build).
  constexpr int64_t kMaxDevices = int64_t{1} << 17;
  if (int64_t{nodes_} * spec_.node.devices_per_node > kMaxDevices)
    throw InputError(spec_.file, "/max_nodes",
                     fmt::format("at most {} devices in one cluster ({} nodes × {} devices per node of {} is {})",
                                 kMaxDevices, nodes_, spec_.node.devices_per_node, spec_.name,
                                 int64_t{nodes_} * spec_.node.devices_per_node));
  auto impl = std::make_shared<Impl>();
  const NodeSpec& ns = spec_.node;
  const int devices = ns.devices_per_node;

  // Vertices of one node, in block order.
  std::vector<std::pair<std::string, VertexKind>> local;
  for (int d = 0; d < devices; ++d) local.emplace_back(ns.device_prefix + std::to_string(d), VertexKind::kDevice);
  local.emplace_back("cpu", VertexKind::kHostCpu);
  for (int i = 0; i < ns.nics; ++i) local.emplace_back("nic" + std::to_string(i), VertexKind::kNic);
  for (const std::string& s : ns.switches) local.emplace_back(s, VertexKind::kSwitch);
  impl->vertices_per_node = static_cast<int>(local.size());
  for (size_t i = 0; i < local.size(); ++i) impl->local_offset[local[i].first] = static_cast<int>(i);

  auto add_edge = [&](int a, int b, LinkSpec link, const std::string& kind) {
    const std::string name = vertices_[static_cast<size_t>(a)].name + " <-> " + vertices_[static_cast<size_t>(b)].name;
    edges_.push_back(Edge{a, b, link, kind, name});
  };
  for (int n = 0; n < nodes_; ++n) {
    for (size_t i = 0; i < local.size(); ++i) {
      const bool counted = local[i].second == VertexKind::kDevice || local[i].second == VertexKind::kNic;
      vertices_.push_back(Vertex{local[i].second, fmt::format("node{}/{}", n, local[i].first), n,
                                 counted ? static_cast<int>(i) - (local[i].second == VertexKind::kNic ? devices + 1 : 0)
                                         : -1});
    }
    for (const IntraLink& l : ns.links)
      add_edge(local_vertex(n, l.a, *impl), local_vertex(n, l.b, *impl), l.link, l.kind);
  }
  build_network(*impl);

  for (const Vertex& v : vertices_) {
    impl->is_device.push_back(v.kind == VertexKind::kDevice);
    impl->node_of.push_back(v.node);
  }
  for (size_t v = 0; v < vertices_.size(); ++v) boost::add_vertex(impl->graph);
  for (size_t e = 0; e < edges_.size(); ++e) {
    const auto a = static_cast<size_t>(edges_[e].a), b = static_cast<size_t>(edges_[e].b);
    boost::add_edge(a, b, static_cast<int>(e), impl->graph);
    boost::add_edge(b, a, static_cast<int>(e), impl->graph);
    impl->edge_latency_ps.push_back(std::llround(edges_[e].link.latency_s * 1e12));
  }
  impl_ = std::move(impl);
}

int Cluster::local_vertex(int node, const std::string& name, const Impl& impl) const {
  auto it = impl.local_offset.find(name);
  ST_ASSERT(it != impl.local_offset.end(), "unknown local vertex " + name);
  return node * impl.vertices_per_node + it->second;
}

void Cluster::build_network(Impl& impl) {
  const NetworkSpec& net = spec_.network;
  if (net.kind == NetworkKind::kNone) return;
  auto add_switch = [&](const std::string& name) {
    vertices_.push_back(Vertex{VertexKind::kNetworkSwitch, name, -1, -1});
    return static_cast<int>(vertices_.size()) - 1;
  };
  auto add_edge = [&](int a, int b, LinkSpec link, const std::string& kind) {
    edges_.push_back(Edge{a, b, link, kind,
                          vertices_[static_cast<size_t>(a)].name + " <-> " + vertices_[static_cast<size_t>(b)].name});
  };
  LinkSpec nic_link = net.nic_link;
  nic_link.latency_s += net.switch_latency_s / 2;  // half of the switch's latency on each of its links
  const int per_leaf = net.kind == NetworkKind::kStar ? nodes_ : net.nodes_per_leaf;
  const int groups = (nodes_ + per_leaf - 1) / per_leaf;
  // Rail-optimised: a leaf per group of nodes and per NIC index (rail); else a leaf per group of nodes.
  const int rails = net.kind == NetworkKind::kFatTree && net.rail_optimized ? std::max(spec_.node.nics, 1) : 1;
  const int leaves = groups * rails;
  std::vector<int> leaf;
  for (int l = 0; l < leaves; ++l)
    leaf.push_back(add_switch(net.kind == NetworkKind::kStar ? "net/switch"
                              : rails > 1                    ? fmt::format("net/rail{}/leaf{}", l % rails, l / rails)
                                                             : fmt::format("net/leaf{}", l)));
  const auto leaf_of = [&](int n, int nic) { return leaf[static_cast<size_t>((n / per_leaf) * rails + nic % rails)]; };
  for (int n = 0; n < nodes_; ++n) {
    impl.leaf_vertex_of_node.push_back(leaf_of(n, 0));
    for (int i = 0; i < spec_.node.nics; ++i)
      add_edge(local_vertex(n, "nic" + std::to_string(i), impl), leaf_of(n, i), nic_link, "network");
  }
  if (leaves > 1) {
    const int spine = add_switch("net/spine");
    // One aggregate uplink per leaf: the leaf's full downlink capacity divided by the oversubscription.
    LinkSpec up;
    const int nics_per_leaf = rails > 1 ? 1 : spec_.node.nics;
    up.bandwidth_Bps = per_leaf * nics_per_leaf * net.nic_link.bandwidth_Bps / net.oversubscription;
    up.latency_s = net.nic_link.latency_s + net.switch_latency_s;  // half of the leaf's and half of the spine's
    up.shared = net.nic_link.shared;
    for (int l = 0; l < leaves; ++l) add_edge(leaf[static_cast<size_t>(l)], spine, up, "uplink");
  }
}

int Cluster::device_vertex(int node, int local_device) const {
  ST_ASSERT(node >= 0 && node < nodes_ && local_device >= 0 && local_device < devices_per_node(),
            fmt::format("device {} of node {} does not exist", local_device, node));
  return node * impl_->vertices_per_node + local_device;
}

int Cluster::cpu_vertex(int node) const {
  ST_ASSERT(node >= 0 && node < nodes_, fmt::format("node {} does not exist", node));
  return node * impl_->vertices_per_node + devices_per_node();
}

int Cluster::nic_vertex(int node, int nic) const {
  ST_ASSERT(node >= 0 && node < nodes_ && nic >= 0 && nic < spec_.node.nics,
            fmt::format("NIC {} of node {} does not exist", nic, node));
  return node * impl_->vertices_per_node + devices_per_node() + 1 + nic;
}

int Cluster::local_vertex(int node, const std::string& local_name) const {
  auto it = impl_->local_offset.find(local_name);
  if (node < 0 || node >= nodes_ || it == impl_->local_offset.end()) return -1;
  return node * impl_->vertices_per_node + it->second;
}

int Cluster::leaf_of_node(int node) const {
  if (spec_.network.kind != NetworkKind::kFatTree || node < 0 || node >= nodes_) return -1;
  return impl_->leaf_vertex_of_node[static_cast<size_t>(node)];
}

int Cluster::rank_device_vertex(int rank) const {
  ST_ASSERT(rank >= 0 && rank < total_devices(),
            fmt::format("rank {} outside [0, {}) on {} nodes of {}", rank, total_devices(), nodes_, spec_.name));
  return device_vertex(rank / devices_per_node(), rank % devices_per_node());
}

Route Cluster::route(int from_vertex, int to_vertex) const {
  const int count = static_cast<int>(vertices_.size());
  ST_ASSERT(from_vertex >= 0 && from_vertex < count && to_vertex >= 0 && to_vertex < count,
            fmt::format("route between vertices {} and {} of {}", from_vertex, to_vertex, count));
  Route r;
  r.bottleneck_Bps = std::numeric_limits<double>::infinity();
  if (from_vertex == to_vertex) return r;
  const int s = std::min(from_vertex, to_vertex), t = std::max(from_vertex, to_vertex);
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    r.edges = impl_->path(s, t, [this](int e, int v) {
      const Edge& edge = edges_[static_cast<size_t>(e)];
      return edge.a == v ? edge.b : edge.a;
    });  // collected from t back to s
  }
  ST_ASSERT(!r.edges.empty(), fmt::format("no route from {} to {}", vertices_[static_cast<size_t>(s)].name,
                                          vertices_[static_cast<size_t>(t)].name));
  std::reverse(r.edges.begin(), r.edges.end());  // s → t
  for (int e : r.edges) {
    r.latency_s += edges_[static_cast<size_t>(e)].link.latency_s;
    r.bottleneck_Bps = std::min(r.bottleneck_Bps, edges_[static_cast<size_t>(e)].link.bandwidth_Bps);
  }
  if (from_vertex != s) std::reverse(r.edges.begin(), r.edges.end());
  return r;
}

std::vector<int> Cluster::route_vertices(int from_vertex, const Route& route) const {
  std::vector<int> out = {from_vertex};
  for (int e : route.edges) {
    const Edge& edge = edges_[static_cast<size_t>(e)];
    ST_ASSERT(edge.a == out.back() || edge.b == out.back(), "route does not start at from_vertex");
    out.push_back(edge.a == out.back() ? edge.b : edge.a);
  }
  return out;
}

}  // namespace scaletwin::topology
