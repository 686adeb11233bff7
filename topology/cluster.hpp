// A cluster: node type, devices, links, network, as a graph; routes and placement of ranks.
//
// A ClusterSpec is what a cluster JSON file says (clusters/*.json, or a user's file). instantiate() turns it into a
// Cluster with `nodes` nodes: a Boost.Graph graph whose vertices are devices (GPUs), host CPUs, switches inside a
// node (PCIe switches, NVSwitch), NICs and network switches, and whose edges are links. Every link is full duplex
// with `bandwidth_Bps` in each direction, unless `shared` (one capacity for both directions, e.g. a PCIe switch
// uplink shared by a board's two GPUs is still full duplex, but a bus is shared). Routes are shortest paths (by
// latency, then hops) and are the same in both directions.
//
// Rank placement: rank r runs on device r % devices_per_node of node r / devices_per_node (block placement).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/json_reader.hpp"

namespace scaletwin::topology {

// A device type: what the catalogue (devices/*.json, topology/devices.hpp) or a cluster file's inline object says.
// Peak rates are dense (NVIDIA's sparse figures halved); a rate the device lacks (a V100's TF32) is 0.
struct DeviceType {
  std::string name;                 // "Tesla K80 (one GK210)", "A100-SXM4-80GB": the key of a calibration's devices
  std::string family;               // "kepler", "volta", "ampere", "ada", "hopper"; "" when not given
  double peak_flops = 0.0;          // FP32 FLOP/s (CUDA cores, no tensor cores)
  double peak_flops_half = 0.0;     // FP16 tensor FLOP/s (0 when none)
  double peak_tf32 = 0.0;           // TF32 tensor FLOP/s (0 when none)
  double peak_bf16 = 0.0;           // BF16 tensor FLOP/s (0 when none)
  double peak_fp8 = 0.0;            // FP8 tensor FLOP/s (0 when none)
  double memory_bytes = 0.0;
  double memory_bandwidth_Bps = 0.0;
  int sms = 0;                      // streaming multiprocessors (0: not given)
  double l2_bytes = 0.0;            // last-level (L2) cache (0: not given)
  double nvlink_Bps = 0.0;          // all NVLinks of one GPU, per direction (0: none)
  double host_link_Bps = 0.0;       // PCIe to the host, per direction (0: not given)
  double power_w = 0.0;             // the power limit these figures hold at (0: not given)
  std::string variant;              // the catalogue variant taken ("450W"), "" for the base figures
};

struct HostCpu {
  std::string name;
  int cores = 1;
  double peak_flops = 0.0;          // whole host
  double memory_bytes = 0.0;
  double memory_bandwidth_Bps = 0.0;
};

struct LinkSpec {
  double bandwidth_Bps = 0.0;       // per direction
  double latency_s = 0.0;
  bool shared = false;              // one capacity for both directions (a bus), else full duplex
};

enum class VertexKind { kDevice, kHostCpu, kSwitch, kNic, kNetworkSwitch };
const char* vertex_kind_name(VertexKind k);

// Inside a node: a tree of switches. Every entry attaches `child` to `parent` with a link; names are local to the
// node ("gpu0".."gpuN-1", "cpu", "nic0".., and the switches the file declares).
struct IntraLink {
  std::string a, b;
  LinkSpec link;
  std::string kind;  // "pcie", "nvlink", "nvswitch", "qpi", "nic", "board" (for reports)
};

struct NodeSpec {
  DeviceType device;
  int devices_per_node = 1;
  HostCpu cpu;
  std::vector<std::string> switches;  // names of switch vertices inside the node
  int nics = 0;
  std::vector<IntraLink> links;     // expanded: "for_each_device" templates are resolved at load
  std::string device_prefix = "gpu";  // local device names are device_prefix + index ("core" for local-cpu)
};

enum class NetworkKind { kNone, kStar, kFatTree };

struct NetworkSpec {
  NetworkKind kind = NetworkKind::kNone;
  LinkSpec nic_link;                // NIC ↔ first switch, per NIC
  double switch_latency_s = 0.0;
  int nodes_per_leaf = 0;           // fat tree: nodes under one leaf switch
  double oversubscription = 1.0;    // fat tree: leaf downlink capacity / uplink capacity
  // Fat tree: NIC i of every node on rail i's own leaf switches (DGX SuperPOD's rail-optimised wiring: GPU i of any
  // node one hop from GPU i of the nodes under the same leaves), instead of all of a node's NICs on one leaf.
  bool rail_optimized = false;
  std::string assumption;           // what is assumed where the vendor gives no number
  // nic_link.bandwidth_range: where the NIC rate is assumed, the range the assumption leaves open (bytes/s per
  // direction, low <= nic_link.bandwidth <= high; both 0: no range). predict and validate simulate both ends.
  double nic_bandwidth_low_Bps = 0.0, nic_bandwidth_high_Bps = 0.0;
  bool has_nic_range() const { return nic_bandwidth_high_Bps > 0.0; }
};

struct ClusterSpec {
  std::string name;
  std::string source;               // citation of the numbers
  NodeSpec node;
  NetworkSpec network;
  int default_nodes = 1;
  int max_nodes = 1 << 20;
  std::string file;                 // where the spec was read from, for messages ("clusters/NAME.json (built-in)")
};

struct Vertex {
  VertexKind kind = VertexKind::kDevice;
  std::string name;  // "node3/gpu1"
  int node = -1;     // -1 for network switches
  int local_index = -1;
};

struct Edge {
  int a = -1, b = -1;  // vertex indices
  LinkSpec link;
  std::string kind;
  std::string name;
};

struct Route {
  std::vector<int> edges;  // edge indices, in order from source to destination
  double latency_s = 0.0;
  double bottleneck_Bps = 0.0;  // min bandwidth along the route (no contention)
};

class Cluster {
 public:
  Cluster(ClusterSpec spec, int nodes);  // throws InputError on an invalid spec or node count

  const ClusterSpec& spec() const { return spec_; }
  int nodes() const { return nodes_; }
  int devices_per_node() const { return spec_.node.devices_per_node; }
  int total_devices() const { return nodes_ * spec_.node.devices_per_node; }

  const std::vector<Vertex>& vertices() const { return vertices_; }
  const std::vector<Edge>& edges() const { return edges_; }

  int device_vertex(int node, int local_device) const;
  int cpu_vertex(int node) const;
  int rank_device_vertex(int rank) const;  // block placement
  int node_of_rank(int rank) const { return rank / spec_.node.devices_per_node; }

  Route route(int from_vertex, int to_vertex) const;

  // Added: NIC `nic` of `node`; the vertex of a local name ("gpu1", "board0", "cpu") on `node`, -1 if none;
  // the leaf switch above `node` in a fat tree (-1 otherwise); the vertices of a route, from `from` to its end.
  int nic_vertex(int node, int nic) const;
  int local_vertex(int node, const std::string& local_name) const;
  int leaf_of_node(int node) const;
  std::vector<int> route_vertices(int from_vertex, const Route& route) const;

 private:
  ClusterSpec spec_;
  int nodes_;
  std::vector<Vertex> vertices_;
  std::vector<Edge> edges_;
  struct Impl;
  std::shared_ptr<const Impl> impl_;  // Boost.Graph adjacency list and cached routes
  int local_vertex(int node, const std::string& local_name, const Impl& impl) const;
  void build_network(Impl& impl);
};

// A built-in name (clusters/NAME.json, embedded in the binary) or a path to a cluster JSON file.
ClusterSpec load_cluster_spec(const std::string& name_or_file);
std::vector<std::string> builtin_cluster_names();
bool is_builtin_cluster(const std::string& name);
// The built-in cluster a table's spelling names: equal with case, '-', '_', '.' and spaces ignored, or with its
// provider's prefix left out ("p2.16xlarge", "AWS p2.8xlarge"); nullopt when none is.
std::optional<std::string> builtin_cluster_spelled(const std::string& spelling);

// Added: reads a cluster JSON document (format in clusters/README.md); `file` names it in errors. Resolves
// "devices_per_node": "auto" (std::thread::hardware_concurrency()) and expands "for_each_device" links.
ClusterSpec parse_cluster_spec(const Json& json, const std::string& file);
// The embedded text of a built-in cluster file; empty when `name` is not built in.
std::string builtin_cluster_text(const std::string& name);
// load_cluster_spec + Cluster; nodes <= 0 means the spec's default_nodes.
Cluster load_cluster(const std::string& name_or_file, int nodes = 0);

// For `scaletwin describe --cluster`: devices, links (bandwidth per direction, latency), and routes between
// representative pairs (same switch/board, same node other board, device ↔ host CPU, other node, other leaf),
// each with latency, bottleneck bandwidth and hops.
Json describe_cluster_json(const Cluster& cluster);
std::string format_cluster_table(const Cluster& cluster);

}  // namespace scaletwin::topology
