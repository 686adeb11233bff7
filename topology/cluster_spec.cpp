// Reading cluster JSON files (format: clusters/README.md) into a validated ClusterSpec, and the built-in clusters.
//
// Strict: every object is a JsonObject whose unknown keys are errors; "comment", "source" and "assumption" are the
// documentation keys accepted everywhere. Links may be templates ("for_each_device": true, endpoints with {d} or
// {d/K}), expanded here once devices_per_node is known ("auto" = std::thread::hardware_concurrency()). Then the
// node is checked: every endpoint names a vertex, no self or duplicate links, every device and NIC is connected to
// the host CPU without passing through another device, and every switch is on some link (an NVSwitch may be
// reachable through the devices only).
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include "core/error.hpp"
#include "core/units.hpp"
#include "topology/builtin_clusters.hpp"
#include "topology/cluster.hpp"
#include "topology/devices.hpp"

namespace scaletwin::topology {

namespace {

constexpr const char* kFormat = "scaletwin-cluster/1";

void allow_docs(JsonObject& o) {
  o.ignore("comment");
  o.ignore("source");
  o.ignore("assumption");
}

// An int, or the string "auto" meaning the number of hardware threads of this machine.
int get_count_or_auto(const JsonObject& o, const std::string& key, std::optional<int64_t> fallback, int max) {
  const Json* v = o.has(key) ? o.get_any(key) : nullptr;
  if (v && v->is_string()) {
    if (v->get<std::string>() != "auto") o.fail(key, fmt::format("an integer or \"auto\" (got \"{}\")", v->get<std::string>()));
    return static_cast<int>(std::clamp<unsigned>(std::thread::hardware_concurrency(), 1u, static_cast<unsigned>(max)));
  }
  return static_cast<int>(o.get_int(key, fallback, 1, max));
}

// A node's device: the name of a catalogue entry or device file (topology/devices.hpp), or an object that states
// the figures inline (peak_flops is FP32; peak_flops_half FP16 tensor; the other tensor rates optional).
DeviceType parse_device(const JsonObject& node) {
  const Json* v = node.get_any("device");
  if (v != nullptr && v->is_string()) return load_device(v->get<std::string>(), node.file(), node.path_of("device"));
  JsonObject o = node.get_object("device");
  allow_docs(o);
  DeviceType d;
  d.name = o.get_string("name");
  d.family = o.get_enum("family", {"", "kepler", "volta", "ampere", "ada", "hopper"}, "");
  d.peak_flops = o.get_quantity("peak_flops", Quantity::kFlopsPerSec);
  d.peak_flops_half = o.get_quantity("peak_flops_half", Quantity::kFlopsPerSec, 0.0, /*allow_zero=*/true);
  d.peak_tf32 = o.get_quantity("peak_flops_tf32", Quantity::kFlopsPerSec, 0.0, /*allow_zero=*/true);
  d.peak_bf16 = o.get_quantity("peak_flops_bf16", Quantity::kFlopsPerSec, 0.0, /*allow_zero=*/true);
  d.peak_fp8 = o.get_quantity("peak_flops_fp8", Quantity::kFlopsPerSec, 0.0, /*allow_zero=*/true);
  d.memory_bytes = o.get_quantity("memory", Quantity::kBytes);
  d.memory_bandwidth_Bps = o.get_quantity("memory_bandwidth", Quantity::kBandwidthBytesPerSec);
  d.nvlink_Bps = o.get_quantity("nvlink", Quantity::kBandwidthBytesPerSec, 0.0, /*allow_zero=*/true);
  d.sms = static_cast<int>(o.get_int("sms", 0, 0, 100000));
  o.finish();
  return d;
}

HostCpu parse_cpu(JsonObject o) {
  allow_docs(o);
  HostCpu c;
  c.name = o.get_string("name");
  c.cores = get_count_or_auto(o, "cores", 1, 1 << 16);
  if (o.has("peak_flops") == o.has("peak_flops_per_core"))
    o.fail("peak_flops", "exactly one of \"peak_flops\" (whole host) and \"peak_flops_per_core\"");
  c.peak_flops = o.has("peak_flops") ? o.get_quantity("peak_flops", Quantity::kFlopsPerSec)
                                     : c.cores * o.get_quantity("peak_flops_per_core", Quantity::kFlopsPerSec);
  c.memory_bytes = o.get_quantity("memory", Quantity::kBytes);
  c.memory_bandwidth_Bps = o.get_quantity("memory_bandwidth", Quantity::kBandwidthBytesPerSec);
  o.finish();
  return c;
}

// A latency in [0, 1000 s]: routes add latencies as integer picoseconds, which an absurd value would overflow.
double read_latency(const JsonObject& o, const std::string& key, std::optional<double> fallback) {
  const double latency_s = o.get_quantity(key, Quantity::kSeconds, fallback, /*allow_zero=*/true);
  if (latency_s > 1e3) o.fail(key, fmt::format("a latency of at most 1000 s (got {} s)", latency_s));
  return latency_s;
}

LinkSpec read_link_fields(const JsonObject& o) {
  LinkSpec l;
  l.bandwidth_Bps = o.get_quantity("bandwidth", Quantity::kBandwidthBytesPerSec);
  l.latency_s = read_latency(o, "latency", std::nullopt);
  l.shared = o.get_bool("shared", false);
  return l;
}

// "gpu{d}" → "gpu3", "board{d/2}" → "board1".
std::string expand_endpoint(const std::string& pattern, int d, const JsonObject& o, const std::string& key) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '{') {
      out += pattern[i];
      continue;
    }
    const size_t close = pattern.find('}', i);
    const std::string inner = close == std::string::npos ? "" : pattern.substr(i + 1, close - i - 1);
    int divisor = 1;
    if (inner.rfind("d/", 0) == 0) {
      try {
        size_t used = 0;
        divisor = std::stoi(inner.substr(2), &used);
        if (used != inner.size() - 2) divisor = 0;
      } catch (const std::exception&) {
        divisor = 0;
      }
    } else if (inner != "d") {
      divisor = 0;
    }
    if (divisor <= 0) o.fail(key, fmt::format("a vertex name where {{d}} or {{d/K}} (K a positive integer) stands for "
                                              "the device index (got \"{}\")", pattern));
    out += std::to_string(d / divisor);
    i = close;
  }
  return out;
}

struct RawLink {
  IntraLink link;
  std::string path;  // JSON path of the entry, for messages
};

std::vector<RawLink> parse_links(const JsonObject& node, int devices) {
  const Json& arr = node.get_array("links");
  std::vector<RawLink> out;
  for (size_t i = 0; i < arr.size(); ++i) {
    JsonObject o(arr[i], node.file(), fmt::format("{}/{}", node.path_of("links"), i));
    allow_docs(o);
    const std::string a = o.get_string("a"), b = o.get_string("b");
    const std::string kind = o.get_string("kind", "pcie");
    const LinkSpec spec = read_link_fields(o);
    const bool each = o.get_bool("for_each_device", false);
    o.finish();
    std::set<std::pair<std::string, std::string>> expanded;  // a template's repeated expansions are one link
    for (int d = 0; d < (each ? devices : 1); ++d) {
      const std::string ea = each ? expand_endpoint(a, d, o, "a") : a;
      const std::string eb = each ? expand_endpoint(b, d, o, "b") : b;
      if (expanded.insert({ea, eb}).second) out.push_back({IntraLink{ea, eb, spec, kind}, o.path()});
    }
  }
  return out;
}

// Every endpoint known, no self/duplicate link, devices and NICs reach "cpu" without transiting a device.
void check_node(const NodeSpec& n, const std::vector<RawLink>& links, const JsonObject& node) {
  std::map<std::string, bool> is_device;  // local vertex name → device?
  for (int d = 0; d < n.devices_per_node; ++d) is_device[n.device_prefix + std::to_string(d)] = true;
  is_device["cpu"] = false;
  for (int i = 0; i < n.nics; ++i) is_device["nic" + std::to_string(i)] = false;
  for (size_t i = 0; i < n.switches.size(); ++i) {
    const std::string& s = n.switches[i];
    const std::string path = fmt::format("{}/{}", node.path_of("switches"), i);
    if (s.empty() || s.find_first_of("/{} ") != std::string::npos)
      throw InputError(node.file(), path, fmt::format("a switch name without '/', '{{', '}}' or spaces (got \"{}\")", s));
    if (is_device.count(s))
      throw InputError(node.file(), path, fmt::format("a switch name distinct from the devices, \"cpu\", the NICs and "
                                                      "the other switches (\"{}\" is taken)", s));
    is_device[s] = false;
  }
  std::map<std::string, std::vector<std::string>> adjacent;
  std::set<std::pair<std::string, std::string>> seen;
  for (const RawLink& r : links) {
    for (const std::string* end : {&r.link.a, &r.link.b})
      if (!is_device.count(*end))
        throw InputError(node.file(), r.path + (end == &r.link.a ? "/a" : "/b"),
                         fmt::format("a vertex of the node: {}0..{}{}, cpu, nic0..nic{}, or a declared switch (got "
                                     "unknown vertex \"{}\")", n.device_prefix, n.device_prefix,
                                     n.devices_per_node - 1, n.nics - 1, *end));
    if (r.link.a == r.link.b)
      throw InputError(node.file(), r.path, fmt::format("a link between two different vertices (both are \"{}\")", r.link.a));
    if (!seen.insert(std::minmax(r.link.a, r.link.b)).second)
      throw InputError(node.file(), r.path, fmt::format("at most one link between \"{}\" and \"{}\"", r.link.a, r.link.b));
    adjacent[r.link.a].push_back(r.link.b);
    adjacent[r.link.b].push_back(r.link.a);
  }
  std::set<std::string> reached = {"cpu"};
  std::vector<std::string> todo = {"cpu"};
  while (!todo.empty()) {
    const std::string v = todo.back();
    todo.pop_back();
    if (is_device[v]) continue;  // devices are endpoints, never transit vertices
    for (const std::string& w : adjacent[v])
      if (reached.insert(w).second) todo.push_back(w);
  }
  for (size_t i = 0; i < n.switches.size(); ++i)  // a switch may hang off devices only (NVSwitch), but not float
    if (!adjacent.count(n.switches[i]))
      throw InputError(node.file(), fmt::format("{}/{}", node.path_of("switches"), i),
                       fmt::format("a switch that some link uses (\"{}\" is in no link)", n.switches[i]));
  std::set<std::string> switch_names(n.switches.begin(), n.switches.end());
  for (const auto& [name, device] : is_device)
    if (!reached.count(name) && !switch_names.count(name))
      throw InputError(node.file(), node.path_of("links"),
                       fmt::format("links that connect \"{}\" to the host CPU \"cpu\" (it is not connected; paths may "
                                   "not pass through a device)", name));
}

NodeSpec parse_node(JsonObject o) {
  allow_docs(o);
  NodeSpec n;
  n.device = parse_device(o);
  n.device_prefix = o.get_string("device_prefix", "gpu");
  if (n.device_prefix.empty() || n.device_prefix.find_first_of("/{} ") != std::string::npos)
    o.fail("device_prefix", "a non-empty name without '/', '{', '}' or spaces");
  n.devices_per_node = get_count_or_auto(o, "devices_per_node", std::nullopt, 4096);
  n.cpu = parse_cpu(o.get_object("cpu"));
  n.nics = static_cast<int>(o.get_int("nics", 0, 0, 1024));
  if (o.has("switches")) {
    const Json& arr = o.get_array("switches");
    for (size_t i = 0; i < arr.size(); ++i) {
      if (!arr[i].is_string())
        throw InputError(o.file(), fmt::format("{}/{}", o.path_of("switches"), i),
                         fmt::format("a switch name (a string), got {}", json_type_name(arr[i])));
      n.switches.push_back(arr[i].get<std::string>());
    }
  }
  const std::vector<RawLink> links = parse_links(o, n.devices_per_node);
  check_node(n, links, o);
  for (const RawLink& r : links) n.links.push_back(r.link);
  o.finish();
  return n;
}

// nic_link's "bandwidth_range": [low, high], two bandwidths around the stated one (an assumption's bounds).
void read_bandwidth_range(const JsonObject& link, NetworkSpec& net) {
  const Json& range = link.get_array("bandwidth_range");
  const std::string path = link.path_of("bandwidth_range");
  if (range.size() != 2)
    throw InputError(link.file(), path, fmt::format("two bandwidths [low, high] (got {} elements)", range.size()));
  double ends[2] = {0.0, 0.0};
  for (size_t i = 0; i < 2; ++i)
    ends[i] = quantity_value(range[i], Quantity::kBandwidthBytesPerSec, link.file(), fmt::format("{}/{}", path, i));
  const double stated = net.nic_link.bandwidth_Bps;
  if (!(ends[0] <= stated && stated <= ends[1] && ends[0] < ends[1]))
    throw InputError(link.file(), path,
                     fmt::format("[low, high] with low <= bandwidth <= high and low < high (got [{}, {}] around {})",
                                 format_bandwidth(ends[0]), format_bandwidth(ends[1]), format_bandwidth(stated)));
  net.nic_bandwidth_low_Bps = ends[0];
  net.nic_bandwidth_high_Bps = ends[1];
}

NetworkSpec parse_network(JsonObject o) {
  allow_docs(o);
  NetworkSpec net;
  net.assumption = o.get_string("assumption", "");
  const std::string kind = o.get_enum("kind", {"none", "star", "fat_tree"});
  net.kind = kind == "none" ? NetworkKind::kNone : kind == "star" ? NetworkKind::kStar : NetworkKind::kFatTree;
  if (net.kind != NetworkKind::kNone) {
    JsonObject link = o.get_object("nic_link");
    allow_docs(link);
    net.nic_link = read_link_fields(link);
    if (link.has("bandwidth_range")) read_bandwidth_range(link, net);
    link.finish();
    net.switch_latency_s = read_latency(o, "switch_latency", 0.0);
  }
  if (net.kind == NetworkKind::kFatTree) {
    net.nodes_per_leaf = static_cast<int>(o.get_int("nodes_per_leaf", std::nullopt, 1, 1 << 20));
    net.oversubscription = o.get_number("oversubscription", 1.0, 1.0, 1e6);
    net.rail_optimized = o.get_bool("rail_optimized", false);
  }
  o.finish();
  return net;
}

}  // namespace

ClusterSpec parse_cluster_spec(const Json& json, const std::string& file) {
  JsonObject o = JsonObject::root(json, file);
  allow_docs(o);
  ClusterSpec spec;
  spec.file = file;
  if (o.has("format")) o.get_enum("format", {kFormat});
  spec.name = o.get_string("name");
  spec.source = o.get_string("source", "");
  spec.node = parse_node(o.get_object("node"));
  spec.network = parse_network(o.get_object("network"));
  const bool networked = spec.network.kind != NetworkKind::kNone;
  if (networked && spec.node.nics < 1)
    throw InputError(file, "/node/nics", fmt::format("at least 1 NIC per node, since the network is not \"none\""));
  spec.max_nodes = static_cast<int>(o.get_int("max_nodes", networked ? (1 << 20) : 1, 1, 1 << 20));
  if (!networked && spec.max_nodes > 1)
    o.fail("max_nodes", fmt::format("1 on a cluster without a network between nodes (got {})", spec.max_nodes));
  spec.default_nodes = static_cast<int>(o.get_int("default_nodes", 1, 1, spec.max_nodes));
  o.finish();
  return spec;
}

std::vector<std::string> builtin_cluster_names() {
  std::vector<std::string> names;
  for (const auto& b : detail::builtin_cluster_texts()) names.emplace_back(b.name);
  return names;
}

bool is_builtin_cluster(const std::string& name) { return !builtin_cluster_text(name).empty(); }

std::optional<std::string> builtin_cluster_spelled(const std::string& spelling) {
  const std::string want = bare_spelling(spelling);
  for (const std::string& name : builtin_cluster_names()) {
    const std::string ours = bare_spelling(name);
    if (ours == want) return name;
    for (const std::string provider : {"aws", "gce"})
      if (ours == provider + want) return name;
  }
  return std::nullopt;
}

std::string builtin_cluster_text(const std::string& name) {
  for (const auto& b : detail::builtin_cluster_texts())
    if (b.name == name) return std::string(b.text);
  return "";
}

ClusterSpec load_cluster_spec(const std::string& name_or_file) {
  const std::string text = builtin_cluster_text(name_or_file);
  if (!text.empty()) {
    const std::string origin = fmt::format("clusters/{}.json (built-in)", name_or_file);
    ClusterSpec spec = parse_cluster_spec(parse_json_text(text, origin), origin);
    if (spec.name != name_or_file)
      throw InputError(origin, "/name", fmt::format("the file's base name \"{}\" (got \"{}\")", name_or_file, spec.name));
    return spec;
  }
  const bool looks_like_path = name_or_file.find('/') != std::string::npos ||
                               name_or_file.find(".json") != std::string::npos;
  if (!looks_like_path && !std::filesystem::exists(name_or_file))
    throw InputError(name_or_file, "", fmt::format("a built-in cluster name ({}) or a path to a cluster JSON file",
                                                   fmt::join(builtin_cluster_names(), ", ")));
  return parse_cluster_spec(load_json_file(name_or_file), name_or_file);
}

Cluster load_cluster(const std::string& name_or_file, int nodes) {
  ClusterSpec spec = load_cluster_spec(name_or_file);
  const int n = nodes > 0 ? nodes : spec.default_nodes;
  return Cluster(std::move(spec), n);
}

}  // namespace scaletwin::topology
