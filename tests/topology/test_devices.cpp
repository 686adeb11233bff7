// The device catalogue (devices/*.json, topology/devices.hpp): every file reads, names and aliases resolve with any
// spelling, variants by power limit, the datasheet figures the simulator relies on, and bad references and files.
#include <catch2/catch.hpp>

#include <fstream>
#include <filesystem>

#include "core/error.hpp"
#include "topology/cluster.hpp"
#include "topology/devices.hpp"

using namespace scaletwin;
using namespace scaletwin::topology;

TEST_CASE("every catalogue device reads, with an FP32 peak, memory and a family", "[topology]") {
  const std::vector<std::string> names = builtin_device_names();
  CHECK(names.size() >= 19);
  for (const std::string& n : names) {
    INFO(n);
    const DeviceType d = load_device(n, "", "");
    CHECK(d.peak_flops > 0.0);
    CHECK(d.memory_bytes > 0.0);
    CHECK(d.memory_bandwidth_Bps > 0.0);
    CHECK(!d.family.empty());
    // Tensor rates are dense: never below the FP32 rate where present (the sparse figures are twice the dense).
    for (double tensor : {d.peak_tf32, d.peak_flops_half, d.peak_bf16, d.peak_fp8})
      if (tensor > 0.0) CHECK(tensor >= d.peak_flops);
  }
}

TEST_CASE("every device the modern reference names is in the catalogue, by its reference spelling", "[topology]") {
  for (const char* n : {"V100-SXM2-16GB", "V100-SXM2-32GB", "A100-SXM4-80GB", "A100-SXM4-40GB", "A100-PCIe-80GB",
                        "A100-PCIe-40GB", "H100-SXM5-80GB", "H100-SXM5-96GB", "H100-PCIe-80GB", "H100-PCIe",
                        "H200-SXM5-141GB", "A30", "L40", "L40S", "L4", "A10G", "A40", "RTX A5000"}) {
    INFO(n);
    CHECK(find_builtin_device(n).has_value());
  }
}

TEST_CASE("catalogue figures: dense tensor rates, memories, NVLink, and names and aliases in any spelling", "[topology]") {
  const DeviceType a100 = load_device("a100 sxm4 80gb", "", "");
  CHECK(a100.name == "A100-SXM4-80GB");
  CHECK(a100.family == "ampere");
  CHECK(a100.peak_flops == Approx(19.5e12));
  CHECK(a100.peak_tf32 == Approx(156e12));
  CHECK(a100.peak_flops_half == Approx(312e12));
  CHECK(a100.peak_bf16 == Approx(312e12));
  CHECK(a100.peak_fp8 == 0.0);
  CHECK(a100.memory_bandwidth_Bps == Approx(2039e9));
  CHECK(a100.nvlink_Bps == Approx(300e9));
  CHECK(a100.sms == 108);
  const DeviceType v100 = load_device("V100-SXM2-16GB", "", "");
  CHECK(v100.peak_tf32 == 0.0);  // no TF32 or BF16 before Ampere
  CHECK(v100.peak_bf16 == 0.0);
  CHECK(v100.peak_flops_half == Approx(125e12));
  CHECK(load_device("H100 SXM", "", "").name == "H100-SXM5-80GB");
  CHECK(load_device("H100-PCIe", "", "").name == "H100-PCIe-80GB");
  CHECK(load_device("K80", "", "").name == "Tesla K80 (one GK210)");
  CHECK(load_device("L40S", "", "").peak_fp8 == Approx(733e12));
}

TEST_CASE("variants by power limit: the DGX-2H's V100 at 450 W", "[topology]") {
  const DeviceType base = load_device("V100-SXM3-32GB", "", "");
  const DeviceType hot = load_device("V100-SXM3-32GB@450W", "", "");
  CHECK(base.power_w == 350.0);
  CHECK(hot.power_w == 450.0);
  CHECK(hot.variant == "450W");
  CHECK(hot.peak_flops_half == Approx(131.25e12));
  CHECK(hot.peak_flops > base.peak_flops);
  CHECK(hot.memory_bandwidth_Bps == base.memory_bandwidth_Bps);  // what the variant does not state stays
  CHECK_THROWS_AS(load_device("V100-SXM3-32GB@600W", "scenario.json", "/device"), InputError);
}

TEST_CASE("bad device references and files name the file, the path and what was expected", "[topology]") {
  try {
    load_device("A200-SXM9", "cluster.json", "/node/device");
    FAIL("no InputError");
  } catch (const InputError& e) {
    CHECK(e.file() == "cluster.json");
    CHECK(e.json_path() == "/node/device");
    CHECK(std::string(e.what()).find("A100-SXM4-80GB") != std::string::npos);  // lists the catalogue
  }
  const auto path = std::filesystem::temp_directory_path() / "scaletwin_test_device.json";
  std::ofstream(path) << R"({"format": "scaletwin-device/1", "name": "X", "family": "ampere",
                            "peak": {"fp32": "10Tf", "fp17": "1Tf"}, "memory": "8GB", "memory_bandwidth": "1TBps"})";
  try {
    load_device(path.string(), "", "");
    FAIL("no InputError");
  } catch (const InputError& e) {
    CHECK(e.json_path() == "/peak/fp17");
  }
  // A cluster naming an unknown device: exit 2 naming the cluster file and its field.
  const auto cluster = std::filesystem::temp_directory_path() / "scaletwin_test_cluster_device.json";
  std::ofstream(cluster) << R"({"format": "scaletwin-cluster/1", "name": "c", "node": {"device": "Z9000",
      "devices_per_node": 1, "cpu": {"name": "c", "cores": 4, "peak_flops": "1Tf", "memory": "8GB",
      "memory_bandwidth": "10GBps"}, "links": [{"a": "gpu{d}", "b": "cpu", "for_each_device": true, "kind": "pcie",
      "bandwidth": "10GBps", "latency": "1us"}]}})";
  try {
    load_cluster_spec(cluster.string());
    FAIL("no InputError");
  } catch (const InputError& e) {
    CHECK(e.file() == cluster.string());
    CHECK(e.json_path() == "/node/device");
  }
}
