// The device catalogue: one JSON file per GPU type in devices/ (format below), embedded at build time like the
// built-in clusters, so that cluster files name a device ("device": "A100-SXM4-80GB") instead of repeating its
// datasheet. Every figure cites where it comes from ("source"; "assumption" where none was found).
//
//   {"format": "scaletwin-device/1", "name": "A100-SXM4-80GB", "aliases": ["A100-SXM-80GB"],
//    "family": "ampere", "die": "GA100", "sms": 108,
//    "peak": {"fp32": "19.5Tf", "tf32": "156Tf", "fp16": "312Tf", "bf16": "312Tf", "fp8": ...},   dense rates
//    "memory": "80GB", "memory_bandwidth": "2039GBps", "l2": "40MB",
//    "nvlink": "300GBps" (all links, per direction), "host_link": "31.5GBps" (PCIe, per direction),
//    "power_w": 400,
//    "variants": {"500W": {"power_w": 500, "peak": {...}, "memory_bandwidth": ...}},   by power limit
//    "source": "...", "comment": "...", "assumption": "..."}
//
// A reference names a file (its base name, "A100-SXM4-80GB"), its "name", or one of its aliases, with case, spaces,
// '-' and '_' ignored ("a100 sxm4 80gb"), and may select a variant after '@' ("V100-SXM3-32GB@450W"): the variant's
// fields replace the base ones. A path to a file of this format works too. Unknown keys are errors, as everywhere.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/json_reader.hpp"
#include "topology/cluster.hpp"

namespace scaletwin::topology {

// The catalogue's file base names, sorted ("A100-PCIe-40GB", ...).
std::vector<std::string> builtin_device_names();
// The catalogue entry a spelling names (base name, name or alias, as above; "@VARIANT" allowed), nullopt if none.
// InputError naming `context_file` and `context_path` when it names an entry but a variant it lacks.
std::optional<DeviceType> find_builtin_device(const std::string& spelling, const std::string& context_file = "",
                                              const std::string& context_path = "");
// A catalogue entry or a device file's path; InputError (naming the context) when neither.
DeviceType load_device(const std::string& name_or_file, const std::string& context_file,
                       const std::string& context_path);
// Reads a device file's JSON (origin: its path, for messages), taking `variant` ("" for the base figures).
DeviceType parse_device_file(const Json& json, const std::string& origin, const std::string& variant = "");
// The text of a catalogue file ("" when there is none), for describe.
std::string builtin_device_text(const std::string& name);

}  // namespace scaletwin::topology
