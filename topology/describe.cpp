// What `scaletwin describe --cluster NAME [--nodes N]` prints: the node type, the links and the routes between
// representative pairs of vertices, as JSON (describe_cluster_json) or as a human-readable table
// (format_cluster_table). Both are built from the same list of representative pairs.
#include <fmt/format.h>

#include <map>
#include <sstream>
#include <utility>

#include "core/units.hpp"
#include "topology/cluster.hpp"

namespace scaletwin::topology {

namespace {

const char* network_kind_name(NetworkKind k) {
  switch (k) {
    case NetworkKind::kNone: return "none";
    case NetworkKind::kStar: return "star";
    case NetworkKind::kFatTree: return "fat_tree";
  }
  return "unknown";
}

struct Pair {
  std::string id;           // "same_switch", ...
  std::string description;  // "two devices behind one switch (a K80 board)"
  int from = -1, to = -1;
};

// The first device of node 0 against: a device sharing its first switch, a device of the same node reached through
// more than one intermediate vertex, the host CPU, device 0 of node 1, and device 0 of the first node under
// another leaf switch.
std::vector<Pair> representative_pairs(const Cluster& c) {
  std::vector<Pair> pairs;
  const int d0 = c.device_vertex(0, 0);
  int same_switch = -1, other_switch = -1;
  for (int d = 1; d < c.devices_per_node(); ++d) {
    const size_t hops = c.route(d0, c.device_vertex(0, d)).edges.size();
    if (hops == 2 && same_switch < 0) same_switch = c.device_vertex(0, d);
    if (hops > 2 && other_switch < 0) other_switch = c.device_vertex(0, d);
  }
  if (same_switch >= 0)
    pairs.push_back({"same_switch", "two devices behind one switch (the same K80 board, or NVSwitch)", d0, same_switch});
  if (other_switch >= 0)
    pairs.push_back({"same_node_other_switch", "two devices of one node behind different switches (other board)", d0,
                     other_switch});
  pairs.push_back({"device_cpu", "a device and its host CPU", d0, c.cpu_vertex(0)});
  if (c.nodes() > 1) pairs.push_back({"other_node", "device 0 of node 0 and of node 1", d0, c.device_vertex(1, 0)});
  for (int n = 1; n < c.nodes(); ++n) {
    if (c.leaf_of_node(n) != c.leaf_of_node(0)) {
      pairs.push_back({"other_leaf", fmt::format("device 0 of node 0 and of node {} (under another leaf switch)", n),
                       d0, c.device_vertex(n, 0)});
      break;
    }
  }
  return pairs;
}

Json link_json(const LinkSpec& l) {
  return Json{{"bandwidth_Bps", l.bandwidth_Bps}, {"latency_s", l.latency_s}, {"shared", l.shared}};
}

}  // namespace

Json describe_cluster_json(const Cluster& c) {
  const ClusterSpec& s = c.spec();
  const DeviceType& d = s.node.device;
  const HostCpu& cpu = s.node.cpu;
  Json out;
  out["cluster"] = s.name;
  out["file"] = s.file;
  out["source"] = s.source;
  out["nodes"] = c.nodes();
  out["max_nodes"] = s.max_nodes;
  out["devices_per_node"] = c.devices_per_node();
  out["total_devices"] = c.total_devices();
  out["device"] = {{"name", d.name},
                   {"family", d.family},
                   {"variant", d.variant},
                   {"peak_flops", d.peak_flops},
                   {"peak_flops_half", d.peak_flops_half},
                   {"peak_flops_tf32", d.peak_tf32},
                   {"peak_flops_bf16", d.peak_bf16},
                   {"peak_flops_fp8", d.peak_fp8},
                   {"memory_bytes", d.memory_bytes},
                   {"memory_bandwidth_Bps", d.memory_bandwidth_Bps},
                   {"sms", d.sms},
                   {"nvlink_Bps", d.nvlink_Bps},
                   {"power_w", d.power_w}};
  out["cpu"] = {{"name", cpu.name},
                {"cores", cpu.cores},
                {"peak_flops", cpu.peak_flops},
                {"memory_bytes", cpu.memory_bytes},
                {"memory_bandwidth_Bps", cpu.memory_bandwidth_Bps}};
  Json network = {{"kind", network_kind_name(s.network.kind)}, {"assumption", s.network.assumption}};
  if (s.network.kind != NetworkKind::kNone) {
    network["nic_link"] = link_json(s.network.nic_link);
    if (s.network.has_nic_range())
      network["nic_link"]["bandwidth_range_Bps"] = {s.network.nic_bandwidth_low_Bps,
                                                    s.network.nic_bandwidth_high_Bps};
    network["switch_latency_s"] = s.network.switch_latency_s;
    network["nics_per_node"] = s.node.nics;
  }
  if (s.network.kind == NetworkKind::kFatTree) {
    network["nodes_per_leaf"] = s.network.nodes_per_leaf;
    network["oversubscription"] = s.network.oversubscription;
    network["rail_optimized"] = s.network.rail_optimized;
  }
  out["network"] = network;
  Json vertices = Json::array();
  for (const Vertex& v : c.vertices())
    vertices.push_back({{"name", v.name}, {"kind", vertex_kind_name(v.kind)}, {"node", v.node}});
  out["vertices"] = vertices;
  Json links = Json::array();
  for (const Edge& e : c.edges()) {
    Json l = link_json(e.link);
    l["a"] = c.vertices()[static_cast<size_t>(e.a)].name;
    l["b"] = c.vertices()[static_cast<size_t>(e.b)].name;
    l["kind"] = e.kind;
    links.push_back(l);
  }
  out["links"] = links;
  Json routes = Json::array();
  for (const Pair& p : representative_pairs(c)) {
    const Route r = c.route(p.from, p.to);
    Json path = Json::array();
    for (int v : c.route_vertices(p.from, r)) path.push_back(c.vertices()[static_cast<size_t>(v)].name);
    routes.push_back({{"pair", p.id},
                      {"description", p.description},
                      {"from", c.vertices()[static_cast<size_t>(p.from)].name},
                      {"to", c.vertices()[static_cast<size_t>(p.to)].name},
                      {"latency_s", r.latency_s},
                      {"bottleneck_Bps", r.bottleneck_Bps},
                      {"hops", r.edges.size()},
                      {"path", path}});
  }
  out["routes"] = routes;
  return out;
}

std::string format_cluster_table(const Cluster& c) {
  const ClusterSpec& s = c.spec();
  const DeviceType& d = s.node.device;
  std::ostringstream out;
  out << fmt::format("cluster {}: {} node(s) x {} device(s) = {} devices   ({})\n", s.name, c.nodes(),
                     c.devices_per_node(), c.total_devices(), s.file);
  std::string peaks = fmt::format("{}/s FP32", format_flops(d.peak_flops));
  for (const auto& [rate, what] : {std::pair{d.peak_tf32, "TF32"}, std::pair{d.peak_flops_half, "FP16"},
                                   std::pair{d.peak_bf16, "BF16"}, std::pair{d.peak_fp8, "FP8"}})
    if (rate > 0.0) peaks += fmt::format(", {}/s {}", format_flops(rate), what);
  out << fmt::format("  device   {}{}{}: {} (dense), {} at {}\n", d.name,
                     d.variant.empty() ? std::string() : " @" + d.variant,
                     d.family.empty() ? std::string() : " (" + d.family + ")", peaks, format_bytes(d.memory_bytes),
                     format_bandwidth(d.memory_bandwidth_Bps));
  out << fmt::format("  host     {}: {} cores, {}/s, {} at {}\n", s.node.cpu.name, s.node.cpu.cores,
                     format_flops(s.node.cpu.peak_flops), format_bytes(s.node.cpu.memory_bytes),
                     format_bandwidth(s.node.cpu.memory_bandwidth_Bps));
  out << fmt::format("  network  {}", network_kind_name(s.network.kind));
  if (s.network.kind != NetworkKind::kNone)
    out << fmt::format(", {} NIC(s) per node at {} per direction, {} per link, {} per switch", s.node.nics,
                       format_bandwidth(s.network.nic_link.bandwidth_Bps), format_seconds(s.network.nic_link.latency_s),
                       format_seconds(s.network.switch_latency_s));
  if (s.network.kind == NetworkKind::kFatTree)
    out << fmt::format(", {} nodes per leaf{}, oversubscription {}", s.network.nodes_per_leaf,
                       s.network.rail_optimized ? " and rail (rail-optimised)" : "", s.network.oversubscription);
  if (s.network.kind != NetworkKind::kNone && s.network.has_nic_range())
    out << fmt::format("; the NIC rate is assumed, within {} to {} (predict shows both ends)",
                       format_bandwidth(s.network.nic_bandwidth_low_Bps),
                       format_bandwidth(s.network.nic_bandwidth_high_Bps));
  out << "\n\n";

  // Links of node 0 and of the network (other nodes repeat node 0).
  out << fmt::format("  {:<44} {:<9} {:>14} {:>11}\n", "link (node 0 and network)", "kind", "bandwidth/dir", "latency");
  for (const Edge& e : c.edges()) {
    const Vertex& a = c.vertices()[static_cast<size_t>(e.a)];
    const Vertex& b = c.vertices()[static_cast<size_t>(e.b)];
    if (a.node > 0 || b.node > 0) continue;
    out << fmt::format("  {:<44} {:<9} {:>14} {:>11}\n", e.name, e.kind, format_bandwidth(e.link.bandwidth_Bps),
                       format_seconds(e.link.latency_s));
  }
  out << fmt::format("\n  {:<24} {:<14} {:<14} {:>11} {:>14} {:>5}\n", "route", "from", "to", "latency", "bottleneck",
                     "hops");
  for (const Pair& p : representative_pairs(c)) {
    const Route r = c.route(p.from, p.to);
    out << fmt::format("  {:<24} {:<14} {:<14} {:>11} {:>14} {:>5}\n", p.id,
                       c.vertices()[static_cast<size_t>(p.from)].name, c.vertices()[static_cast<size_t>(p.to)].name,
                       format_seconds(r.latency_s), format_bandwidth(r.bottleneck_Bps), r.edges.size());
  }
  return out.str();
}

}  // namespace scaletwin::topology
