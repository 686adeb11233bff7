// The built-in software stacks (see stacks.hpp).
#include "sim/stacks.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <utility>

#include "core/error.hpp"
#include "models/zoo.hpp"
#include "sim/builtin_texts.hpp"

namespace scaletwin::sim {

const std::vector<std::string>& stack_parameter_keys() {
  static const std::vector<std::string> keys = {"op_overhead_s", "message_overhead_s", "network_Bps",
                                                "server_update_s_per_byte", "conv_workspace_bytes",
                                                "input_cost_per_image_s"};
  return keys;
}

std::optional<double>& stack_field(StackCosts& costs, const std::string& key) {
  if (key == "op_overhead_s") return costs.op_overhead_s;
  if (key == "message_overhead_s") return costs.message_overhead_s;
  if (key == "network_Bps") return costs.network_Bps;
  if (key == "conv_workspace_bytes") return costs.conv_workspace_bytes;
  if (key == "input_cost_per_image_s") return costs.input_cost_per_image_s;
  ST_ASSERT(key == "server_update_s_per_byte", "unknown stack parameter " + key);
  return costs.server_update_s_per_byte;
}

StackCosts StackDescription::costs() const {
  StackCosts c;
  for (const StackParameter& p : parameters) stack_field(c, p.key) = p.value;
  return c;
}

const StackParameter& StackDescription::parameter(const std::string& key) const {
  for (const StackParameter& p : parameters)
    if (p.key == key) return p;
  ST_ASSERT(false, "stack " + name + " has no parameter " + key);
  return parameters.front();
}

std::string StackDescription::network(const std::string& model) const {
  const auto it = models.find(model);
  return it != models.end() ? it->second : model;
}

namespace {

// A stated yes or no with its reason: {"value": true, "source": "..."} at root[key].
bool sourced_bool(const JsonObject& root, const std::string& key, const std::string& why) {
  const JsonObject o = root.get_object(key);
  const bool value = o.get_bool("value");
  if (o.get_string("source", "").empty()) o.fail("source", why);
  o.finish();
  return value;
}

// What the framework does where a parameter-server scheme is silent (stacks.hpp: ps_local_aggregation, ps_tensors,
// ps_servers_per_node, ps_device_servers_per_gpu).
void parse_ps_defaults(const JsonObject& root, StackDescription& d) {
  d.ps_local_aggregation = sourced_bool(
      root, "ps_local_aggregation", "why the framework does or does not sum a node's gradients before they leave it");
  if (root.has("ps_tensors")) {
    const JsonObject o = root.get_object("ps_tensors");
    d.ps_tensors = plan::tensor_placement_named(o.get_enum("value", plan::tensor_placement_names()));
    if (o.has("device"))
      d.ps_tensors_on_devices = plan::tensor_placement_named(o.get_enum("device", plan::tensor_placement_names()));
    if (o.get_string("source", "").empty()) o.fail("source", "how the framework places its tensors on the servers");
    o.finish();
  }
  if (root.has("ps_servers_per_node"))
    d.ps_servers_per_node = sourced_bool(
        root, "ps_servers_per_node", "why the framework's launcher does or does not start a server per worker node");
  if (root.has("ps_device_servers_per_gpu"))
    d.ps_device_servers_per_gpu = sourced_bool(
        root, "ps_device_servers_per_gpu", "why the framework does or does not spread its parameters over every GPU");
}

// "kernels": the framework's kernels and its rules (stacks.hpp).
void parse_kernels(const JsonObject& root, StackDescription& d) {
  if (!root.has("kernels")) return;
  const JsonObject o = root.get_object("kernels");
  const JsonObject v = o.get_object("value");
  d.kernels.fuse_bn_relu = v.get_bool("fuse_bn_relu");
  d.kernels.fuse_bn_add_relu = v.get_bool("fuse_bn_add_relu");
  d.kernels.nchw_transposes = v.get_bool("nchw_transposes");
  d.kernels.prefetch_input = v.get_bool("prefetch_input", false);
  v.finish();
  if (o.get_string("source", "").empty()) o.fail("source", "how the framework runs its kernels");
  if (o.has("rules")) {
    const Json& rules = o.get_array("rules");
    for (size_t i = 0; i < rules.size(); ++i) {
      const JsonObject r(rules[i], o.file(), fmt::format("{}/{}", o.path_of("rules"), i));
      StackDescription::KernelRule k;
      k.version_before = r.get_string("version_before", "");
      k.version_from = r.get_string("version_from", "");
      if (r.has("xla")) k.xla = r.get_bool("xla");
      for (auto [key, field] : {std::pair{"fuse_bn_relu", &StackDescription::KernelRule::fuse_bn_relu},
                                std::pair{"fuse_bn_add_relu", &StackDescription::KernelRule::fuse_bn_add_relu},
                                std::pair{"nchw_transposes", &StackDescription::KernelRule::nchw_transposes},
                                std::pair{"prefetch_input", &StackDescription::KernelRule::prefetch_input}})
        if (r.has(key)) k.*field = r.get_bool(key);
      if (r.get_string("source", "").empty()) r.fail("source", "where the rule comes from");
      r.finish();
      d.kernel_rules.push_back(k);
    }
  }
  o.finish();
}

}  // namespace

plan::Kernels StackDescription::kernels_for(const std::string& version, bool xla) const {
  plan::Kernels k = kernels;
  for (const KernelRule& r : kernel_rules) {
    if (!r.version_before.empty() && (version.empty() || compare_numbers_or_text(version, r.version_before) >= 0))
      continue;
    if (!r.version_from.empty() && (version.empty() || compare_numbers_or_text(version, r.version_from) < 0)) continue;
    if (r.xla && *r.xla != xla) continue;
    if (r.fuse_bn_relu) k.fuse_bn_relu = *r.fuse_bn_relu;
    if (r.fuse_bn_add_relu) k.fuse_bn_add_relu = *r.fuse_bn_add_relu;
    if (r.nchw_transposes) k.nchw_transposes = *r.nchw_transposes;
    if (r.prefetch_input) k.prefetch_input = *r.prefetch_input;
  }
  k.source = fmt::format("stack {}{}{}", name, version.empty() ? "" : ", release " + version, xla ? ", XLA" : "");
  return k;
}

StackDescription parse_stack_description(const Json& json, const std::string& file) {
  const JsonObject root = JsonObject::root(json, file);
  if (root.get_string("format") != "scaletwin-stack/1") root.fail("format", "\"scaletwin-stack/1\"");
  root.ignore("source");
  root.ignore("comment");
  StackDescription d;
  d.name = root.get_string("name");
  d.description = root.get_string("description", "");
  d.link_factors = sourced_bool(root, "link_factors", "why the stack's runs do or do not fit link factors");
  if (root.has("fp32_as_tf32"))
    d.fp32_as_tf32 = sourced_bool(root, "fp32_as_tf32", "whether the framework lets cuDNN and cuBLAS run fp32 as TF32");
  parse_ps_defaults(root, d);
  parse_kernels(root, d);
  const JsonObject params = root.get_object("parameters");
  for (const std::string& key : stack_parameter_keys()) {
    if (!params.has(key)) params.fail(key, "the stack's " + key + " (a value, or null for none)");
    const JsonObject p = params.get_object(key);
    StackParameter sp;
    sp.key = key;
    sp.lower = p.get_number("lower", std::nullopt, 0.0, 1e15);
    sp.upper = p.get_number("upper", std::nullopt, 0.0, 1e15);
    sp.fit = p.get_bool("fit", false);
    // A fitted parameter is searched on a log scale: its lower bound is above 0. A fixed one may be 0 (none).
    if (!(sp.lower >= 0.0 && sp.upper > sp.lower)) p.fail("upper", "bounds with 0 <= lower < upper");
    if (sp.fit && sp.lower <= 0.0) p.fail("lower", "a lower bound above 0 for a fitted parameter");
    if (!p.raw().contains("value")) p.fail("value", "a number, or null for none");
    if (p.raw().at("value").is_null())
      p.ignore("value");
    else
      sp.value = p.get_number("value", std::nullopt, sp.lower, sp.upper);
    if (sp.fit && !sp.value) p.fail("value", "a start value for a fitted parameter");
    sp.source = p.get_string("source", p.get_string("assumption", ""));
    p.ignore("source");
    p.ignore("assumption");
    if (sp.source.empty()) p.fail("source", "where the value comes from (\"source\" or \"assumption\")");
    p.finish();
    d.parameters.push_back(std::move(sp));
  }
  params.finish();
  if (root.has("models")) {
    const JsonObject networks = root.get_object("models");
    for (const auto& item : networks.raw().items()) {
      const std::string& name = item.key();
      const JsonObject m = networks.get_object(name);
      if (!models::is_builtin_model(name)) networks.fail(name, "a built-in model name as a key");
      const std::string network = m.get_string("model");
      if (!models::is_builtin_model(network)) m.fail("model", "a built-in model name");
      if (m.get_string("source", "").empty()) m.fail("source", "where the framework's network is defined");
      m.finish();
      d.models[name] = network;
    }
  }
  root.finish();
  return d;
}

const std::vector<StackDescription>& builtin_stacks() {
  static const std::vector<StackDescription> stacks = [] {
    std::vector<StackDescription> out;
    for (const auto& [name, text] : detail::builtin_stack_texts()) {
      const std::string file = "stacks/" + std::string(name) + ".json";
      out.push_back(parse_stack_description(parse_json_text(std::string(text), file), file));
      ST_ASSERT(out.back().name == std::string(name), file + ": name differs from the file name");
    }
    return out;
  }();
  return stacks;
}

std::vector<std::string> builtin_stack_names() {
  std::vector<std::string> names;
  for (const StackDescription& d : builtin_stacks()) names.push_back(d.name);
  return names;
}

const StackDescription& find_stack(const std::string& name, const std::string& file, const std::string& path) {
  for (const StackDescription& d : builtin_stacks())
    if (d.name == name) return d;
  throw InputError(file, path,
                   fmt::format("a software stack: {} (got \"{}\")", fmt::join(builtin_stack_names(), ", "), name));
}

void apply_stack_kernels(plan::Scenario& scenario) {
  if (scenario.framework.empty()) return;
  scenario.kernels = find_stack(scenario.framework, scenario.file, scenario.path_of("/framework"))
                         .kernels_for(scenario.framework_version, scenario.xla);
}

Arithmetic scenario_arithmetic(const plan::Scenario& scenario) {
  Arithmetic a;
  a.precision = scenario.training.precision;
  if (!scenario.framework.empty()) a.fp32_as_tf32 = find_stack(scenario.framework).fp32_as_tf32;
  return a;
}

bool apply_stack_defaults(plan::Scenario& scenario) {
  apply_stack_kernels(scenario);
  plan::PsScheme& ps = scenario.scheme.ps;
  if (scenario.framework.empty() || !scenario.scheme.has_servers()) return false;
  const StackDescription& stack = find_stack(scenario.framework, scenario.file, scenario.path_of("/framework"));
  bool changed = false;
  const bool on_devices = ps.placement == plan::PsPlacement::kDevice;
  const bool over_network =
      ps.placement == plan::PsPlacement::kColocated || ps.placement == plan::PsPlacement::kDedicated;
  const plan::TensorPlacement tensors = on_devices ? stack.ps_tensors_on_devices.value_or(stack.ps_tensors)
                                                   : stack.ps_tensors;
  if (!ps.tensors_stated && ps.tensors != tensors) {
    ps.tensors = tensors;
    ps.tensors_by = scenario.framework;
    changed = true;
  }
  // How many servers the framework starts where the scheme does not say: one per GPU holding them, one per node.
  std::optional<plan::PsScheme::Per> servers;
  if (on_devices && stack.ps_device_servers_per_gpu) servers = plan::PsScheme::Per::kGpu;
  if (over_network && stack.ps_servers_per_node) servers = plan::PsScheme::Per::kNode;
  if (servers && !ps.servers_stated && ps.servers_per != *servers) {
    ps.servers_per = *servers;
    ps.servers_by = scenario.framework;
    changed = true;
  }
  if (over_network && !ps.local_aggregation_stated && !ps.local_aggregation && stack.ps_local_aggregation) {
    ps.local_aggregation = true;
    ps.local_aggregation_by = scenario.framework;
    changed = true;
  }
  return changed;
}

std::string run_stack(const plan::Scenario& scenario, const topology::Cluster& cluster) {
  if (!scenario.framework.empty()) return scenario.framework;
  if (cluster.spec().node.device_prefix != "gpu") return "mpi";
  return scenario.scheme.has_servers() ? "tensorflow" : "nccl";
}

}  // namespace scaletwin::sim
