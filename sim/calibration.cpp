// Calibration defaults, lookup and the strict JSON reader/writer (format documented in calibration.hpp).
//
// Derivation of the defaults (to be replaced by `scaletwin calibrate`):
//
// K80 (one GK210, 4.37 TFLOP/s FP32 at boost, 240 GB/s). tf_cnn_benchmarks trains ResNet-50 at 51.9 images/s, batch 64,
// synthetic data (../shared/reference/k80-train.json): 1.233 s per iteration. Its ResNet-50 (v1, the stride in a
// bottleneck's first 1x1: resnet50_v1) costs about 7.8 GFLOP forward per image and twice that backward (input + weight
// gradients): 23.1 GFLOP/image, 1.48 TFLOP per iteration, so 1.20 TFLOP/s overall, 27% of peak. Batch norm (eight
// passes over its activation), ReLU and additions, and the convolutions' own reads and writes (which a GPU's kernels do
// not hide behind their arithmetic, compute_model.hpp) take about 0.4 s per iteration at 66% of 240 GB/s. Memory
// efficiency 0.66: a GK210 copies about 160 GB/s device to device with ECC on (CUDA's bandwidthTest on K80s), of its
// 240 GB/s; fixed, not fitted (fitted, it trades off against the parallel-work curve and leaves a left-out model
// unpredictable). The device's own cost per op starts at one kernel launch, about 5 us on Kepler (CUDA launch latency),
// and is fitted (a layer-phase is several kernels, each a launch and a drain); a framework's dispatch, added to
// it, is the software stack's op_overhead_s (stacks/*.json). That leaves ~0.83 s for the convolutions' arithmetic: 1.48
// TFLOP / 0.83 s / 4.37 TFLOP/s = 0.41, 0.40 with the per-op costs and the reduction-length curve. cuBLAS GEMMs of the
// FC layers run better on Kepler: 0.45. Real data: the batch is uploaded from host memory every iteration over the
// device's PCIe route, shared by the GPUs behind the same switch (compute_model.hpp: a 512-image AlexNet batch, 308 MB,
// takes 27 ms alone on a K80 and 55 ms with its board's other GPU uploading too; the reference's real-data AlexNet runs
// lose 11-21 ms on one GPU, 11 (AWS) and 54 ms (GCE) on two, 104-127 ms on four and eight); decoding and augmentation
// run ahead on the host's threads (tf_cnn_benchmarks and MXNet prefetch), so input_cost_per_image_s, the exposed part
// of the host's pipeline, is 0: the reference's real and synthetic runs of the other models differ by -2% to +4%, noise
// either way.
//
// The reduction length at which a convolution or GEMM reaches half its class efficiency (reduction_half_length,
// calibration.hpp), derived, not fitted: a 128x128-output SGEMM tile of 256 threads on a GK210 SMX (192 FMA units)
// spends ~85 cycles per step of its reduction (16,384 multiply-adds); its fixed work is the first loads' latency
// (~600 cycles of DRAM and L2: ~7 steps) and writing its 16,384 outputs through the SMX's 32 load/store units
// (~512 cycles: ~6 steps), about 13 steps: 16 with the index set-up. Fitted instead it goes to 176 +- 73 and the
// held-out error rises to 16.4% (docs/results/k80-calibration.md); fixed at 16 it is 8.6% (0: 8.9%).
//
// Today's GPUs (Volta, Ampere, Ada, Hopper) by family: start values for calibrate, which fits them per family on
// ../shared/reference/modern (calibrations/modern.json: the values, their standard errors and how far they transfer
// are in calibrate/README.md). Tensor-core convolutions at half their precision's peak, TF32 at 0.4, FP32 CUDA-core
// convolutions at 0.7; depthwise convolutions at a few percent of the CUDA cores' peak (EfficientNet-B0 trains about
// as fast as ResNet-50 with a tenth of its FLOPs) and narrow grouped ones (ResNeXt's 4 channels per group) at a fifth;
// memory at 0.7 of its bandwidth; 8 us per kernel.
//
// Links: SimGrid's own CM02 calibration against TCP uses a bandwidth factor of 0.92 for networks; PCIe and NVLink
// figures in the cluster files are already measured effective rates (factor 1). Per message 5 us of software.
// A CPU parameter server applies an SGD update at ~10 GB/s: 1e-10 s per byte.
#include "sim/calibration.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <utility>

#include "core/error.hpp"
#include "core/files.hpp"
#include "sim/builtin_texts.hpp"
#include "sim/stacks.hpp"

namespace scaletwin::sim {

double DeviceEfficiency::for_class(models::LayerClass c) const {
  switch (c) {
    case models::LayerClass::kConv: return conv;
    case models::LayerClass::kMatmul: return matmul;
    case models::LayerClass::kMemory: return memory;
  }
  return memory;
}

double DeviceEfficiency::for_op(models::LayerClass c, double flops, double bytes) const {
  const double eff = for_class(c);
  const double knee = c == models::LayerClass::kConv     ? conv_knee_flops_per_byte
                      : c == models::LayerClass::kMatmul ? matmul_knee_flops_per_byte
                                                         : 0.0;
  if (knee <= 0.0 || bytes <= 0.0) return eff;
  const double intensity = flops / bytes;
  return eff * intensity / (intensity + knee);
}

namespace {

// Winograd's output tiles along one dimension of n outputs (the last one partly used when n is not a multiple).
double winograd_tiles(int n) { return static_cast<double>((n + kWinogradTile - 1) / kWinogradTile); }

}  // namespace

double winograd_tile_coverage(int out_h, int out_w) {
  const double computed = winograd_tiles(out_h) * winograd_tiles(out_w) * kWinogradTile * kWinogradTile;
  return static_cast<double>(out_h) * out_w / computed;
}

bool winograd_shape(const plan::ComputeOp& op) {
  return op.layer_class == models::LayerClass::kConv && op.kernel_hw == 9 && op.stride == 1;
}

double winograd_workspace_bytes(const plan::ComputeOp& op) {
  const double in = static_cast<double>(op.in_channels), out = static_cast<double>(op.out_channels);
  const double tile_values = (kWinogradTile + 2) * (kWinogradTile + 2);  // F(m x m, 3x3): (m + 2)^2 per tile
  const double tiles = winograd_tiles(op.out_h) * winograd_tiles(op.out_w);
  return 4.0 * tile_values * (tiles * static_cast<double>(op.samples) * (in + out) + in * out);
}

bool DeviceEfficiency::winograd_fits(const plan::ComputeOp& op) const {
  return workspace_limit_bytes <= 0.0 || winograd_workspace_bytes(op) <= workspace_limit_bytes;
}

bool cuda_core_op(const plan::ComputeOp& op) {
  return op.layer_class == models::LayerClass::kConv && op.channels_per_group > 0 &&
         op.channels_per_group < kTensorCoreChannels;
}

double DeviceEfficiency::for_op(const plan::ComputeOp& op, plan::Precision precision) const {
  double eff = for_op(op.layer_class, op.flops, op.bytes);
  const bool tensor = precision != plan::Precision::kFp32;
  const double base = for_class(op.layer_class);
  const auto replace = [&](double e) {
    if (e > 0.0 && base > 0.0) eff *= e / base;
  };
  if (cuda_core_op(op)) {
    replace(op.channels_per_group == 1 ? depthwise : grouped);
  } else if (tensor && op.layer_class != models::LayerClass::kMemory) {
    replace(precision == plan::Precision::kTf32 ? conv_tf32 : conv_tensor);
  }
  if (winograd_gain > 0.0 && winograd_shape(op) && winograd_fits(op)) {
    eff *= winograd_gain;
    if (op.out_h > 0 && op.out_w > 0) eff *= winograd_tile_coverage(op.out_h, op.out_w);
  }
  if (op.layer_class == models::LayerClass::kMemory || op.parallel_elements <= 0.0) return eff;  // not GEMM-like
  if (parallel_half_elements > 0.0) eff *= op.parallel_elements / (op.parallel_elements + parallel_half_elements);
  if (reduction_half_length > 0.0) {
    const double k = op.flops / (2.0 * op.parallel_elements);  // multiply-adds behind each output
    eff *= k / (k + reduction_half_length);
  }
  return eff;
}

const char* link_class_name(LinkClass c) {
  switch (c) {
    case LinkClass::kPcie: return "pcie";
    case LinkClass::kNvlink: return "nvlink";
    case LinkClass::kNetwork: return "network";
    case LinkClass::kShm: return "shm";
  }
  return "?";
}

LinkClass link_class_of(const std::string& kind) {
  if (kind == "pcie" || kind == "board") return LinkClass::kPcie;
  if (kind == "nvlink" || kind == "nvswitch") return LinkClass::kNvlink;
  if (kind == "qpi" || kind == "shm" || kind == "memory") return LinkClass::kShm;
  return LinkClass::kNetwork;  // nic, network, infiniband, ethernet, ...
}

const DeviceEfficiency& Calibration::device(const std::string& device_name) const {
  auto it = devices.find(device_name);
  if (it != devices.end()) return it->second;
  return devices.at("default");
}

std::string Calibration::device_key(const std::string& device_name, const std::string& family) const {
  if (devices.count(device_name) != 0) return device_name;
  if (!family.empty() && devices.count("family:" + family) != 0) return "family:" + family;
  return "default";
}

std::string Calibration::fit_key(const std::string& device_name, const std::string& family) const {
  const std::string key = device_key(device_name, family);
  return key == "default" ? device_name : key;
}

const DeviceEfficiency& Calibration::device(const std::string& device_name, const std::string& family) const {
  return devices.at(device_key(device_name, family));
}

Calibration Calibration::for_model(const std::string& model_name) const {
  Calibration c = *this;
  for (auto& [name, d] : c.devices) {
    const auto it = d.model_factors.find(model_name);
    if (it != d.model_factors.end()) {
      d.conv *= it->second;
      d.matmul *= it->second;
    }
    d.model_factors.clear();
  }
  return c;
}

Calibration Calibration::for_run(const std::string& model_name, const std::string& stack) const {
  Calibration c = for_model(model_name);
  const auto it = stacks.find(stack);
  if (it != stacks.end()) {
    const StackCosts& s = it->second;
    if (s.op_overhead_s)
      for (auto& [name, d] : c.devices) d.dispatch_s += *s.op_overhead_s;
    if (s.message_overhead_s) c.message_overhead_s = *s.message_overhead_s;
    if (s.network_Bps) c.network_ceiling_Bps = *s.network_Bps;
    if (s.server_update_s_per_byte) c.ps_cost_per_byte_s = *s.server_update_s_per_byte;
    if (s.conv_workspace_bytes)
      for (auto& [name, d] : c.devices) d.workspace_limit_bytes = *s.conv_workspace_bytes;
    if (s.input_cost_per_image_s) c.input_cost_per_image_s = *s.input_cost_per_image_s;
  }
  c.stacks.clear();
  return c;
}

double Calibration::link_bandwidth_Bps(const std::string& edge_kind, double wire_Bps) const {
  // NIC links and the fat tree's uplinks (sized from the NIC rate) follow an assumed NIC rate's scale.
  const double wire = edge_kind == "network" || edge_kind == "uplink" ? wire_Bps * network_wire_scale : wire_Bps;
  const double bandwidth = wire * link(link_class_of(edge_kind)).bandwidth_factor;
  return edge_kind == "network" && network_ceiling_Bps > 0.0 ? std::min(bandwidth, network_ceiling_Bps) : bandwidth;
}

Calibration default_calibration() {
  Calibration c;
  c.devices["default"] = DeviceEfficiency{};
  c.devices["Tesla K80 (one GK210)"] = DeviceEfficiency{0.40, 0.45, 0.66, 5e-6};
  c.devices["Tesla K80 (one GK210)"].reduction_half_length = 16.0;  // a GEMM tile's fixed work (above)
  // Kept by calibrate unless asked: the memory rate and K½ above, and no intensity knee (the Winograd split and
  // the parallel-work curve carry the shape dependence). Fitted on the reference they trade off against the
  // parallel-work curve (memory: Inception-v3 left out then predicted 41% fast; K½ 176 +- 73, held-out error
  // 8.6% -> 16.4%; docs/results/k80-calibration.md).
  c.devices["Tesla K80 (one GK210)"].sourced = {"memory", "reduction_half_length", "conv_knee_flops_per_byte"};
  // Today's GPUs by architecture family (a device has no entry of its own: Calibration::device takes its family's).
  // Start values for calibrate (above); the shipped calibrations/modern.json replaces them with values fitted on
  // ../shared/reference/modern.
  DeviceEfficiency family{0.70, 0.60, 0.70, 8e-6};
  family.conv_tf32 = 0.40;
  family.conv_tensor = 0.50;
  family.depthwise = 0.03;
  family.grouped = 0.20;
  family.parallel_half_elements = 3.4e4;
  family.l2_gain = 1.0;
  // Kept by calibrate unless asked: no intensity knee, no reduction-length curve and no Winograd gain (fitted on the
  // modern reference they go to their bounds without improving held-out networks: calibrate/README.md), and the
  // fully connected layers' FP32 GEMM efficiency (cuBLAS SGEMM on large matrices; a CNN's classifier is a small
  // share of its step).
  family.sourced = {"conv_knee_flops_per_byte", "reduction_half_length", "winograd_gain", "matmul"};
  for (const char* f : {"family:volta", "family:ampere", "family:ada", "family:hopper"}) c.devices[f] = family;
  c.devices["cpu"] = DeviceEfficiency{0.30, 0.50, 0.50, 5e-6};
  for (LinkClass k : {LinkClass::kPcie, LinkClass::kNvlink, LinkClass::kNetwork, LinkClass::kShm})
    c.links[k] = LinkFactors{};
  c.links[LinkClass::kNetwork].bandwidth_factor = 0.92;
  c.message_overhead_s = 5e-6;
  c.ps_cost_per_byte_s = 1e-10;
  c.input_cost_per_image_s = 0.0;  // the upload is modelled (note_upload_links); decoding keeps up (above)
  for (const StackDescription& d : builtin_stacks()) c.stacks[d.name] = d.costs();
  return c;
}

Calibration ideal_calibration() {
  Calibration c;
  c.devices["default"] = DeviceEfficiency{1.0, 1.0, 1.0, 0.0};
  for (LinkClass k : {LinkClass::kPcie, LinkClass::kNvlink, LinkClass::kNetwork, LinkClass::kShm})
    c.links[k] = LinkFactors{};
  return c;
}

namespace {

// The device fields a calibration file may name in "sourced".
const std::set<std::string> kSourceableFields = {
    "conv",         "matmul",         "memory",        "op_overhead_s",          "conv_knee_flops_per_byte",
    "matmul_knee_flops_per_byte",     "shared_node_slowdown",  "compute_jitter", "winograd_gain",
    "parallel_half_elements",         "reduction_half_length", "conv_tensor", "conv_tf32", "depthwise", "grouped",
    "l2_gain"};

DeviceEfficiency parse_device(const JsonObject& o, const DeviceEfficiency& base) {
  DeviceEfficiency d;
  d.conv = o.get_number("conv", base.conv, 1e-6, 10.0);
  d.matmul = o.get_number("matmul", base.matmul, 1e-6, 10.0);
  d.memory = o.get_number("memory", base.memory, 1e-6, 10.0);
  d.op_overhead_s = o.get_number("op_overhead_s", base.op_overhead_s, 0.0, 1.0);
  d.conv_knee_flops_per_byte = o.get_number("conv_knee_flops_per_byte", base.conv_knee_flops_per_byte, 0.0, 1e6);
  d.matmul_knee_flops_per_byte =
      o.get_number("matmul_knee_flops_per_byte", base.matmul_knee_flops_per_byte, 0.0, 1e6);
  d.model_factors = base.model_factors;
  d.shared_node_slowdown = o.get_number("shared_node_slowdown", base.shared_node_slowdown, 0.0, 100.0);
  d.compute_jitter = o.get_number("compute_jitter", base.compute_jitter, 0.0, 10.0);
  if (o.has("winograd_gain") && o.has("conv_winograd"))
    o.fail("conv_winograd", "either winograd_gain or the older conv_winograd (the 3x3 efficiency), not both");
  d.winograd_gain = o.get_number("winograd_gain", base.winograd_gain, 0.0, 100.0);
  if (o.has("conv_winograd")) {  // the 3x3 efficiency itself: the gain over conv
    const double conv_winograd = o.get_number("conv_winograd", std::nullopt, 0.0, 10.0);
    d.winograd_gain = d.conv > 0.0 ? conv_winograd / d.conv : 0.0;
  }
  d.parallel_half_elements = o.get_number("parallel_half_elements", base.parallel_half_elements, 0.0, 1e12);
  d.reduction_half_length = o.get_number("reduction_half_length", base.reduction_half_length, 0.0, 1e9);
  d.l2_gain = o.get_number("l2_gain", base.l2_gain, 0.0, 100.0);
  d.conv_tensor = o.get_number("conv_tensor", base.conv_tensor, 0.0, 10.0);
  d.conv_tf32 = o.get_number("conv_tf32", base.conv_tf32, 0.0, 10.0);
  d.depthwise = o.get_number("depthwise", base.depthwise, 0.0, 10.0);
  d.grouped = o.get_number("grouped", base.grouped, 0.0, 10.0);
  d.sourced = base.sourced;
  if (o.has("sourced")) {
    const Json& names = o.get_array("sourced");
    d.sourced.clear();
    for (size_t i = 0; i < names.size(); ++i) {
      const bool known = names[i].is_string() && kSourceableFields.count(names[i].get<std::string>()) != 0;
      if (!known)
        throw InputError(o.file(), fmt::format("{}/{}", o.path_of("sourced"), i),
                         fmt::format("the name of a device field ({})", fmt::join(kSourceableFields, ", ")));
      d.sourced.insert(names[i].get<std::string>());
    }
  }
  if (o.has("model_factors")) {
    const JsonObject m = o.get_object("model_factors");
    for (const auto& item : m.raw().items())
      d.model_factors[item.key()] = m.get_number(item.key(), std::nullopt, 1e-3, 1e3);
    m.finish();
  }
  o.finish();
  return d;
}

const std::vector<std::string> kLinkClassNames = {"pcie", "nvlink", "network", "shm"};

StackCosts parse_stack(const JsonObject& o, StackCosts s) {
  const auto read = [&](const char* key, std::optional<double>& v, double lo, double hi) {
    if (o.has(key)) v = o.get_number(key, std::nullopt, lo, hi);
  };
  read("op_overhead_s", s.op_overhead_s, 0.0, 1.0);
  read("message_overhead_s", s.message_overhead_s, 0.0, 1.0);
  read("network_Bps", s.network_Bps, 1.0, 1e15);
  read("server_update_s_per_byte", s.server_update_s_per_byte, 0.0, 1.0);
  read("conv_workspace_bytes", s.conv_workspace_bytes, 1.0, 1e15);
  read("input_cost_per_image_s", s.input_cost_per_image_s, 0.0, 10.0);
  o.finish();
  return s;
}

Json stack_to_json(const StackCosts& s) {
  Json j = Json::object();
  if (s.op_overhead_s) j["op_overhead_s"] = *s.op_overhead_s;
  if (s.message_overhead_s) j["message_overhead_s"] = *s.message_overhead_s;
  if (s.network_Bps) j["network_Bps"] = *s.network_Bps;
  if (s.server_update_s_per_byte) j["server_update_s_per_byte"] = *s.server_update_s_per_byte;
  if (s.conv_workspace_bytes) j["conv_workspace_bytes"] = *s.conv_workspace_bytes;
  if (s.input_cost_per_image_s) j["input_cost_per_image_s"] = *s.input_cost_per_image_s;
  return j;
}

// "fit": calibrate's diagnostics, for people, and the networks and the scale of the runs it fitted.
void parse_fit(const JsonObject& fit, const std::string& file, Calibration& c) {
  if (fit.has("networks")) {
    const JsonObject networks = fit.get_object("networks");
    for (const auto& item : networks.raw().items()) {
      const Json& names = networks.get_array(item.key());
      for (size_t i = 0; i < names.size(); ++i) {
        if (!names[i].is_string())
          throw InputError(file, networks.path_of(item.key()) + "/" + std::to_string(i), "a network's name");
        c.fitted_networks[item.key()].insert(names[i].get<std::string>());
      }
    }
  }
  if (fit.has("run_ids")) {
    const Json& ids = fit.get_array("run_ids");
    for (size_t i = 0; i < ids.size(); ++i) {
      if (!ids[i].is_string()) throw InputError(file, fit.path_of("run_ids") + "/" + std::to_string(i), "a run's id");
      c.fitted_runs.insert(ids[i].get<std::string>());
    }
  }
  if (fit.has("scale")) {
    const JsonObject scale = fit.get_object("scale");
    for (const auto& item : scale.raw().items()) {
      const JsonObject s(item.value(), file, scale.path_of(item.key()));
      c.fitted_scale[item.key()] = {static_cast<int>(s.get_int("nodes", std::nullopt, 1, 1 << 20)),
                                    static_cast<int>(s.get_int("gpus", std::nullopt, 1, 1 << 24))};
      s.finish();
    }
  }
  for (const auto& item : fit.raw().items()) fit.ignore(item.key());
}

}  // namespace

Calibration parse_calibration(const Json& json, const std::string& file) {
  JsonObject root = JsonObject::root(json, file);
  if (root.get_string("format") != "scaletwin-calibration/1") root.fail("format", "\"scaletwin-calibration/1\"");
  root.ignore("comment");
  root.ignore("source");
  root.ignore("provenance");
  Calibration c = default_calibration();
  if (root.has("devices")) {
    JsonObject devs = root.get_object("devices");
    for (const auto& [name, value] : devs.raw().items()) {
      devs.ignore(name);
      JsonObject d(value, file, devs.path_of(name));
      c.devices[name] = parse_device(d, c.device(name));
    }
  }
  if (root.has("links")) {
    JsonObject links = root.get_object("links");
    for (size_t i = 0; i < kLinkClassNames.size(); ++i) {
      if (!links.has(kLinkClassNames[i])) continue;
      JsonObject l = links.get_object(kLinkClassNames[i]);
      LinkFactors& f = c.links[static_cast<LinkClass>(i)];
      f.latency_factor = l.get_number("latency_factor", f.latency_factor, 0.0, 1e6);
      f.bandwidth_factor = l.get_number("bandwidth_factor", f.bandwidth_factor, 1e-6, 10.0);
      l.finish();
    }
    links.finish();
  }
  c.message_overhead_s = root.get_number("message_overhead_s", c.message_overhead_s, 0.0, 1.0);
  c.ps_cost_per_byte_s = root.get_number("ps_cost_per_byte_s", c.ps_cost_per_byte_s, 0.0, 1.0);
  c.input_cost_per_image_s = root.get_number("input_cost_per_image_s", c.input_cost_per_image_s, 0.0, 10.0);
  if (root.has("prediction_interval")) {
    const JsonObject pi = root.get_object("prediction_interval");
    c.prediction_log_sd = pi.get_number("log_sd", std::nullopt, 0.0, 10.0);
    if (pi.has("dispatch_support")) {
      const JsonObject support = pi.get_object("dispatch_support");
      for (const auto& item : support.raw().items())
        c.dispatch_support[item.key()] = support.get_number(item.key(), std::nullopt, 0.0, 1.0);
      support.finish();
    }
    if (pi.has("folds")) {
      const Json& folds = pi.get_array("folds");
      for (size_t i = 0; i < folds.size(); ++i) {
        const JsonObject f(folds[i], file, pi.path_of("folds") + "/" + std::to_string(i));
        c.cross_validation_folds.push_back({f.get_string("fold"), static_cast<int>(f.get_int("runs", 0, 0, 1 << 30)),
                                            f.get_number("mape", std::nullopt, 0.0, 1e6),
                                            f.get_number("log_sd", 0.0, 0.0, 10.0)});
        f.finish();
      }
    }
    for (const auto& item : pi.raw().items()) pi.ignore(item.key());  // how it was measured, for people
  }
  if (root.has("fit")) parse_fit(root.get_object("fit"), file, c);
  if (root.has("stacks")) {
    JsonObject stacks = root.get_object("stacks");
    for (const auto& [name, value] : stacks.raw().items()) {
      stacks.ignore(name);
      c.stacks[name] = parse_stack(JsonObject(value, file, stacks.path_of(name)), c.stacks[name]);
    }
  }
  root.finish();
  return c;
}

Calibration load_calibration(const std::string& path) { return parse_calibration(load_json_file(path), path); }

Json calibration_to_json(const Calibration& c) {
  Json j;
  j["format"] = "scaletwin-calibration/1";
  Json devs = Json::object();
  for (const auto& [name, d] : c.devices)
    devs[name] = {{"conv", d.conv},
                  {"matmul", d.matmul},
                  {"memory", d.memory},
                  {"op_overhead_s", d.op_overhead_s},
                  {"conv_knee_flops_per_byte", d.conv_knee_flops_per_byte},
                  {"matmul_knee_flops_per_byte", d.matmul_knee_flops_per_byte},
                  {"model_factors", d.model_factors},
                  {"shared_node_slowdown", d.shared_node_slowdown},
                  {"compute_jitter", d.compute_jitter},
                  {"winograd_gain", d.winograd_gain},
                  {"parallel_half_elements", d.parallel_half_elements},
                  {"reduction_half_length", d.reduction_half_length},
                  {"l2_gain", d.l2_gain},
                  {"conv_tensor", d.conv_tensor},
                  {"conv_tf32", d.conv_tf32},
                  {"depthwise", d.depthwise},
                  {"grouped", d.grouped}};
  for (const auto& [name, d] : c.devices)
    if (!d.sourced.empty()) devs[name]["sourced"] = d.sourced;
  j["devices"] = devs;
  Json links = Json::object();
  for (const auto& [k, f] : c.links)
    links[link_class_name(k)] = {{"latency_factor", f.latency_factor}, {"bandwidth_factor", f.bandwidth_factor}};
  j["links"] = links;
  j["message_overhead_s"] = c.message_overhead_s;
  j["ps_cost_per_byte_s"] = c.ps_cost_per_byte_s;
  j["input_cost_per_image_s"] = c.input_cost_per_image_s;
  Json stacks = Json::object();
  for (const auto& [name, s] : c.stacks) stacks[name] = stack_to_json(s);
  j["stacks"] = stacks;
  if (c.prediction_log_sd > 0.0) j["prediction_interval"] = {{"log_sd", c.prediction_log_sd}};
  if (!c.dispatch_support.empty()) j["prediction_interval"]["dispatch_support"] = c.dispatch_support;
  if (c.prediction_log_sd > 0.0)
    for (const Calibration::Fold& f : c.cross_validation_folds)
      j["prediction_interval"]["folds"].push_back(
          f.log_sd > 0.0 ? Json{{"fold", f.fold}, {"runs", f.runs}, {"mape", f.mape}, {"log_sd", f.log_sd}}
                         : Json{{"fold", f.fold}, {"runs", f.runs}, {"mape", f.mape}});
  return j;
}

const std::vector<ShippedCalibration>& shipped_calibrations() {
  static const std::vector<ShippedCalibration> shipped = [] {
    std::vector<ShippedCalibration> out;
    for (const auto& [name, text] : detail::builtin_calibration_texts()) {
      const std::string file = "calibrations/" + std::string(name) + ".json";
      const Json json = parse_json_text(std::string(text), file);
      ShippedCalibration s{std::string(name), parse_calibration(json, file), {}, json.value("provenance", Json::object())};
      // The device types it fitted: those with a fitted parameter ("devices/<type>/<name>" in fit.parameters). The
      // other entries of "devices" are defaults carried along (calibrate writes every device it knows), and a
      // prediction on them is not this file's: no shipped calibration fits it.
      const Json fitted = json.contains("fit") ? json.at("fit").value("parameters", Json::array()) : Json::array();
      for (const Json& p : fitted) {
        const std::string name = p.value("name", "");
        if (!name.starts_with("devices/")) continue;
        const std::string device = name.substr(8, name.find('/', 8) - 8);
        if (std::find(s.devices.begin(), s.devices.end(), device) == s.devices.end()) s.devices.push_back(device);
      }
      out.push_back(std::move(s));
    }
    return out;
  }();
  return shipped;
}

ChosenCalibration choose_calibration(const std::string& choice, const std::string& device_name,
                                     const std::string& family) {
  if (choice == "none") return {default_calibration(), "built-in defaults"};
  if (choice.empty() || choice.starts_with("shipped:")) {
    const std::string wanted = choice.empty() ? "" : choice.substr(8);
    for (const ShippedCalibration& s : shipped_calibrations()) {
      const auto fitted = [&](const std::string& key) {
        return std::find(s.devices.begin(), s.devices.end(), key) != s.devices.end();
      };
      const bool fits =
          wanted.empty() ? fitted(device_name) || (!family.empty() && fitted("family:" + family)) : s.name == wanted;
      if (fits) return {s.calibration, "calibrations/" + s.name + ".json (shipped)"};
    }
    if (!wanted.empty()) {
      std::string names;
      for (const ShippedCalibration& s : shipped_calibrations()) names += (names.empty() ? "" : ", ") + s.name;
      throw InputError("", "--calibration", fmt::format("shipped:NAME with NAME one of: {} (got \"{}\")", names, wanted));
    }
    return {default_calibration(), "built-in defaults (no shipped calibration fits " + device_name + ")"};
  }
  return {load_calibration(choice), choice};
}

void save_calibration(const std::string& path, const Calibration& c) {
  write_file_atomic(path, calibration_to_json(c).dump(2) + "\n");
}

}  // namespace scaletwin::sim
