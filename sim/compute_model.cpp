// Roofline compute model with per-layer-class efficiencies (see compute_model.hpp).
#include "sim/compute_model.hpp"

#include <algorithm>
#include <map>

namespace scaletwin::sim {

plan::Precision effective_precision(const topology::DeviceType& d, const Arithmetic& a) {
  if (a.precision == plan::Precision::kFp32 && a.fp32_as_tf32 && d.peak_tf32 > 0.0) return plan::Precision::kTf32;
  return a.precision;
}

double peak_flops_for(const topology::DeviceType& d, plan::Precision p) {
  switch (p) {
    case plan::Precision::kFp32: return d.peak_flops;
    case plan::Precision::kTf32: return d.peak_tf32;
    case plan::Precision::kBf16: return d.peak_bf16;
    case plan::Precision::kFp16: return d.peak_flops_half;
  }
  return 0.0;
}

Processor device_processor(const topology::DeviceType& d, const Arithmetic& a) {
  Processor p{d.name, peak_flops_for(d, effective_precision(d, a)), d.memory_bandwidth_Bps, false};
  p.family = d.family;
  p.precision = effective_precision(d, a);
  p.vector_flops = d.peak_flops;
  p.l2_bytes = d.l2_bytes;
  return p;
}

Processor cpu_processor(const topology::HostCpu& c) {
  return Processor{"cpu", c.peak_flops, c.memory_bandwidth_Bps, true};
}

Processor endpoint_processor(const plan::Endpoint& ep, const topology::Cluster& cluster, const Arithmetic& a) {
  const auto& node = cluster.spec().node;
  return ep.device >= 0 ? device_processor(node.device, a) : cpu_processor(node.cpu);
}

void note_co_runners(std::vector<Processor>& per_endpoint, const plan::IterationPlan& plan) {
  const auto busy = [&](size_t e) {
    return plan.endpoints[e].kind == plan::EndpointKind::kWorker && plan.endpoints[e].device >= 0;
  };
  const auto host_server = [&](size_t e) {
    return plan.endpoints[e].kind == plan::EndpointKind::kServer && plan.endpoints[e].device < 0;
  };
  std::map<int, int> per_node, servers_on_node;
  for (size_t e = 0; e < plan.endpoints.size(); ++e) {
    if (busy(e)) ++per_node[plan.endpoints[e].node];
    if (host_server(e)) ++servers_on_node[plan.endpoints[e].node];
  }
  for (size_t e = 0; e < plan.endpoints.size() && e < per_endpoint.size(); ++e) {
    per_endpoint[e].co_runners = busy(e) ? per_node[plan.endpoints[e].node] - 1 : 0;
    per_endpoint[e].sharing_servers = host_server(e) ? servers_on_node[plan.endpoints[e].node] : 1;
  }
}

void note_upload_links(std::vector<Processor>& per_endpoint, const plan::IterationPlan& plan,
                       const topology::Cluster& cluster) {
  std::vector<std::vector<int>> route_of(plan.endpoints.size());  // the edges of each device worker's upload
  std::map<int, int> crossing;                                    // edge -> device workers whose upload crosses it
  for (size_t e = 0; e < plan.endpoints.size() && e < per_endpoint.size(); ++e) {
    const plan::Endpoint& ep = plan.endpoints[e];
    if (ep.kind != plan::EndpointKind::kWorker || ep.device < 0) continue;
    route_of[e] = cluster.route(cluster.cpu_vertex(ep.node), cluster.device_vertex(ep.node, ep.device)).edges;
    for (int edge : route_of[e]) ++crossing[edge];
  }
  for (size_t e = 0; e < route_of.size(); ++e) {
    double share = 0.0;
    for (int edge : route_of[e]) {
      const double b = cluster.edges().at(static_cast<size_t>(edge)).link.bandwidth_Bps / crossing[edge];
      share = share > 0.0 ? std::min(share, b) : b;
    }
    per_endpoint[e].upload_Bps = share;
  }
}

double ComputeModel::op_time_s(const plan::ComputeOp& op, const Processor& p) const {
  return op_time_s(op, p, calibration_.device(p.name, p.family));
}

double ComputeModel::op_time_s(const plan::ComputeOp& op, const Processor& p, const DeviceEfficiency& eff) const {
  return op_parts(op, p, eff).total_s;
}

OpParts ComputeModel::op_parts(const plan::ComputeOp& op, const Processor& p, const DeviceEfficiency& eff) const {
  OpParts out;
  const double peak = cuda_core_op(op) && p.vector_flops > 0.0 ? p.vector_flops : p.peak_flops;
  if (op.flops > 0.0 && peak > 0.0) out.math_s = op.flops / (peak * eff.for_op(op, p.precision));
  double t = out.math_s;
  if (op.bytes > 0.0 && p.memory_bandwidth_Bps > 0.0) {
    const bool cached = eff.l2_gain > 0.0 && op.tensor_bytes > 0.0 && op.tensor_bytes <= p.l2_bytes;
    out.memory_s = op.bytes / (p.memory_bandwidth_Bps * eff.memory * (cached ? 1.0 + eff.l2_gain : 1.0));
    // A GPU's convolution or GEMM streams its operands through DRAM (a K80's L2 holds 1.5 MB) and does not hide
    // that traffic behind its arithmetic: the two add (Paleo's read + compute + write). On a host CPU the
    // operands of a layer sit in its caches, and the roofline's larger term bounds the op.
    t = t > 0.0 && !p.is_cpu && op.layer_class != models::LayerClass::kMemory ? t + out.memory_s
                                                                               : std::max(t, out.memory_s);
  }
  const bool upload = op.phase == plan::Phase::kData && real_data_;
  if (upload && p.upload_Bps > 0.0) t = std::max(t, op.bytes / p.upload_Bps);  // the batch over PCIe
  out.overhead_s = eff.op_overhead_s * op.kernels + eff.dispatch_s;  // the framework's dispatch is not overlapped
  t += out.overhead_s;
  if (upload) t += static_cast<double>(op.samples) * calibration_.input_cost_per_image_s;
  // A server's cost per byte of gradient it applies is its host threads' (calibration.hpp); on a device the
  // roofline above is the whole of it.
  if (op.phase == plan::Phase::kServerUpdate && p.is_cpu) {
    t += op.bytes / plan::kUpdateTrafficPerGradientByte * calibration_.ps_cost_per_byte_s;
    t *= p.sharing_servers;  // the node's cores and memory, shared with the servers updating beside it
  }
  out.total_s = t * (1.0 + eff.shared_node_slowdown * p.co_runners);
  return out;
}

double ComputeModel::reduce_time_s(double bytes, const Processor& p, bool server) const {
  const DeviceEfficiency& eff = calibration_.device(p.name, p.family);
  double t = p.memory_bandwidth_Bps > 0.0 ? 3.0 * bytes / (p.memory_bandwidth_Bps * eff.memory) : 0.0;
  if (server && p.is_cpu) t = (t + bytes * calibration_.ps_cost_per_byte_s) * p.sharing_servers;
  return t;
}

double ComputeModel::copy_time_s(double bytes, const Processor& p) const {
  const DeviceEfficiency& eff = calibration_.device(p.name, p.family);
  return p.memory_bandwidth_Bps > 0.0 ? 2.0 * bytes / (p.memory_bandwidth_Bps * eff.memory) : 0.0;
}

}  // namespace scaletwin::sim
