// The simulator's fitted parameters: compute efficiencies per device type, link factors per link class,
// per-message and parameter-server costs, and the input pipeline cost. `calibrate` fits them; `predict` reads them.
//
// File format (strict: unknown keys are errors), all times in seconds, rates in SI units:
//
//   {
//     "format": "scaletwin-calibration/1",
//     "devices": {                              // keyed by topology::DeviceType::name / HostCpu::name, or "cpu"
//       "Tesla K80 (one GK210)": {"conv": 0.36, "matmul": 0.45, "memory": 0.60, "op_overhead_s": 2e-5,
//                                 "conv_knee_flops_per_byte": 0, "matmul_knee_flops_per_byte": 0,
//                                 "model_factors": {"inception_v3": 0.8}, "shared_node_slowdown": 0.1,
//                                 "compute_jitter": 0.05}
//     },
//     "links": {                                // link classes: pcie, nvlink, network, shm
//       "pcie": {"latency_factor": 1.0, "bandwidth_factor": 0.85}
//     },
//     "message_overhead_s": 5e-6,               // software cost per message, on the sender
//     "ps_cost_per_byte_s": 1e-10,              // parameter-server processing per byte of update applied
//     "input_cost_per_image_s": 2e-4            // input pipeline per image, real data only
//   }
//
// Every key but "format" is optional; missing ones keep the defaults (default_calibration()). conv/matmul are
// fractions of the device's peak FLOP/s reached by that layer class; memory is the fraction of memory bandwidth
// reached by every layer's memory traffic (the roofline's other roof). A device type absent from "devices"
// uses the "default" entry. The knees make conv/matmul efficiency a curve over the op's arithmetic intensity
// I = flops / bytes: eff(I) = eff * I / (I + knee), so small-channel layers (1x1 convolutions, I ~ 25 FLOP/B) run
// further below the class efficiency than wide 3x3 ones (I ~ 500); knee 0 (the default) is a flat efficiency.
// model_factors multiply the conv and matmul efficiencies when that model (Model::name) runs on the device: the
// kernels a library picks per network (Winograd for 3x3 convolutions, FFT, implicit GEMM for 1x7 ones) change
// the time per FLOP in ways FLOP counts do not show. Calibration::for_model(name) applies them; whoever
// simulates a model calls it (absent models: factor 1). shared_node_slowdown: a processor whose node has k other
// busy workers computing at the same time (CPU cores sharing caches, memory bandwidth and the package's clock)
// takes (1 + shared_node_slowdown * k) times as long per op (Processor::co_runners; default 0, no slowdown).
// compute_jitter: the coefficient of variation of a worker's compute time from one iteration to the next, as the
// executor measures it (run record "compute_jitter"; calibrate copies it, it is not fitted); workers coupled by
// synchronous collectives wait for the slowest of them every iteration (sim/jitter.hpp; default 0, none).
#pragma once

#include <map>
#include <string>

#include "core/json_reader.hpp"
#include "models/model.hpp"

namespace scaletwin::sim {

struct DeviceEfficiency {
  double conv = 0.35;
  double matmul = 0.45;
  double memory = 0.60;
  double op_overhead_s = 20e-6;
  double conv_knee_flops_per_byte = 0.0;
  double matmul_knee_flops_per_byte = 0.0;
  std::map<std::string, double> model_factors = {};  // Model::name -> factor on conv and matmul efficiency
  double shared_node_slowdown = 0.0;                  // per other busy worker on the node (see above)
  double compute_jitter = 0.0;                        // CV of compute time per iteration (see above)

  double for_class(models::LayerClass c) const;
  // The efficiency of one op of class c moving `bytes` for `flops`: for_class(c) scaled by the intensity curve.
  double for_op(models::LayerClass c, double flops, double bytes) const;
};

struct LinkFactors {
  double latency_factor = 1.0;
  double bandwidth_factor = 1.0;
};

enum class LinkClass { kPcie, kNvlink, kNetwork, kShm };
const char* link_class_name(LinkClass c);
// Maps a topology edge kind ("pcie", "board", "nvlink", "nvswitch", "nic", "network", "qpi", ...) to a class.
LinkClass link_class_of(const std::string& edge_kind);

struct Calibration {
  std::map<std::string, DeviceEfficiency> devices;  // "default" always present
  std::map<LinkClass, LinkFactors> links;            // every class present
  double message_overhead_s = 0.0;
  double ps_cost_per_byte_s = 0.0;
  double input_cost_per_image_s = 0.0;

  const DeviceEfficiency& device(const std::string& device_name) const;
  const LinkFactors& link(LinkClass c) const { return links.at(c); }
  // A copy with every device's model factor for `model_name` folded into its conv and matmul efficiencies.
  Calibration for_model(const std::string& model_name) const;
};

// Defaults for K80 and H200 from published single-GPU throughput (derivation in calibration.cpp).
Calibration default_calibration();
// A calibration with no factors and no overheads: efficiency 1, factors 1, every cost 0 (for exactness tests).
Calibration ideal_calibration();

Calibration load_calibration(const std::string& path);
Calibration parse_calibration(const Json& json, const std::string& file);
Json calibration_to_json(const Calibration& c);
void save_calibration(const std::string& path, const Calibration& c);

}  // namespace scaletwin::sim
