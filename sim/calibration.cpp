// Calibration defaults, lookup and the strict JSON reader/writer (format documented in calibration.hpp).
//
// Derivation of the defaults (to be replaced by `scaletwin calibrate`):
//
// K80 (one GK210, 4.37 TFLOP/s FP32 at boost, 240 GB/s). tf_cnn_benchmarks trains ResNet-50 at 51.9 images/s,
// batch 64, synthetic data (../shared/reference/k80-train.json): 1.233 s per iteration. ResNet-50 costs about
// 8.2 GFLOP forward per image and twice that backward (input + weight gradients): 24.6 GFLOP/image, 1.57 TFLOP
// per iteration, so 1.28 TFLOP/s overall, 29% of peak. Batch norm, ReLU and additions move roughly 0.5 GB per
// image in forward + backward, 32 GB per iteration: at 60% of 240 GB/s about 0.22 s. Per-op overheads
// (~480 kernels x 20 us) add 0.01 s. That leaves ~1.0 s for the convolutions: 1.57 TFLOP / 1.0 s / 4.37 TFLOP/s
// = 0.36 conv efficiency. cuBLAS GEMMs of the FC layers run better on Kepler: 0.45. Real data costs
// 1/51.2 - 1/51.9 = 2.6e-4 s more per image (the input pipeline not hidden), hence input_cost_per_image_s.
//
// H200 SXM (67 TFLOP/s FP32 non-tensor, 4.8 TB/s). Assumption, stated because no H200 FP32 CNN figure is in the
// reference set: ResNet-50 trains at ~1,400 images/s per GPU in FP32/TF32 (NVIDIA DeepLearningExamples A100 TF32
// figures scaled by the H100/A100 ratio). 1,400 x 24.6 GFLOP = 34.4 TFLOP/s; memory-bound layers take ~0.24 of
// the time at 70% of 4.8 TB/s; the convolutions then reach 34.4 / 0.76 / 67 = 0.68 of the FP32 peak (TF32 tensor
// cores make this possible). Kernel launch overhead ~8 us.
//
// Links: SimGrid's own CM02 calibration against TCP uses a bandwidth factor of 0.92 for networks; PCIe and NVLink
// figures in the cluster files are already measured effective rates (factor 1). Per message 5 us of software.
// A CPU parameter server applies an SGD update at ~10 GB/s: 1e-10 s per byte.
#include "sim/calibration.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/files.hpp"

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

Calibration default_calibration() {
  Calibration c;
  c.devices["default"] = DeviceEfficiency{};
  c.devices["Tesla K80 (one GK210)"] = DeviceEfficiency{0.36, 0.45, 0.60, 20e-6};
  c.devices["H200 SXM"] = DeviceEfficiency{0.68, 0.70, 0.70, 8e-6};
  c.devices["cpu"] = DeviceEfficiency{0.30, 0.50, 0.50, 5e-6};
  for (LinkClass k : {LinkClass::kPcie, LinkClass::kNvlink, LinkClass::kNetwork, LinkClass::kShm})
    c.links[k] = LinkFactors{};
  c.links[LinkClass::kNetwork].bandwidth_factor = 0.92;
  c.message_overhead_s = 5e-6;
  c.ps_cost_per_byte_s = 1e-10;
  c.input_cost_per_image_s = 2.6e-4;
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

}  // namespace

Calibration parse_calibration(const Json& json, const std::string& file) {
  JsonObject root = JsonObject::root(json, file);
  if (root.get_string("format") != "scaletwin-calibration/1") root.fail("format", "\"scaletwin-calibration/1\"");
  root.ignore("comment");
  root.ignore("source");
  root.ignore("fit");  // calibrate may store fit diagnostics
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
                  {"compute_jitter", d.compute_jitter}};
  j["devices"] = devs;
  Json links = Json::object();
  for (const auto& [k, f] : c.links)
    links[link_class_name(k)] = {{"latency_factor", f.latency_factor}, {"bandwidth_factor", f.bandwidth_factor}};
  j["links"] = links;
  j["message_overhead_s"] = c.message_overhead_s;
  j["ps_cost_per_byte_s"] = c.ps_cost_per_byte_s;
  j["input_cost_per_image_s"] = c.input_cost_per_image_s;
  return j;
}

void save_calibration(const std::string& path, const Calibration& c) {
  write_file_atomic(path, calibration_to_json(c).dump(2) + "\n");
}

}  // namespace scaletwin::sim
