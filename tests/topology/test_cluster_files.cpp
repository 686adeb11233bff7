// Cluster files: units, templates, fat trees with and without oversubscription, describe output, and bad files
// (each an InputError naming the file and the JSON path).
#include <catch2/catch.hpp>

#include <functional>
#include <map>

#include "core/error.hpp"
#include "fixtures.hpp"
#include "topology/cluster.hpp"

using namespace scaletwin;
using namespace scaletwin::topology;
using scaletwin::topology::testing::small_cluster_json;
using scaletwin::topology::testing::write_temp_file;

namespace {

Cluster fat_tree(double oversubscription, int nodes) {
  Json j = small_cluster_json();
  j["network"] = {{"kind", "fat_tree"},
                  {"nic_link", {{"bandwidth", "10Gbps"}, {"latency", "1us"}}},
                  {"switch_latency", "0.5us"},
                  {"nodes_per_leaf", 2},
                  {"oversubscription", oversubscription}};
  return Cluster(parse_cluster_spec(j, "fat.json"), nodes);
}

// Loads `j` from a file and returns the InputError's message; fails the test when nothing is thrown.
std::string load_error(const Json& j, const std::string& file_name) {
  const std::string path = write_temp_file(file_name, j.dump(2));
  try {
    load_cluster_spec(path);
  } catch (const InputError& e) {
    CHECK(e.file() == path);
    return e.what();
  }
  FAIL("no InputError for " << file_name);
  return "";
}

}  // namespace

TEST_CASE("quantities with units in a cluster file", "[topology]") {
  const ClusterSpec s = parse_cluster_spec(small_cluster_json(), "small.json");
  CHECK(s.node.device.peak_flops == Approx(4.37e12));
  CHECK(s.node.device.memory_bytes == 12.0 * 1024 * 1024 * 1024);
  CHECK(s.node.device.memory_bandwidth_Bps == Approx(240e9));
  CHECK(s.node.cpu.peak_flops == 1e12);  // a plain number is SI
  CHECK(s.network.nic_link.bandwidth_Bps == 1.25e9);
  CHECK(s.network.nic_link.latency_s == Approx(10e-6));
  CHECK(s.network.switch_latency_s == Approx(5e-6));
  REQUIRE(s.node.links.size() == 4 + 2 + 1);  // templates: 4 GPU links, 2 board links (repeats merged), the NIC
  CHECK(s.node.links[0].a == "gpu0");
  CHECK(s.node.links[3].b == "board1");
  CHECK(s.node.links[5].a == "board1");
  CHECK(s.node.links[0].link.bandwidth_Bps == Approx(11.3e9));
  CHECK(s.node.links[6].link.latency_s == Approx(1.5e-6));
  CHECK(s.node.links[6].kind == "pcie");
}

TEST_CASE("an assumed NIC rate may state the range it leaves open", "[topology]") {
  Json j = small_cluster_json();
  CHECK_FALSE(parse_cluster_spec(j, "small.json").network.has_nic_range());
  j["network"]["nic_link"]["bandwidth"] = "1Gbps";
  j["network"]["nic_link"]["bandwidth_range"] = {"1Gbps", 1.25e9};  // units or SI bytes/s
  const ClusterSpec s = parse_cluster_spec(j, "small.json");
  REQUIRE(s.network.has_nic_range());
  CHECK(s.network.nic_bandwidth_low_Bps == 1.25e8);
  CHECK(s.network.nic_bandwidth_high_Bps == 1.25e9);
  CHECK(s.network.nic_link.bandwidth_Bps == 1.25e8);  // the stated rate is what is simulated
  CHECK(describe_cluster_json(Cluster(s, 2)).at("network").at("nic_link").at("bandwidth_range_Bps") ==
        Json::array({1.25e8, 1.25e9}));
  CHECK_THAT(format_cluster_table(Cluster(s, 2)), Catch::Contains("the NIC rate is assumed, within 125.00 MB/s to "
                                                                   "1.25 GB/s"));
}

TEST_CASE("a route never passes through a device", "[topology]") {
  Json j = small_cluster_json();
  // A fast direct link gpu0 <-> gpu2: gpu0 -> gpu2 -> board1 -> gpu3 would be the quickest way to gpu3.
  j["node"]["links"].push_back({{"a", "gpu0"}, {"b", "gpu2"}, {"kind", "nvlink"}, {"bandwidth", "20GBps"},
                                {"latency", "0.01us"}, {"shared", true}});
  const Cluster c(parse_cluster_spec(j, "direct.json"), 1);
  const int g0 = c.device_vertex(0, 0), g2 = c.device_vertex(0, 2), g3 = c.device_vertex(0, 3);
  const Route direct = c.route(g0, g2);
  REQUIRE(direct.edges.size() == 1);
  CHECK(c.edges()[static_cast<size_t>(direct.edges[0])].kind == "nvlink");
  CHECK(c.edges()[static_cast<size_t>(direct.edges[0])].link.shared);
  CHECK(direct.bottleneck_Bps == 20e9);
  const Route around = c.route(g0, g3);
  CHECK(around.edges.size() == 4);  // gpu0, board0, cpu, board1, gpu3
  CHECK(around.latency_s == Approx(1.4e-6));
  for (int v : c.route_vertices(g0, around))
    if (v != g0 && v != g3) CHECK(c.vertices()[static_cast<size_t>(v)].kind != VertexKind::kDevice);
}

TEST_CASE("fat tree: nodes under one leaf, uplinks through the spine sized by oversubscription", "[topology]") {
  const Cluster one_leaf = fat_tree(1.0, 2);
  int network_switches = 0;
  for (const Vertex& v : one_leaf.vertices()) network_switches += v.kind == VertexKind::kNetworkSwitch;
  CHECK(network_switches == 1);  // a single leaf needs no spine

  const Cluster full = fat_tree(1.0, 5);  // 3 leaves + spine
  network_switches = 0;
  for (const Vertex& v : full.vertices()) network_switches += v.kind == VertexKind::kNetworkSwitch;
  CHECK(network_switches == 4);
  const Route same_leaf = full.route(full.device_vertex(0, 0), full.device_vertex(1, 0));
  const Route cross = full.route(full.device_vertex(0, 0), full.device_vertex(4, 0));
  CHECK(same_leaf.bottleneck_Bps == 1.25e9);
  CHECK(cross.bottleneck_Bps == 1.25e9);  // uplink 2 × 1.25e9: the NIC is still the bottleneck
  CHECK(cross.edges.size() == same_leaf.edges.size() + 2);
  // leaf latency = 1 us + 0.25 us on each side; uplinks 1 us + 0.5 us: one leaf switch vs leaf, spine, leaf
  CHECK(cross.latency_s - same_leaf.latency_s == Approx(3e-6));

  const Cluster thin = fat_tree(4.0, 5);
  CHECK(thin.route(thin.device_vertex(0, 0), thin.device_vertex(1, 0)).bottleneck_Bps == 1.25e9);
  CHECK(thin.route(thin.device_vertex(0, 0), thin.device_vertex(4, 0)).bottleneck_Bps == 2 * 1.25e9 / 4);
  CHECK(thin.route(thin.device_vertex(2, 1), thin.device_vertex(4, 3)).bottleneck_Bps == 2 * 1.25e9 / 4);
}

TEST_CASE("node counts outside the cluster's range are input errors", "[topology]") {
  Json j = small_cluster_json();
  j["max_nodes"] = 4;
  const ClusterSpec s = parse_cluster_spec(j, "small.json");
  CHECK_NOTHROW(Cluster(s, 4));
  CHECK_THROWS_WITH(Cluster(s, 5), Catch::Contains("small.json at /max_nodes"));
  CHECK_THROWS_AS(Cluster(s, 0), InputError);
  j["network"] = {{"kind", "none"}};
  j.erase("max_nodes");
  const ClusterSpec alone = parse_cluster_spec(j, "alone.json");
  CHECK(alone.max_nodes == 1);
  CHECK_THROWS_WITH(Cluster(alone, 2), Catch::Contains("alone.json at /network/kind"));
}

TEST_CASE("bad cluster files name the file, the JSON path and what was expected", "[topology]") {
  struct Case {
    std::string name;
    std::function<void(Json&)> mutate;
    std::string path;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"negative-bandwidth", [](Json& j) { j["node"]["links"][2]["bandwidth"] = "-8GBps"; }, "/node/links/2/bandwidth",
       "positive bandwidth"},
      {"zero-bandwidth", [](Json& j) { j["network"]["nic_link"]["bandwidth"] = 0; }, "/network/nic_link/bandwidth",
       "positive bandwidth"},
      {"unknown-vertex", [](Json& j) { j["node"]["links"][2]["a"] = "nic7"; }, "/node/links/2/a", "unknown vertex \"nic7\""},
      {"template-vertex", [](Json& j) { j["node"]["links"][1]["a"] = "board{d}"; }, "/node/links/1/a",
       "unknown vertex \"board2\""},
      {"bad-template", [](Json& j) { j["node"]["links"][0]["b"] = "board{d/0}"; }, "/node/links/0/b", "{d/K}"},
      {"gpu-not-connected",
       [](Json& j) {
         j["node"]["links"][0]["for_each_device"] = false;
         j["node"]["links"][0]["a"] = "gpu0";
         j["node"]["links"][0]["b"] = "board0";
       },
       "/node/links", "\"gpu1\" to the host CPU"},
      {"bad-network-kind", [](Json& j) { j["network"]["kind"] = "ring"; }, "/network/kind", "one of none, star, fat_tree"},
      {"unknown-key", [](Json& j) { j["node"]["links"][0]["bandwith"] = "1GBps"; }, "/node/links/0/bandwith",
       "unknown key \"bandwith\""},
      {"bad-unit", [](Json& j) { j["node"]["device"]["peak_flops"] = "4.37 parsecs"; }, "/node/device/peak_flops",
       "a FLOP rate"},
      {"bad-devices", [](Json& j) { j["node"]["devices_per_node"] = "many"; }, "/node/devices_per_node",
       "an integer or \"auto\""},
      {"no-nic", [](Json& j) {
         j["node"]["nics"] = 0;
         j["node"]["links"].erase(2);
       }, "/node/nics", "at least 1 NIC"},
      {"switch-name-taken", [](Json& j) { j["node"]["switches"][1] = "cpu"; }, "/node/switches/1", "\"cpu\" is taken"},
      {"self-link", [](Json& j) { j["node"]["links"][2]["a"] = "cpu"; }, "/node/links/2", "two different vertices"},
      {"fat-tree-no-leaf-size", [](Json& j) { j["network"]["kind"] = "fat_tree"; }, "/network/nodes_per_leaf",
       "required field"},
      {"max-nodes-without-network",
       [](Json& j) {
         j["network"] = {{"kind", "none"}};
         j["max_nodes"] = 8;
       },
       "/max_nodes", "1 on a cluster without a network"},
      {"floating-switch", [](Json& j) { j["node"]["switches"].push_back("spare"); }, "/node/switches/2",
       "\"spare\" is in no link"},
      {"duplicate-link", [](Json& j) { j["node"]["links"].push_back({{"a", "cpu"}, {"b", "nic0"}, {"bandwidth", 1e9}, {"latency", 0}}); },
       "/node/links/3", "at most one link between"},
      {"missing-cpu", [](Json& j) { j["node"].erase("cpu"); }, "/node/cpu", "required field"},
      {"range-not-array", [](Json& j) { j["network"]["nic_link"]["bandwidth_range"] = "1-10Gbps"; },
       "/network/nic_link/bandwidth_range", "an array"},
      {"range-one-end", [](Json& j) { j["network"]["nic_link"]["bandwidth_range"] = {"1Gbps"}; },
       "/network/nic_link/bandwidth_range", "two bandwidths [low, high] (got 1 elements)"},
      {"range-bad-unit", [](Json& j) { j["network"]["nic_link"]["bandwidth_range"] = {"1Gbps", "10 furlongs"}; },
       "/network/nic_link/bandwidth_range/1", "bandwidth"},
      {"range-zero", [](Json& j) { j["network"]["nic_link"]["bandwidth_range"] = {0, "10Gbps"}; },
       "/network/nic_link/bandwidth_range/0", "a positive bandwidth"},
      {"range-misses-rate", [](Json& j) { j["network"]["nic_link"]["bandwidth_range"] = {"1Gbps", "5Gbps"}; },
       "/network/nic_link/bandwidth_range", "low <= bandwidth <= high"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    Json j = small_cluster_json();
    c.mutate(j);
    const std::string message = load_error(j, c.name + ".json");
    CHECK_THAT(message, Catch::Contains(c.name + ".json at " + c.path + ":"));
    CHECK_THAT(message, Catch::Contains(c.expected));
  }
}

TEST_CASE("unreadable files and unknown names", "[topology]") {
  const std::string path = write_temp_file("syntax.json", "{\"name\": \"x\",\n  \"node\": }");
  CHECK_THROWS_WITH(load_cluster_spec(path), Catch::Contains(path) && Catch::Contains("line 2"));
  CHECK_THROWS_WITH(load_cluster_spec("aws-p9"),
                    Catch::Contains("aws-p9") && Catch::Contains("aws-p2.8xlarge") && Catch::Contains("dgx-h200"));
  CHECK_THROWS_AS(load_cluster_spec("/nonexistent/cluster.json"), InputError);
  // A path works as well as a name.
  const std::string ok = write_temp_file("ok.json", small_cluster_json().dump());
  CHECK(load_cluster_spec(ok).node.devices_per_node == 4);
  CHECK(load_cluster(ok, 3).nodes() == 3);
  CHECK(load_cluster("aws-p2.8xlarge").nodes() == 1);
}

TEST_CASE("describe: links and representative routes", "[topology]") {
  const Cluster c(load_cluster_spec("aws-p2.8xlarge"), 2);
  const Json d = describe_cluster_json(c);
  CHECK(d["cluster"] == "aws-p2.8xlarge");
  CHECK(d["total_devices"] == 16);
  CHECK(d["links"].size() == c.edges().size());
  std::map<std::string, Json> routes;
  for (const Json& r : d["routes"]) routes[r["pair"].get<std::string>()] = r;
  REQUIRE(routes.count("same_switch"));
  REQUIRE(routes.count("same_node_other_switch"));
  REQUIRE(routes.count("device_cpu"));
  REQUIRE(routes.count("other_node"));
  CHECK(routes.count("other_leaf") == 0);
  CHECK(routes["same_switch"]["hops"] == 2);
  CHECK(routes["same_switch"]["bottleneck_Bps"].get<double>() == Approx(11.3e9));
  CHECK(routes["same_node_other_switch"]["hops"] == 4);
  CHECK(routes["device_cpu"]["hops"] == 2);
  CHECK(routes["other_node"]["bottleneck_Bps"].get<double>() == 1.25e9);
  CHECK(routes["other_node"]["path"].size() == 9);
  const std::string table = format_cluster_table(c);
  CHECK_THAT(table, Catch::Contains("aws-p2.8xlarge") && Catch::Contains("other_node") &&
                        Catch::Contains("1.25 GB/s") && Catch::Contains("node0/gpu0 <-> node0/board0"));

  const Json dgx = describe_cluster_json(Cluster(load_cluster_spec("dgx-h200"), 40));
  bool other_leaf = false;
  for (const Json& r : dgx["routes"]) other_leaf |= r["pair"] == "other_leaf";
  CHECK(other_leaf);
  CHECK(dgx["network"]["oversubscription"] == 1.0);
  CHECK(dgx["network"]["rail_optimized"] == true);
}
