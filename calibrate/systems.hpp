// Published runs name their machine as their sources do (../shared/spec.md, "Measurements file"): a "system"
// (DGX-1, DGX A100, or an MLPerf system name), a "device" of the catalogue, "gpus_per_node", and for MLPerf systems
// "accelerator_interconnect" and "host_networking" as free text. This resolves such a run to a cluster and says how:
//
//   1. a DGX system that is a built-in cluster with the run's device: "DGX-1" with V100-SXM2-16GB is dgx-1-v100-16gb,
//      "DGX A100" with A100-SXM4-80GB dgx-a100, NVIDIA's own MLPerf systems ("dgxa100_...", "dgxh100_...", "eos_...",
//      "h200_...") the DGX of their device;
//   2. any other system: a cluster synthesized from the device and GPUs per node, the GPUs wired as the device and the
//      interconnect text say: SXM parts on NVLink (NVSwitch with more than 4 GPUs, every pair linked directly with 4
//      or fewer, as HGX boards are), PCIe parts on PCIe switches (four GPUs per switch, two for four or fewer), and
//      pairs on NVLink bridges where the text names NVLink or a bridge and the device has a bridge rate; the host and
//      its NICs as stated assumptions (one 100 Gbit/s NIC per four GPUs, within 10-400 Gbit/s: single-node runs do
//      not cross it).
//
// Every reading becomes a note (MeasuredRun::notes), so that validate and calibrate say which cluster each run ran
// on and what was assumed; a run whose device is not in the catalogue is an InputError naming its "device".
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/json_reader.hpp"

namespace scaletwin::calibrate {

struct ResolvedCluster {
  std::string name;          // a built-in cluster, or the synthesized cluster's name ("A100-PCIe-80GB x8, PCIe")
  std::optional<Json> spec;  // the synthesized cluster file's JSON (scaletwin-cluster/1); none for a built-in
  std::string note;          // how the run's fields were read
};

// The cluster of a run object without "cluster" (`o` is the run, for errors at its fields).
ResolvedCluster resolve_system(const JsonObject& o);

}  // namespace scaletwin::calibrate
