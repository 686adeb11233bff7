// The fit's surrogate of the simulator (see surrogate.hpp).
#include "calibrate/surrogate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <thread>
#include <tuple>

#include "calibrate/simulate.hpp"
#include "core/error.hpp"
#include "sim/stacks.hpp"

namespace scaletwin::calibrate {

namespace {

// The compute ops of a program, grouped by everything sim::ComputeModel::op_time_s reads (not the layer index),
// each with how many times it occurs, in order of first occurrence.
std::vector<std::pair<plan::ComputeOp, int>> distinct_ops(const plan::EndpointProgram& program) {
  using Key = std::tuple<int, int, double, double, int64_t, int, int, double, int, int, int64_t, int, double>;
  std::map<Key, size_t> index;
  std::vector<std::pair<plan::ComputeOp, int>> out;
  for (const plan::Item& item : program.items) {
    if (item.kind != plan::Item::Kind::kCompute) continue;
    const plan::ComputeOp& op = item.compute;
    const Key key{static_cast<int>(op.phase), static_cast<int>(op.layer_class), op.flops, op.bytes, op.samples,
                  op.kernel_hw, op.stride, op.parallel_elements, op.out_h, op.out_w, op.channels_per_group, op.kernels,
                  op.tensor_bytes};
    const auto [it, fresh] = index.emplace(key, out.size());
    if (fresh)
      out.emplace_back(op, 1);
    else
      ++out[it->second].second;
  }
  return out;
}

// Adds what one plan exercises: the device type, its 3x3 stride-1 convolutions, the link classes its collectives
// cross, PS and collectives, per stack. A stack with fitted costs (a framework: stacks/*.json) carries everything
// that is not the wire, so its runs leave the link factors at their measured values.
// The units `op` runs on, at a processor's effective precision (Exercised::device_units).
const char* unit_of(const plan::ComputeOp& op, plan::Precision precision) {
  if (sim::cuda_core_op(op)) return op.channels_per_group == 1 ? "depthwise" : "grouped";
  if (precision == plan::Precision::kFp32) return "fp32";
  return precision == plan::Precision::kTf32 ? "tf32" : "tensor";
}

void note_exercised(const plan::IterationPlan& plan, const std::string& device, const std::string& stack_name,
                    const topology::Cluster& cluster, plan::Precision precision, Exercised& what) {
  what.devices.insert(device);
  for (const plan::EndpointProgram& prog : plan.programs)
    for (const plan::Item& item : prog.items)
      if (item.kind == plan::Item::Kind::kCompute && item.compute.layer_class != models::LayerClass::kMemory &&
          item.compute.flops > 0.0)
        what.device_units[device].insert(unit_of(item.compute, precision));
  for (const plan::EndpointProgram& prog : plan.programs)
    for (const plan::Item& item : prog.items)
      if (item.kind == plan::Item::Kind::kCompute && item.compute.tensor_bytes > 0.0 &&
          item.compute.tensor_bytes <= cluster.spec().node.device.l2_bytes)
        what.l2_devices.insert(device);
  if (plan.workers > 1 && plan.sync != plan::SyncKind::kAsync) what.synchronous_devices.insert(device);
  for (const plan::EndpointProgram& prog : plan.programs)
    for (const plan::Item& item : prog.items)
      if (item.kind == plan::Item::Kind::kCompute && sim::winograd_shape(item.compute))
        what.winograd_devices.insert(device);
  const sim::StackDescription& stack = sim::find_stack(stack_name);
  Exercised::StackUse& use = what.stacks[stack_name];
  std::set<std::pair<int, int>> pairs;
  const auto vertex = [&](int e) {
    const plan::Endpoint& ep = plan.endpoints.at(static_cast<size_t>(e));
    return ep.device >= 0 ? cluster.device_vertex(ep.node, ep.device) : cluster.cpu_vertex(ep.node);
  };
  for (const plan::CollectiveInstance& ci : plan.collectives) {
    const plan::Schedule& s = plan.schedules.at(static_cast<size_t>(ci.schedule));
    for (int r = 0; r < s.ranks; ++r)
      for (const plan::Step& st : s.programs[static_cast<size_t>(r)].steps)
        if (st.op == plan::OpKind::kSend)
          pairs.insert({vertex(ci.participants[static_cast<size_t>(r)]),
                        vertex(ci.participants[static_cast<size_t>(st.peer)])});
    const bool ps = ci.purpose == plan::CollectivePurpose::kPsPushPull;
    use.parameter_server = use.parameter_server || ps;
    what.parameter_server = what.parameter_server || (ps && !stack.parameter("server_update_s_per_byte").value);
  }
  use.collectives = use.collectives || !pairs.empty();
  what.collectives = what.collectives || (!pairs.empty() && !stack.parameter("message_overhead_s").value);
  for (const auto& [a, b] : pairs)
    for (int e : cluster.route(a, b).edges) {
      const std::string& kind = cluster.edges().at(static_cast<size_t>(e)).kind;
      use.network = use.network || kind == "network";
      if (stack.link_factors) what.link_classes.insert(sim::link_class_of(kind));
    }
}

}  // namespace

Surrogate::Surrogate(const std::vector<MeasuredRun>& runs, const sim::Calibration& start) {
  std::map<std::string, size_t> index;
  for (const MeasuredRun& r : runs) {
    const std::string key = run_configuration(r).dump();
    auto it = index.find(key);
    if (it == index.end()) {
      Config k;
      k.scenario = scenario_of(r);
      k.real = r.data == plan::Data::kReal;
      k.gpus = r.gpus();
      const plan::Point point = plan::prepare(k.scenario, k.gpus);
      const models::Model& model = point.model;
      const topology::Cluster& cluster = point.cluster;
      const plan::IterationPlan& plan = point.plan;
      // The calibration entry the device's values come from (its own, else its family's): what the fit moves.
      const std::string device = start.fit_key(cluster.spec().node.device.name, cluster.spec().node.device.family);
      k.worker_ops.resize(static_cast<size_t>(plan.workers));
      k.worker_processors.resize(static_cast<size_t>(plan.workers));
      k.processor = sim::device_processor(cluster.spec().node.device, sim::scenario_arithmetic(k.scenario));
      std::vector<sim::Processor> per_endpoint(plan.endpoints.size(), k.processor);
      sim::note_co_runners(per_endpoint, plan);
      sim::note_upload_links(per_endpoint, plan, cluster);
      for (size_t e = 0; e < plan.endpoints.size(); ++e) {
        const plan::Endpoint& ep = plan.endpoints[e];
        if (ep.kind != plan::EndpointKind::kWorker) continue;
        k.worker_processors.at(static_cast<size_t>(ep.worker_index)) = per_endpoint[e];
        if (per_endpoint[e].co_runners > 0) exercised_.shared_devices.insert(device);
        k.worker_ops.at(static_cast<size_t>(ep.worker_index)) = distinct_ops(plan.program(static_cast<int>(e)));
      }
      k.model_name = model.name;
      k.stack = sim::run_stack(k.scenario, cluster);
      exercised_.device_models.insert({device, model.name});
      exercised_.device_batches[device].insert(r.batch_per_gpu);
      if (cluster.spec().node.device_prefix == "gpu") {
        double& peak = exercised_.gpu_peak_flops[device];
        peak = std::max(peak, cluster.spec().node.device.peak_flops);
      }
      note_exercised(plan, device, k.stack, cluster, k.processor.precision, exercised_);
      Exercised::StackUse& use = exercised_.stacks[k.stack];
      use.nodes = std::max(use.nodes, r.nodes);
      use.gpus = std::max(use.gpus, r.nodes * r.gpus_per_node);
      it = index.emplace(key, configs_.size()).first;
      configs_.push_back(std::move(k));
    }
    config_of_run_.push_back(it->second);
    real_.push_back(r.data == plan::Data::kReal);
    measured_.push_back(r.images_per_sec);
    phases_.push_back(r.compute_per_iteration_s && r.data_per_iteration_s && !r.scheme.has_servers()
                          ? std::optional(std::pair(*r.compute_per_iteration_s, *r.data_per_iteration_s))
                          : std::nullopt);
    if (r.data == plan::Data::kReal) {  // a stack's own input cost, or the top-level one
      const std::string& stack = configs_[it->second].stack;
      exercised_.stacks[stack].real_data = true;
      exercised_.real_data = exercised_.real_data || !sim::find_stack(stack).parameter("input_cost_per_image_s").value;
    }
    if (r.compute_jitter)
      exercised_.measured_jitter_devices.insert(
          start.fit_key(configs_[it->second].processor.name, configs_[it->second].processor.family));
  }
}

Surrogate::ComputeSplit Surrogate::config_compute(const Config& k, const sim::Calibration& c) const {
  const sim::ComputeModel model(c.for_run(k.model_name, k.stack), k.real);
  const sim::Processor& p = k.worker_processors.at(static_cast<size_t>(k.critical));
  const sim::DeviceEfficiency& eff = model.calibration().device(p.name, p.family);  // once, not per op
  ComputeSplit t;
  for (const auto& [op, count] : k.worker_ops.at(static_cast<size_t>(k.critical))) {
    const double s = model.op_time_s(op, p, eff) * count;
    t.total_s += s;
    if (op.phase == plan::Phase::kData) t.data_s += s;
  }
  return t;
}

double Surrogate::config_compute_s(const Config& k, const sim::Calibration& c) const {
  return config_compute(k, c).total_s;
}

std::vector<double> Surrogate::phase_residuals(const sim::Calibration& c) const {
  std::vector<double> out;
  for (size_t r = 0; r < config_of_run_.size(); ++r) {
    if (!phases_[r]) continue;
    const Config& k = configs_[config_of_run_[r]];
    const ComputeSplit split = config_compute(k, c);
    const double t = measured_iteration_s(r);
    out.push_back((split.total_s - split.data_s - phases_[r]->first) / t);
    out.push_back((split.data_s - phases_[r]->second) / t);
  }
  return out;
}

void Surrogate::linearize(const sim::Calibration& c, const std::vector<Parameter>& params, int parallel) {
  constexpr double kLogStep = 0.4;  // factor 1.5: large enough to see past SimGrid's event granularity
  comm_.clear();
  comm_log0_.clear();
  for (const Parameter& p : params)
    if (p.kind == ParameterKind::kComm) {
      comm_.push_back(p);
      comm_log0_.push_back(std::log(p.get(c)));
    }
  std::vector<SimJob> jobs;
  std::vector<double> steps;
  for (const Parameter& p : comm_) {
    const double up = std::log(p.upper) - std::log(p.get(c));
    steps.push_back(up >= kLogStep ? kLogStep : -kLogStep);
  }
  // A parameter that cannot move a configuration's time (Parameter::reach, Parameter::stack; none for one GPU
  // without parameter servers, which has no collective) has a slope of 0 exactly and is not simulated for it.
  auto affects = [](const Parameter& p, const Config& k) {
    const plan::Scheme& scheme = k.scenario.scheme;
    if (k.gpus <= 1 && !scheme.has_servers()) return false;
    if (!p.stack.empty() && p.stack != k.stack) return false;
    switch (p.reach) {
      case Parameter::Reach::kMultiNode:
        return k.gpus > k.scenario.gpus_per_node ||
               (scheme.has_servers() && scheme.ps.placement == plan::PsPlacement::kDedicated);
      case Parameter::Reach::kMultiWorker: return k.gpus > 1;
      case Parameter::Reach::kCommunicating: return true;
    }
    return true;
  };
  for (const Config& k : configs_) {
    jobs.push_back(SimJob{k.scenario, k.gpus, c});
    for (size_t j = 0; j < comm_.size(); ++j) {
      if (!affects(comm_[j], k)) continue;
      sim::Calibration cj = c;
      comm_[j].set(cj, comm_[j].get(c) * std::exp(steps[j]));
      jobs.push_back(SimJob{k.scenario, k.gpus, cj});
    }
  }
  // The same iterations as validation, so that the surrogate is exact at c for what validate reports.
  const std::vector<report::PointResult> points = simulate_all(jobs, parallel, sim::RunOptions{});
  simulations_ += static_cast<int>(points.size());
  size_t at = 0;
  for (Config& k : configs_) {
    const report::PointResult& base = points[at++];
    k.critical = std::clamp(base.critical_worker, 0, static_cast<int>(k.worker_ops.size()) - 1);
    k.base_iteration_s = base.iteration_s;
    k.base_images_per_sec = base.images_per_sec;
    k.exposed_s = base.iteration_s - config_compute_s(k, c);
    k.slope_s.assign(comm_.size(), 0.0);
    for (size_t j = 0; j < comm_.size(); ++j)
      if (affects(comm_[j], k)) k.slope_s[j] = (points[at++].iteration_s - base.iteration_s) / steps[j];
  }
}

std::vector<double> Surrogate::predict(const sim::Calibration& c) const {
  std::vector<double> comm_delta;
  for (size_t j = 0; j < comm_.size(); ++j) comm_delta.push_back(std::log(comm_[j].get(c)) - comm_log0_[j]);
  // Every configuration's compute, in closed form: most of a fit's time, so split over two threads (the machine
  // this is built for has 2 cores; the simulations run between the fit's evaluations, not during them).
  std::vector<double> compute(configs_.size(), 0.0);
  auto part = [&](size_t first, size_t step) {
    for (size_t i = first; i < configs_.size(); i += step) compute[i] = config_compute_s(configs_[i], c);
  };
  if (configs_.size() >= 8) {
    std::thread other(part, 1, 2);
    part(0, 2);
    other.join();
  } else {
    part(0, 1);
  }
  std::vector<double> out;
  for (size_t r = 0; r < config_of_run_.size(); ++r) {
    const Config& k = configs_[config_of_run_[r]];
    ST_ASSERT(k.base_iteration_s > 0.0, "surrogate: linearize() before predict()");
    double t = compute[config_of_run_[r]];
    t += k.exposed_s;
    for (size_t j = 0; j < comm_delta.size(); ++j) t += k.slope_s[j] * comm_delta[j];
    t = std::max(t, 1e-3 * k.base_iteration_s);
    out.push_back(k.base_images_per_sec * k.base_iteration_s / t);
  }
  return out;
}

double Surrogate::measured_iteration_s(size_t r) const {
  const Config& k = configs_[config_of_run_[r]];
  return k.base_images_per_sec * k.base_iteration_s / measured_[r];
}

double Surrogate::compute_s(size_t r, const sim::Calibration& c) const {
  return config_compute_s(configs_[config_of_run_[r]], c);
}

double Surrogate::exposed_s(size_t r) const { return configs_[config_of_run_[r]].exposed_s; }

}  // namespace scaletwin::calibrate
