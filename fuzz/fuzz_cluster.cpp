// Fuzz target for the cluster reader (topology/cluster.hpp): parse_cluster_spec, then instantiation with one to
// three nodes (never more than the spec allows), routes between representative pairs (describe's JSON) and one
// route from the first to the last device. The node count comes from the input's last byte, so that the fuzzer
// can explore it without a second input.
#include <algorithm>

#include "fuzz/fuzz_common.hpp"
#include "topology/cluster.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const int wanted_nodes = 1 + data[size - 1] % 3;
  scaletwin::fuzz::guard([&] {
    using namespace scaletwin::topology;
    const scaletwin::Json doc = scaletwin::fuzz::parse_document(data, size - 1, "fuzz-cluster.json");
    ClusterSpec spec = parse_cluster_spec(doc, "fuzz-cluster.json");
    const int nodes = std::min(wanted_nodes, spec.max_nodes);
    const Cluster cluster(std::move(spec), nodes);
    (void)describe_cluster_json(cluster);
    const int last = cluster.total_devices() - 1;
    (void)cluster.route(cluster.rank_device_vertex(0), cluster.rank_device_vertex(last));
  });
  return 0;
}
