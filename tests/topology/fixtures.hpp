// A small cluster document for the topology tests: one K80-like node (2 boards, 4 GPUs, 1 NIC) on a star network.
// Tests mutate it to build fat trees and bad inputs.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include "core/json_reader.hpp"

namespace scaletwin::topology::testing {

inline Json small_cluster_json() {
  return Json::parse(R"({
    "format": "scaletwin-cluster/1",
    "name": "small",
    "source": "test fixture",
    "node": {
      "device": {"name": "G", "peak_flops": "4.37Tf", "memory": "12GiB", "memory_bandwidth": "240GBps"},
      "devices_per_node": 4,
      "cpu": {"name": "C", "cores": 8, "peak_flops": 1e12, "memory": "64GB", "memory_bandwidth": "50GBps"},
      "switches": ["board0", "board1"],
      "nics": 1,
      "links": [
        {"a": "gpu{d}", "b": "board{d/2}", "for_each_device": true, "bandwidth": "11.3GBps", "latency": "0.2us"},
        {"a": "board{d/2}", "b": "cpu", "for_each_device": true, "bandwidth": "11.3GBps", "latency": "0.5us"},
        {"a": "nic0", "b": "cpu", "kind": "pcie", "bandwidth": "8GBps", "latency": "1.5us", "comment": "c"}
      ]
    },
    "network": {"kind": "star", "nic_link": {"bandwidth": "10Gbps", "latency": "10us"}, "switch_latency": "5us"}
  })");
}

// Writes `text` to a fresh file under the temporary directory and returns its path.
inline std::string write_temp_file(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() / "scaletwin-topology-tests";
  std::filesystem::create_directories(dir);
  const auto path = dir / name;
  std::ofstream(path) << text;
  return path.string();
}

}  // namespace scaletwin::topology::testing
