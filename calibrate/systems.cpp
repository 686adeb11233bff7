// Resolving a published run's system fields to a cluster (see systems.hpp).
#include "calibrate/systems.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <regex>

#include "core/error.hpp"
#include "topology/cluster.hpp"
#include "topology/devices.hpp"

namespace scaletwin::calibrate {

namespace {

std::string text_of(const JsonObject& o, const std::string& key) {
  const Json* v = o.has(key) ? o.get_any(key) : nullptr;
  return v != nullptr && v->is_string() ? v->get<std::string>() : std::string();
}

bool contains(const std::string& text, const std::string& word) {
  return lower_case(text).find(lower_case(word)) != std::string::npos;
}

// A DGX system that is a built-in cluster, by the system's name and the run's device; "" when none.
std::string builtin_dgx(const std::string& system, const topology::DeviceType& d) {
  const std::string s = bare_spelling(system);
  const bool nvidia_mlperf = s.rfind("dgxa100", 0) == 0 || s.rfind("dgxh100", 0) == 0 || s.rfind("eos", 0) == 0 ||
                             s.rfind("h200ngc", 0) == 0;
  if (s == "dgx1" && d.name == "V100-SXM2-16GB") return "dgx-1-v100-16gb";
  if (s == "dgx1" && d.name == "V100-SXM2-32GB") return "dgx-1-v100-32gb";
  if (s == "dgx2" && d.name == "V100-SXM3-32GB") return "dgx-2";
  if (s == "dgx2h" && d.name == "V100-SXM3-32GB") return "dgx-2h";
  if ((s == "dgxa100" || nvidia_mlperf) && d.name == "A100-SXM4-80GB") return "dgx-a100";
  if ((s == "dgxa100" || nvidia_mlperf) && d.name == "A100-SXM4-40GB") return "dgx-a100-40gb";
  if ((s == "dgxh100" || nvidia_mlperf) && d.name == "H100-SXM5-80GB") return "dgx-h100";
  if ((s == "dgxh200" || nvidia_mlperf) && d.name == "H200-SXM5-141GB") return "dgx-h200";
  return "";
}

// How the GPUs of a synthesized node are wired.
enum class Wiring { kNvswitch, kNvlinkMesh, kNvlinkPairs, kPcie };

Wiring wiring_of(const topology::DeviceType& d, int gpus, const std::string& interconnect, std::string& why) {
  const bool sxm = contains(d.name, "sxm");
  if (sxm && d.nvlink_Bps > 0.0) {
    why = gpus > 4 ? "SXM parts on an NVSwitch baseboard (HGX)" : "SXM parts with every pair on NVLink (HGX, 4 GPUs)";
    return gpus > 4 ? Wiring::kNvswitch : Wiring::kNvlinkMesh;
  }
  const bool bridged = contains(interconnect, "nvlink") || contains(interconnect, "bridge");
  if (bridged && d.nvlink_Bps > 0.0 && gpus >= 2) {
    why = "pairs of GPUs on NVLink bridges (the interconnect names NVLink), the rest on PCIe";
    return Wiring::kNvlinkPairs;
  }
  why = bridged ? "PCIe (the interconnect names NVLink, but the catalogue has no bridge rate for this device)"
                : "PCIe switches";
  return Wiring::kPcie;
}

Json link(const std::string& a, const std::string& b, const std::string& kind, double bandwidth_Bps, const char* latency,
          const std::string& source) {
  return Json{{"a", a}, {"b", b}, {"kind", kind}, {"bandwidth", fmt::format("{}Bps", bandwidth_Bps)},
              {"latency", latency}, {"assumption", source}};
}

Json synthesized_node(const topology::DeviceType& d, const std::string& device_ref, int gpus, Wiring wiring) {
  const int per_switch = gpus > 4 ? 4 : 2;
  const int switches = (gpus + per_switch - 1) / per_switch;
  const int nics = std::max(1, gpus / 4);
  const double pcie_Bps = d.host_link_Bps > 0.0 ? d.host_link_Bps : 31.5e9;
  Json links = Json::array();
  Json names = Json::array();
  for (int s = 0; s < switches; ++s) {
    names.push_back(fmt::format("pcie{}", s));
    links.push_back(link(fmt::format("pcie{}", s), "cpu", "pcie", pcie_Bps, "0.5us", "the switch's x16 uplink"));
  }
  for (int g = 0; g < gpus; ++g)
    links.push_back(link(fmt::format("gpu{}", g), fmt::format("pcie{}", g / per_switch), "pcie", pcie_Bps, "0.25us",
                         "the device's host link (its catalogue rate, else PCIe Gen 4 x16)"));
  for (int i = 0; i < nics; ++i)
    links.push_back(link(fmt::format("nic{}", i), fmt::format("pcie{}", i * switches / nics), "pcie", pcie_Bps,
                         "0.25us", "a NIC on a GPU switch"));
  if (wiring == Wiring::kNvswitch) {
    names.push_back("nvswitch");
    for (int g = 0; g < gpus; ++g)
      links.push_back(link(fmt::format("gpu{}", g), "nvswitch", "nvswitch", d.nvlink_Bps, "0.15us",
                           "all of the device's NVLinks to the baseboard's NVSwitches"));
  } else if (wiring == Wiring::kNvlinkMesh) {
    for (int a = 0; a < gpus; ++a)
      for (int b = a + 1; b < gpus; ++b)
        links.push_back(link(fmt::format("gpu{}", a), fmt::format("gpu{}", b), "nvlink", d.nvlink_Bps / (gpus - 1),
                             "0.15us", "the device's NVLinks split evenly over its peers"));
  } else if (wiring == Wiring::kNvlinkPairs) {
    for (int a = 0; a + 1 < gpus; a += 2)
      links.push_back(link(fmt::format("gpu{}", a), fmt::format("gpu{}", a + 1), "nvlink", d.nvlink_Bps, "0.15us",
                           "an NVLink bridge at the device's bridge rate"));
  }
  return Json{{"device", device_ref},
              {"devices_per_node", gpus},
              {"cpu",
               {{"name", "host (assumed)"},
                {"cores", 64},
                {"peak_flops", "4.6Tf"},
                {"memory", "1TB"},
                {"memory_bandwidth", "300GBps"},
                {"assumption", "Not stated by the run: a two-socket host of 64 cores (2.25 GHz, AVX2: 4.6 TFLOP/s), "
                               "1 TB at 300 GB/s."}}},
              {"switches", names},
              {"nics", nics},
              {"links", links}};
}

// The catalogue variant a system states in "device_as_in_system_json" ("NVIDIA A100-SXM4-80GB (500W)"), if any.
std::string variant_of(const JsonObject& o, const std::string& device) {
  std::smatch m;
  const std::string text = text_of(o, "device_as_in_system_json") + " " + text_of(o, "system");
  static const std::regex watts(R"((\d{3})\s*W\b)");
  if (!std::regex_search(text, m, watts)) return "";
  const std::string variant = m[1].str() + "W";
  try {
    (void)topology::load_device(device + "@" + variant, "", "");
    return variant;
  } catch (const InputError&) {
    return "";  // the base figures: the catalogue has no such variant (its limit is the base one)
  }
}

}  // namespace

ResolvedCluster resolve_system(const JsonObject& o) {
  if (!o.has("device"))
    o.fail("cluster", "a built-in cluster name or a cluster file path, or the run's \"device\" (and \"system\") to "
                      "resolve one from");
  const std::string device = o.get_string("device");
  const topology::DeviceType d = topology::load_device(device, o.file(), o.path_of("device"));
  const std::string system = text_of(o, "system");
  const int gpus = static_cast<int>(o.get_int("gpus_per_node", std::nullopt, 1, 4096));
  ResolvedCluster out;
  if (const std::string dgx = builtin_dgx(system, d); !dgx.empty()) {
    out.name = dgx;
    out.note = fmt::format("system \"{}\" with {} read as the built-in cluster {}", system.substr(0, system.find('_')),
                           d.name, dgx);
    return out;
  }
  const std::string interconnect = text_of(o, "accelerator_interconnect");
  const std::string variant = variant_of(o, d.name);
  const std::string ref = variant.empty() ? d.name : d.name + "@" + variant;
  std::string why;
  const Wiring wiring = wiring_of(d, gpus, interconnect, why);
  static const char* kWiring[] = {"NVSwitch", "NVLink mesh", "NVLink pairs", "PCIe"};
  out.name = fmt::format("{} x{}, {}", ref, gpus, kWiring[static_cast<int>(wiring)]);
  out.spec = Json{{"format", "scaletwin-cluster/1"},
                  {"name", out.name},
                  {"source", fmt::format("synthesized from a published run's system fields (system \"{}\", "
                                         "interconnect \"{}\"): {}", system, interconnect, why)},
                  {"default_nodes", 1},
                  {"node", synthesized_node(d, ref, gpus, wiring)},
                  {"network",
                   {{"kind", "fat_tree"},
                    {"nic_link", {{"bandwidth", "100Gbps"}, {"bandwidth_range", {"10Gbps", "400Gbps"}}, {"latency", "1us"}}},
                    {"switch_latency", "0.5us"},
                    {"nodes_per_leaf", 16},
                    {"assumption", "Not stated by the run (its host networking is free text): one 100 Gbit/s NIC "
                                   "per four GPUs, within 10-400 Gbit/s, on a non-blocking fat tree."}}}};
  out.note = fmt::format("systems simulated on clusters synthesized from their device, GPUs per node and interconnect "
                         "({}; host and network assumed; each run's cluster is named in its row)",
                         wiring == Wiring::kPcie ? "PCIe" : "NVLink");
  return out;
}

}  // namespace scaletwin::calibrate
