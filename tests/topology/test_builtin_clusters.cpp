// The built-in clusters: all of the spec's names exist, load, instantiate with one and several nodes, embed the
// current files, and route as the hardware is wired (K80 boards, the AWS network, NVSwitch and NICs of a DGX).
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <thread>

#include "core/error.hpp"
#include "topology/cluster.hpp"

using namespace scaletwin;
using namespace scaletwin::topology;

namespace {

std::vector<std::string> route_names(const Cluster& c, int from, int to) {
  std::vector<std::string> out;
  for (int v : c.route_vertices(from, c.route(from, to))) out.push_back(c.vertices()[static_cast<size_t>(v)].name);
  return out;
}

const std::vector<std::string> kSpecClusters = {"gce-k80x8",         "aws-p2.xlarge", "aws-p2.8xlarge", "aws-p2.16xlarge",
                                                "bsc-minotauro-k80", "dgx-h200",      "local-cpu"};

}  // namespace

TEST_CASE("every built-in cluster of the spec loads and instantiates", "[topology]") {
  const auto names = builtin_cluster_names();
  for (const auto& name : kSpecClusters) {
    CAPTURE(name);
    REQUIRE(std::find(names.begin(), names.end(), name) != names.end());
    const ClusterSpec spec = load_cluster_spec(name);
    CHECK(spec.name == name);
    CHECK(!spec.source.empty());
    CHECK(spec.node.device.peak_flops > 0);
    for (int nodes : {1, std::min(spec.max_nodes, 5)}) {
      const Cluster c(spec, nodes);
      CHECK(c.total_devices() == nodes * spec.node.devices_per_node);
      // Every device reaches every other device and every host CPU, and routes are symmetric.
      for (int r = 0; r < c.total_devices(); r += std::max(1, c.total_devices() / 7)) {
        const int dv = c.rank_device_vertex(r);
        for (int n = 0; n < nodes; ++n) {
          const Route to_cpu = c.route(dv, c.cpu_vertex(n));
          CHECK(!to_cpu.edges.empty());
          CHECK(to_cpu.bottleneck_Bps > 0);
          const Route back = c.route(c.cpu_vertex(n), dv);
          CHECK(std::vector<int>(back.edges.rbegin(), back.edges.rend()) == to_cpu.edges);
        }
      }
    }
  }
}

TEST_CASE("the embedded cluster texts are the files of clusters/", "[topology]") {
  for (const auto& name : builtin_cluster_names()) {
    CAPTURE(name);
    std::ifstream in(std::string(SCALETWIN_SOURCE_DIR) + "/clusters/" + name + ".json");
    REQUIRE(in);
    std::ostringstream text;
    text << in.rdbuf();
    CHECK(builtin_cluster_text(name) == text.str());
  }
  CHECK(builtin_cluster_text("no-such-cluster").empty());
}

TEST_CASE("K80 node: GPUs of a board meet at the board switch, other boards through the host", "[topology]") {
  const Cluster c(load_cluster_spec("aws-p2.8xlarge"), 1);
  REQUIRE(c.devices_per_node() == 8);
  const int g0 = c.device_vertex(0, 0), g1 = c.device_vertex(0, 1), g2 = c.device_vertex(0, 2);
  CHECK(route_names(c, g0, g1) == std::vector<std::string>{"node0/gpu0", "node0/board0", "node0/gpu1"});
  CHECK(route_names(c, g0, g2) ==
        std::vector<std::string>{"node0/gpu0", "node0/board0", "node0/cpu", "node0/board1", "node0/gpu2"});
  CHECK(route_names(c, c.device_vertex(0, 7), g0) ==
        std::vector<std::string>{"node0/gpu7", "node0/board3", "node0/cpu", "node0/board0", "node0/gpu0"});
  const Route same_board = c.route(g0, g1);
  CHECK(same_board.bottleneck_Bps == Approx(11.3e9));
  CHECK(same_board.latency_s == Approx(0.4e-6));
  CHECK(c.route(g0, g2).latency_s == Approx(1.4e-6));
  CHECK(route_names(c, g1, c.cpu_vertex(0)) == std::vector<std::string>{"node0/gpu1", "node0/board0", "node0/cpu"});
  // The device data of a GK210.
  CHECK(c.spec().node.device.peak_flops == Approx(4.37e12));
  CHECK(c.spec().node.device.memory_bandwidth_Bps == Approx(240e9));
}

TEST_CASE("p2.8xlarge: a cross-node route goes through both NICs and the switch, 10 Gbit/s bottleneck", "[topology]") {
  const Cluster c(load_cluster_spec("aws-p2.8xlarge"), 3);
  const int from = c.device_vertex(0, 0), to = c.device_vertex(2, 3);
  CHECK(route_names(c, from, to) ==
        std::vector<std::string>{"node0/gpu0", "node0/board0", "node0/cpu", "node0/nic0", "net/switch", "node2/nic0",
                                 "node2/cpu", "node2/board1", "node2/gpu3"});
  const Route r = c.route(from, to);
  CHECK(r.bottleneck_Bps == 1.25e9);
  // 0.2 + 0.5 + 0.5 (PCIe, NIC) + 2 × (10 + 5/2) (network, switch) + 0.5 + 0.5 + 0.2 us
  CHECK(r.latency_s == Approx(27.4e-6));
  const Route back = c.route(to, from);
  CHECK(std::vector<int>(back.edges.rbegin(), back.edges.rend()) == r.edges);
  CHECK(back.latency_s == r.latency_s);
}

TEST_CASE("network rates of the other K80 clusters", "[topology]") {
  const Cluster p16(load_cluster_spec("aws-p2.16xlarge"), 2);
  CHECK(p16.devices_per_node() == 16);
  CHECK(p16.route(p16.device_vertex(0, 15), p16.device_vertex(1, 0)).bottleneck_Bps == 2.5e9);
  const Cluster p1(load_cluster_spec("aws-p2.xlarge"), 4);
  CHECK(p1.total_devices() == 4);
  CHECK(p1.route(p1.rank_device_vertex(0), p1.rank_device_vertex(3)).bottleneck_Bps == 0.125e9);
  const Cluster bsc(load_cluster_spec("bsc-minotauro-k80"), 16);
  CHECK(bsc.devices_per_node() == 4);
  CHECK(bsc.route(bsc.device_vertex(0, 0), bsc.device_vertex(15, 0)).bottleneck_Bps == 7e9);  // 56 Gbit/s
  CHECK(bsc.spec().node.cpu.cores == 16);
  CHECK_THROWS_AS(Cluster(load_cluster_spec("gce-k80x8"), 2), InputError);
}

TEST_CASE("DGX H200: NVSwitch between GPUs, one NIC per GPU across nodes", "[topology]") {
  const Cluster c(load_cluster_spec("dgx-h200"), 40);
  CHECK(c.spec().node.device.peak_flops_half == Approx(989e12));
  CHECK(route_names(c, c.device_vertex(0, 0), c.device_vertex(0, 5)) ==
        std::vector<std::string>{"node0/gpu0", "node0/nvswitch", "node0/gpu5"});
  CHECK(c.route(c.device_vertex(0, 0), c.device_vertex(0, 5)).bottleneck_Bps == 450e9);
  const auto path = route_names(c, c.device_vertex(1, 3), c.device_vertex(36, 3));
  CHECK(std::find(path.begin(), path.end(), "node1/nic3") != path.end());
  CHECK(std::find(path.begin(), path.end(), "node36/nic3") != path.end());
  CHECK(std::find(path.begin(), path.end(), "net/spine") != path.end());  // 32 nodes per unit: nodes 1 and 36 differ
  CHECK(c.route(c.device_vertex(1, 3), c.device_vertex(36, 3)).bottleneck_Bps == 50e9);
  CHECK(c.leaf_of_node(0) == c.leaf_of_node(31));
  CHECK(c.leaf_of_node(0) != c.leaf_of_node(32));
}

TEST_CASE("DGX H100: the DGX H200's system with H100 SXM GPUs (80 GB at 3.35 TB/s)", "[topology]") {
  const Cluster c(load_cluster_spec("dgx-h100"), 8);
  const Cluster h200(load_cluster_spec("dgx-h200"), 8);
  CHECK(c.spec().node.device.name == "H100-SXM5-80GB");
  CHECK(c.spec().node.device.peak_flops_half == Approx(989.4e12));  // the H100 whitepaper's dense FP16 [GLENN-H100]
  CHECK(h200.spec().node.device.peak_flops_half == Approx(989e12));  // the H200's as [STAS] gives it
  CHECK(c.spec().node.device.peak_flops == h200.spec().node.device.peak_flops);
  CHECK(c.spec().node.device.family == "hopper");
  CHECK(c.spec().node.device.memory_bandwidth_Bps == Approx(3.35e12));
  CHECK(c.spec().node.device.memory_bytes < h200.spec().node.device.memory_bytes);
  CHECK(c.route(c.device_vertex(0, 0), c.device_vertex(0, 5)).bottleneck_Bps == 450e9);
  CHECK(c.route(c.device_vertex(1, 3), c.device_vertex(6, 3)).bottleneck_Bps == 50e9);
}

TEST_CASE("local-cpu: one device per hardware thread, shared memory between them", "[topology]") {
  const Cluster c(load_cluster_spec("local-cpu"), 1);
  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  CHECK(c.devices_per_node() == threads);
  CHECK(c.spec().node.cpu.cores == threads);
  CHECK(c.spec().node.cpu.peak_flops == Approx(threads * 64e9));
  CHECK(c.vertices()[static_cast<size_t>(c.device_vertex(0, 0))].name == "node0/core0");
  if (threads > 1) {
    CHECK(route_names(c, c.device_vertex(0, 0), c.device_vertex(0, 1)) ==
          std::vector<std::string>{"node0/core0", "node0/shm", "node0/core1"});
    CHECK(c.route(c.device_vertex(0, 0), c.device_vertex(0, 1)).bottleneck_Bps == 5e9);
  }
  CHECK_THROWS_AS(Cluster(load_cluster_spec("local-cpu"), 2), InputError);
}

TEST_CASE("block placement of ranks", "[topology]") {
  const Cluster c(load_cluster_spec("aws-p2.8xlarge"), 3);
  CHECK(c.rank_device_vertex(0) == c.device_vertex(0, 0));
  CHECK(c.rank_device_vertex(9) == c.device_vertex(1, 1));
  CHECK(c.rank_device_vertex(23) == c.device_vertex(2, 7));
  CHECK(c.node_of_rank(7) == 0);
  CHECK(c.node_of_rank(8) == 1);
  for (int r = 0; r < c.total_devices(); ++r) {
    const Vertex& v = c.vertices()[static_cast<size_t>(c.rank_device_vertex(r))];
    CHECK(v.kind == VertexKind::kDevice);
    CHECK(v.node == c.node_of_rank(r));
    CHECK(v.local_index == r % 8);
  }
  CHECK_THROWS_AS(c.rank_device_vertex(24), InternalError);
}

TEST_CASE("DGX-1: consecutive GPUs form a ring over NVLink, the cube-mesh's other pairs are NVLinked or on PCIe", "[topology]") {
  const Cluster c(load_cluster_spec("dgx-1-v100-16gb"), 1);
  CHECK(c.spec().node.device.name == "V100-SXM2-16GB");
  for (int k = 0; k < 8; ++k) {
    INFO("gpu" << k << " -> gpu" << (k + 1) % 8);
    const Route r = c.route(c.device_vertex(0, k), c.device_vertex(0, (k + 1) % 8));
    CHECK(r.edges.size() == 1);  // a direct NVLink
    CHECK(r.bottleneck_Bps >= 25e9);
  }
  // Each GPU uses all six of its NVLink 2 links (25 GB/s each, hardware.md §2a): 150 GB/s per direction in all.
  for (int g = 0; g < 8; ++g) {
    double nvlink = 0.0;
    for (const Edge& e : c.edges())
      if (e.kind == "nvlink" && (e.a == c.device_vertex(0, g) || e.b == c.device_vertex(0, g))) nvlink += e.link.bandwidth_Bps;
    CHECK(nvlink == Approx(150e9));
  }
  // Physical GPUs 0 and 7 (ours 0 and 4) have no NVLink: PCIe and the host.
  CHECK(c.route(c.device_vertex(0, 0), c.device_vertex(0, 4)).bottleneck_Bps == Approx(15.75e9));
}

TEST_CASE("DGX A100, DGX-2 and PCIe servers: NVSwitch or PCIe inside, a NIC per GPU or per pair", "[topology]") {
  const Cluster a100(load_cluster_spec("dgx-a100"), 2);
  CHECK(a100.spec().node.device.name == "A100-SXM4-80GB");
  CHECK(a100.route(a100.device_vertex(0, 0), a100.device_vertex(0, 7)).bottleneck_Bps == Approx(300e9));
  CHECK(a100.route(a100.device_vertex(0, 3), a100.device_vertex(1, 3)).bottleneck_Bps == Approx(25e9));  // HDR 200
  CHECK(load_cluster_spec("dgx-a100-40gb").node.device.memory_bytes == Approx(40e9));
  const Cluster dgx2h(load_cluster_spec("dgx-2h"), 1);
  CHECK(dgx2h.devices_per_node() == 16);
  CHECK(dgx2h.spec().node.device.variant == "450W");
  CHECK(dgx2h.route(dgx2h.device_vertex(0, 0), dgx2h.device_vertex(0, 15)).bottleneck_Bps == Approx(150e9));
  const Cluster l40s(load_cluster_spec("pcie-l40s-x8"), 1);
  CHECK(l40s.route(l40s.device_vertex(0, 0), l40s.device_vertex(0, 1)).bottleneck_Bps == Approx(31.5e9));
  CHECK(l40s.route(l40s.device_vertex(0, 0), l40s.device_vertex(0, 7)).edges.size() == 4);  // up and over the host
}

TEST_CASE("rail-optimised fat trees: GPU i of two nodes of a unit meet at rail i's leaf, other pairs at the spine",
          "[topology]") {
  const Cluster c(load_cluster_spec("dgx-h100"), 64);  // two scalable units of 32 nodes
  const auto switches_on = [&](int a_node, int a_gpu, int b_node, int b_gpu) {
    const Route r = c.route(c.device_vertex(a_node, a_gpu), c.device_vertex(b_node, b_gpu));
    int n = 0;
    for (int v : c.route_vertices(c.device_vertex(a_node, a_gpu), r))
      n += c.vertices().at(static_cast<size_t>(v)).kind == VertexKind::kNetworkSwitch;
    return n;
  };
  CHECK(switches_on(0, 3, 31, 3) == 1);  // same rail, same unit: one leaf
  CHECK(switches_on(0, 3, 32, 3) == 3);  // another unit: leaf, spine, leaf
  // Another rail: over the spine, or (as short) on rail 3 to node 31 and through its host to its GPU 4.
  CHECK(switches_on(0, 3, 31, 4) >= 1);
  CHECK(c.leaf_of_node(0) == c.leaf_of_node(31));
  CHECK(c.leaf_of_node(0) != c.leaf_of_node(32));
}
