// The device catalogue (see devices.hpp): reading device files strictly, and finding entries by name.
#include "topology/devices.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <filesystem>
#include <map>

#include "core/error.hpp"
#include "core/units.hpp"
#include "topology/builtin_devices.hpp"

namespace scaletwin::topology {

namespace {

constexpr const char* kFormat = "scaletwin-device/1";
const std::vector<std::string> kFamilies = {"kepler", "volta", "ampere", "ada", "hopper"};

void allow_docs(const JsonObject& o) {
  o.ignore("comment");
  o.ignore("source");
  o.ignore("assumption");
}

// The fields a variant may replace, read into `d` where present.
void read_figures(const JsonObject& o, DeviceType& d) {
  if (o.has("peak")) {
    const JsonObject peak = o.get_object("peak");
    allow_docs(peak);
    const auto rate = [&peak](const char* key, double fallback) {
      return peak.get_quantity(key, Quantity::kFlopsPerSec, fallback);
    };
    d.peak_flops = rate("fp32", d.peak_flops);
    d.peak_tf32 = rate("tf32", d.peak_tf32);
    d.peak_flops_half = rate("fp16", d.peak_flops_half);
    d.peak_bf16 = rate("bf16", d.peak_bf16);
    d.peak_fp8 = rate("fp8", d.peak_fp8);
    peak.finish();
  }
  if (o.has("memory")) d.memory_bytes = o.get_quantity("memory", Quantity::kBytes);
  if (o.has("memory_bandwidth"))
    d.memory_bandwidth_Bps = o.get_quantity("memory_bandwidth", Quantity::kBandwidthBytesPerSec);
  if (o.has("nvlink")) d.nvlink_Bps = o.get_quantity("nvlink", Quantity::kBandwidthBytesPerSec);
  if (o.has("host_link")) d.host_link_Bps = o.get_quantity("host_link", Quantity::kBandwidthBytesPerSec);
  if (o.has("power_w")) d.power_w = o.get_number("power_w", std::nullopt, 1.0, 1e5);
}

// Lower case without spaces, '-' and '_': how names are compared.
std::string key_of(const std::string& s) {
  std::string out;
  for (char c : s)
    if (c != ' ' && c != '-' && c != '_') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Every spelling of every catalogue entry (base name, name, aliases, as key_of gives them) → the entry. Built once.
const std::map<std::string, detail::BuiltinDeviceText>& spellings() {
  static const std::map<std::string, detail::BuiltinDeviceText> table = [] {
    std::map<std::string, detail::BuiltinDeviceText> t;
    for (const auto& entry : detail::builtin_device_texts()) {
      t.emplace(key_of(std::string(entry.name)), entry);
      const Json j = parse_json_text(std::string(entry.text), "devices/" + std::string(entry.name) + ".json");
      if (j.contains("name") && j["name"].is_string()) t.emplace(key_of(j["name"].get<std::string>()), entry);
      if (j.contains("aliases") && j["aliases"].is_array())
        for (const Json& a : j["aliases"])
          if (a.is_string()) t.emplace(key_of(a.get<std::string>()), entry);
    }
    return t;
  }();
  return table;
}

// The catalogue entry whose base name, name or alias a spelling matches (without its variant).
std::optional<detail::BuiltinDeviceText> find_entry(const std::string& spelling) {
  const auto it = spellings().find(key_of(spelling));
  return it == spellings().end() ? std::nullopt : std::optional(it->second);
}

}  // namespace

DeviceType parse_device_file(const Json& json, const std::string& origin, const std::string& variant) {
  JsonObject o = JsonObject::root(json, origin);
  allow_docs(o);
  if (o.get_string("format", kFormat) != kFormat)
    o.fail("format", fmt::format("\"{}\" (got \"{}\")", kFormat, o.get_string("format")));
  DeviceType d;
  d.name = o.get_string("name");
  if (d.name.empty()) o.fail("name", "a non-empty device name");
  if (o.has("aliases")) {
    const Json& a = o.get_array("aliases");
    for (size_t i = 0; i < a.size(); ++i)
      if (!a[i].is_string()) throw InputError(origin, fmt::format("/aliases/{}", i), "a string");
  }
  d.family = o.get_enum("family", kFamilies);
  o.get_string("die", "");
  d.sms = static_cast<int>(o.get_int("sms", 0, 0, 100000));
  if (!o.has("peak")) o.fail("peak", "this required field (the device's peak rates)");
  read_figures(o, d);
  if (d.peak_flops <= 0.0) o.fail("peak", "an \"fp32\" rate (every GPU has one)");
  if (d.memory_bytes <= 0.0) o.fail("memory", "this required field (it is missing)");
  if (d.memory_bandwidth_Bps <= 0.0) o.fail("memory_bandwidth", "this required field (it is missing)");
  if (o.has("l2")) d.l2_bytes = o.get_quantity("l2", Quantity::kBytes);
  const JsonObject* chosen = nullptr;
  std::optional<JsonObject> variants;
  if (o.has("variants")) variants.emplace(o.get_object("variants"));
  if (variants) {
    for (auto it = variants->raw().begin(); it != variants->raw().end(); ++it) {
      JsonObject v = variants->get_object(it.key());
      allow_docs(v);
      DeviceType scratch = d;
      read_figures(v, scratch);  // every variant is checked, the chosen one applied
      v.finish();
      if (it.key() == variant) d = scratch, d.variant = variant;
    }
    chosen = &*variants;
  }
  if (!variant.empty() && d.variant != variant) {
    std::vector<std::string> names;
    if (chosen)
      for (auto it = chosen->raw().begin(); it != chosen->raw().end(); ++it) names.push_back(it.key());
    throw InputError(origin, "/variants",
                     fmt::format("a variant named \"{}\" (the device has {})", variant,
                                 names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", "))));
  }
  o.finish();
  return d;
}

std::vector<std::string> builtin_device_names() {
  std::vector<std::string> names;
  for (const auto& entry : detail::builtin_device_texts()) names.emplace_back(entry.name);
  return names;
}

std::string builtin_device_text(const std::string& name) {
  const auto entry = find_entry(name);
  return entry ? std::string(entry->text) : std::string();
}

std::optional<DeviceType> find_builtin_device(const std::string& spelling, const std::string& context_file,
                                              const std::string& context_path) {
  const size_t at = spelling.find('@');
  const std::string base = spelling.substr(0, at), variant = at == std::string::npos ? "" : spelling.substr(at + 1);
  const auto entry = find_entry(base);
  if (!entry) return std::nullopt;
  const std::string origin = fmt::format("devices/{}.json (built-in)", entry->name);
  try {
    return parse_device_file(parse_json_text(std::string(entry->text), origin), origin, variant);
  } catch (const InputError& e) {
    if (variant.empty() || context_file.empty()) throw;
    throw InputError(context_file, context_path, fmt::format("a device variant that exists ({})", e.what()));
  }
}

DeviceType load_device(const std::string& name_or_file, const std::string& context_file,
                       const std::string& context_path) {
  if (auto d = find_builtin_device(name_or_file, context_file, context_path)) return *d;
  std::error_code ec;
  if (name_or_file.ends_with(".json") && std::filesystem::is_regular_file(name_or_file, ec))
    return parse_device_file(load_json_file(name_or_file), name_or_file);
  throw InputError(context_file, context_path,
                   fmt::format("a device of the catalogue ({}; aliases and \"@VARIANT\" accepted) or a device file "
                               "(got \"{}\")",
                               fmt::join(builtin_device_names(), ", "), name_or_file));
}

}  // namespace scaletwin::topology
