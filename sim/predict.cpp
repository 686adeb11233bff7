// predict: one forked child per GPU count (see predict.hpp).
#include "sim/predict.hpp"

#include "sim/convergence.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <tuple>

#include "core/error.hpp"
#include "sim/compute_model.hpp"
#include "sim/fast/runner.hpp"
#include "sim/jitter.hpp"
#include "sim/memory_fit.hpp"
#include "sim/point_pool.hpp"
#include "sim/stacks.hpp"

namespace scaletwin::sim {

std::vector<int> sweep_of(const plan::Scenario& scenario, const std::vector<int>& requested) {
  if (!requested.empty()) return requested;
  if (!scenario.sweep_gpus.empty()) return scenario.sweep_gpus;
  const plan::Scenario& s = scenario;
  const topology::Cluster cluster = plan::load_scenario_cluster(s, 1);
  const int per_node = s.gpus_per_node > 0 ? s.gpus_per_node : cluster.devices_per_node();
  return {s.nodes * per_node};
}

namespace {

// What a point's run takes from its scenario (data, precision, what-if faults), for both fidelities.
RunOptions scenario_run_options(const plan::Scenario& scenario, const RunOptions& options) {
  RunOptions run = options;
  run.real_data = scenario.training.data == plan::Data::kReal;
  run.arithmetic = scenario_arithmetic(scenario);
  run.faults = scenario.faults;
  run.faults_file = scenario.file;
  return run;
}

// One point in this process, at message level (SimGrid: once per process) or in the fast mode, which times recipes
// (no O(GPUs²) schedules materialized).
report::PointResult simulate_in_process(const plan::Scenario& scenario, int gpus, const Calibration& calibration,
                                        const RunOptions& options, bool fast) {
  plan::LowerOptions lowering;
  lowering.materialize_schedules = !fast;
  return simulate(plan::prepare(scenario, gpus, lowering), calibration, options, fast ? Fidelity::kFast : Fidelity::kMessage);
}

// A precision the device computes in: InputError at the scenario's precision when the device has no peak for it (a
// V100 has no TF32 or BF16, an A30 no TF32 in the catalogue, a K80 no FP16). Host CPUs compute everything in fp32.
void check_device_precision(const plan::Scenario& scenario, const topology::NodeSpec& node, const Arithmetic& a) {
  if (node.device_prefix != "gpu" || a.precision == plan::Precision::kFp32) return;
  const topology::DeviceType& d = node.device;
  if (peak_flops_for(d, effective_precision(d, a)) > 0.0) return;
  std::vector<std::string> has = {"fp32"};
  for (plan::Precision p : {plan::Precision::kTf32, plan::Precision::kBf16, plan::Precision::kFp16})
    if (peak_flops_for(d, p) > 0.0) has.emplace_back(plan::precision_name(p));
  throw InputError(scenario.file, scenario.path_of("/training/precision"),
                   fmt::format("a precision {} has a peak for ({}; got {})", d.name, fmt::join(has, ", "),
                               plan::precision_name(a.precision)));
}

// Whether `fidelity` times this point in the fast mode (asynchronous plans never are).
bool runs_fast(const plan::Scenario& scenario, int gpus, Fidelity fidelity) {
  const bool fast = fidelity == Fidelity::kFast || (fidelity == Fidelity::kAuto && gpus > kAutoFastAboveGpus);
  const plan::Scheme& scheme = scenario.scheme;
  return fast && !(scheme.has_servers() && scheme.ps.mode != plan::PsMode::kSync);
}

}  // namespace

report::PointResult simulate(const plan::Point& p, const Calibration& calibration, const RunOptions& options,
                             Fidelity fidelity) {
  const bool fast = runs_fast(p.scenario, p.gpus, fidelity);
  if (!fast)
    for (const plan::Schedule& s : p.plan.schedules)
      ST_ASSERT(static_cast<int>(s.programs.size()) == s.ranks,
                "the message level simulates materialized schedules (plan::prepare's default LowerOptions)");
  // The calibration's per-model factors (fitted by calibrate) apply to this scenario's model only, its stack's
  // costs to this scenario's stack; for_run clears both, so applying it again downstream changes nothing.
  const Calibration for_model = calibration.for_run(p.model.name, run_stack(p.scenario, p.cluster));
  const RunOptions run = scenario_run_options(p.scenario, options);
  check_device_precision(p.scenario, p.cluster.spec().node, run.arithmetic);
  report::PointResult point = fast ? run_iteration_plan_fast(p.plan, p.cluster, for_model, run)
                                   : run_iteration_plan(p.plan, p.cluster, for_model, run);
  apply_compute_jitter(point, p.plan, p.cluster, for_model);
  return point;
}

report::PointResult simulate_point(const plan::Scenario& scenario, int gpus, const Calibration& calibration,
                                   const RunOptions& options) {
  return simulate_in_process(scenario, gpus, calibration, options, false);
}

report::PointResult simulate_point_forked(const plan::Scenario& scenario, int gpus, const Calibration& calibration,
                                          const RunOptions& options) {
  return simulate_points_forked({PointJob{scenario, gpus, calibration, Fidelity::kMessage}}, 1, options).front();
}

const char* fidelity_name(Fidelity f) {
  switch (f) {
    case Fidelity::kMessage: return "message";
    case Fidelity::kFast: return "fast";
    case Fidelity::kAuto: return "auto";
  }
  return "?";
}

Fidelity fidelity_from_name(const std::string& name) {
  for (Fidelity f : {Fidelity::kMessage, Fidelity::kFast, Fidelity::kAuto})
    if (name == fidelity_name(f)) return f;
  throw InputError("", "--fidelity", fmt::format("message, fast or auto (got \"{}\")", name));
}

report::PointResult simulate_point(const plan::Scenario& scenario, int gpus, const Calibration& calibration,
                                   const RunOptions& options, Fidelity fidelity) {
  return simulate_in_process(scenario, gpus, calibration, options, runs_fast(scenario, gpus, fidelity));
}

report::PointResult simulate_point_forked(const plan::Scenario& scenario, int gpus, const Calibration& calibration,
                                          const RunOptions& options, Fidelity fidelity) {
  return runs_fast(scenario, gpus, fidelity)
             ? simulate_in_process(scenario, gpus, calibration, options, true)
             : simulate_points_forked({PointJob{scenario, gpus, calibration, fidelity}}, 1, options).front();
}

WorkerStep worker_step(const plan::Scenario& scenario, const Calibration& calibration) {
  WorkerStep step{plan::prepare(scenario, 1, plan::LowerOptions{false}), "", {}};  // the compute items suffice
  step.stack = run_stack(step.point.scenario, step.point.cluster);
  step.run = calibration.for_run(step.point.model.name, step.stack);
  return step;
}

WorkspaceCap workspace_cap(const WorkerStep& step) {
  WorkspaceCap out;
  out.stack = step.stack;
  const topology::DeviceType& device = step.point.cluster.spec().node.device;
  const DeviceEfficiency& eff = step.run.device(device.name, device.family);
  out.cap_bytes = eff.workspace_limit_bytes;
  if (eff.winograd_gain <= 0.0) return out;
  for (const plan::Item& item : step.point.plan.program(0).items) {
    const plan::ComputeOp& op = item.compute;
    if (item.kind != plan::Item::Kind::kCompute || op.phase != plan::Phase::kForward || !winograd_shape(op)) continue;
    ++out.convolutions;
    if (!eff.winograd_fits(op)) ++out.over_cap;
  }
  return out;
}

WorkspaceCap workspace_cap(const plan::Scenario& scenario, const Calibration& calibration) {
  return workspace_cap(worker_step(scenario, calibration));
}

DispatchCost dispatch_cost(const WorkerStep& step) {
  DispatchCost out;
  out.stack = step.stack;
  const RunOptions run = scenario_run_options(step.point.scenario, RunOptions{});  // its data and precision
  const Processor processor = endpoint_processor(step.point.plan.endpoints.at(0), step.point.cluster,
                                                 run.arithmetic);
  const DeviceEfficiency& eff = step.run.device(processor.name, processor.family);
  if (processor.is_cpu || eff.dispatch_s <= 0.0) return out;
  out.per_op_s = eff.dispatch_s;
  DeviceEfficiency without = eff;
  without.dispatch_s = 0.0;
  const ComputeModel model(step.run, run.real_data);
  for (const plan::Item& item : step.point.plan.program(0).items) {
    if (item.kind != plan::Item::Kind::kCompute || item.compute.phase == plan::Phase::kData) continue;
    const double with_dispatch = model.op_time_s(item.compute, processor, eff);
    const double added = with_dispatch - model.op_time_s(item.compute, processor, without);
    ++out.ops;
    out.compute_s += with_dispatch;
    out.added_s += added;
  }
  return out;
}

DispatchCost dispatch_cost(const plan::Scenario& scenario, const Calibration& calibration) {
  return dispatch_cost(worker_step(scenario, calibration));
}

std::optional<report::DispatchBeyondSupport> dispatch_beyond_support(const plan::Scenario& scenario,
                                                                     const Calibration& calibration) {
  if (calibration.dispatch_support.empty()) return std::nullopt;
  return dispatch_beyond_support(dispatch_cost(scenario, calibration), scenario.batch_per_gpu, calibration);
}

std::optional<report::DispatchBeyondSupport> dispatch_beyond_support(const DispatchCost& dispatch,
                                                                     int64_t batch_per_gpu,
                                                                     const Calibration& calibration) {
  const auto support = calibration.dispatch_support.find(dispatch.stack);
  if (support == calibration.dispatch_support.end() || dispatch.compute_s <= 0.0) return std::nullopt;
  const double share = dispatch.added_s / dispatch.compute_s;
  if (share <= support->second * (1.0 + 1e-9)) return std::nullopt;  // within, or the run that set the support
  return report::DispatchBeyondSupport{dispatch.stack, batch_per_gpu, share, support->second};
}

namespace {

// unfitted_network for a network (models::Model::name) and device by name.
std::optional<report::UnfittedNetwork> unfitted_network_named(const std::string& network, const std::string& device,
                                                              const Calibration& calibration) {
  const auto fitted = calibration.fitted_networks.find(device);
  if (fitted == calibration.fitted_networks.end() || fitted->second.empty()) return std::nullopt;
  if (fitted->second.count(network) != 0) return std::nullopt;
  report::UnfittedNetwork out{network, device, {fitted->second.begin(), fitted->second.end()}};
  double squares = 0.0, runs = 0.0;
  bool spread = true;  // every left-out-network fold recorded its spread
  for (const Calibration::Fold& f : calibration.cross_validation_folds) {
    if (!f.fold.starts_with("model!=")) continue;
    out.left_out_mape_low = out.left_out_folds == 0 ? f.mape : std::min(out.left_out_mape_low, f.mape);
    out.left_out_mape_high = std::max(out.left_out_mape_high, f.mape);
    ++out.left_out_folds;
    spread = spread && f.log_sd > 0.0 && f.runs > 0;
    squares += f.runs * f.log_sd * f.log_sd;
    runs += f.runs;
  }
  const double rms = runs > 0.0 ? std::sqrt(squares / runs) : 0.0;
  if (spread && calibration.prediction_log_sd > 0.0 && rms > calibration.prediction_log_sd) out.interval_log_sd = rms;
  return out;
}

}  // namespace

std::optional<report::UnfittedNetwork> unfitted_network(const WorkerStep& step, const Calibration& calibration) {
  const topology::DeviceType& d = step.point.cluster.spec().node.device;
  return unfitted_network_named(step.point.model.name, calibration.device_key(d.name, d.family), calibration);
}

std::optional<report::BeyondFittedScale> beyond_fitted_scale(const std::string& stack, int nodes, int gpus,
                                                             const Calibration& calibration) {
  if (calibration.fitted_scale.empty()) return std::nullopt;  // not recorded
  const auto [growth, fold] = scale_growth(calibration);
  report::BeyondFittedScale out{stack, 0, 0, nodes, gpus, growth, fold};
  if (const auto fitted = calibration.fitted_scale.find(stack); fitted != calibration.fitted_scale.end()) {
    out.fitted_nodes = fitted->second.nodes;
    out.fitted_gpus = fitted->second.gpus;
  }
  if (nodes <= out.fitted_nodes && gpus <= out.fitted_gpus) return std::nullopt;
  return out;
}

std::pair<double, std::string> scale_growth(const Calibration& calibration) {
  int most_nodes = 0, most_gpus = 0;
  for (const auto& [stack, scale] : calibration.fitted_scale) {
    most_nodes = std::max(most_nodes, scale.nodes);
    most_gpus = std::max(most_gpus, scale.gpus);
  }
  std::pair<double, std::string> best{0.0, ""};
  for (const Calibration::Fold& f : calibration.cross_validation_folds) {
    const bool by_nodes = f.fold.starts_with("nodes<="), by_gpus = f.fold.starts_with("gpus<=");
    if ((!by_nodes && !by_gpus) || f.log_sd <= 0.0) continue;
    const double within = std::atof(f.fold.c_str() + f.fold.find("<=") + 2);
    const int reach = by_nodes ? most_nodes : most_gpus;
    if (within < 1.0 || reach <= within) continue;
    const double growth = f.log_sd / std::log2(reach / within);
    if (growth > best.first) best = {growth, f.fold};
  }
  return best;
}

double extrapolation_log_sd(const std::string& stack, int nodes, int gpus, const Calibration& calibration) {
  const double growth = scale_growth(calibration).first;
  if (growth <= 0.0) return 0.0;
  int fitted_nodes = 1, fitted_gpus = 1;
  if (const auto it = calibration.fitted_scale.find(stack); it != calibration.fitted_scale.end()) {
    fitted_nodes = std::max(1, it->second.nodes);
    fitted_gpus = std::max(1, it->second.gpus);
  }
  const double doublings = std::max({0.0, std::log2(static_cast<double>(nodes) / fitted_nodes),
                                     std::log2(static_cast<double>(gpus) / fitted_gpus)});
  return growth * doublings;
}

double interval_log_sd(const std::optional<report::UnfittedNetwork>& unfitted, const Calibration& calibration,
                       const std::optional<report::UnfittedDevice>& device) {
  const double network =
      unfitted && unfitted->interval_log_sd > 0.0 ? unfitted->interval_log_sd : calibration.prediction_log_sd;
  return device ? std::max(network, device->interval_log_sd) : network;
}

namespace {

// The runs, MAPE and RMS log spread of the left-out-family folds of `c`'s cross-validation (runs 0: none).
std::tuple<int, double, double> transfer_error(const Calibration& c) {
  int runs = 0;
  double mape = 0.0, squares = 0.0;
  for (const Calibration::Fold& f : c.cross_validation_folds) {
    if (!f.fold.starts_with("family!=") || f.runs <= 0 || f.log_sd <= 0.0) continue;
    runs += f.runs;
    mape += f.runs * f.mape;
    squares += f.runs * f.log_sd * f.log_sd;
  }
  if (runs == 0) return {0, 0.0, 0.0};
  return {runs, mape / runs, std::sqrt(squares / runs)};
}

}  // namespace

std::optional<report::UnfittedDevice> unfitted_device(const WorkerStep& step, const Calibration& calibration) {
  const topology::NodeSpec& node = step.point.cluster.spec().node;
  if (node.device_prefix != "gpu") return std::nullopt;
  const std::string entry = calibration.device_key(node.device.name, node.device.family);
  const auto fitted = calibration.fitted_networks.find(entry);
  if (fitted != calibration.fitted_networks.end() && !fitted->second.empty()) return std::nullopt;
  report::UnfittedDevice out{node.device.name, node.device.family, entry, {}, "", 0, 0.0, 0.0};
  for (const auto& [key, networks] : calibration.fitted_networks)
    if (!networks.empty()) out.fitted.push_back(key);
  auto [runs, mape, log_sd] = transfer_error(calibration);
  out.transfer_source = "the calibration";
  if (runs == 0)
    for (const ShippedCalibration& s : shipped_calibrations()) {
      std::tie(runs, mape, log_sd) = transfer_error(s.calibration);
      if (runs == 0) continue;
      out.transfer_source = "calibrations/" + s.name + ".json";
      break;
    }
  out.transfer_runs = runs;
  out.transfer_mape = mape;
  // A calibration without a cross-validated error of its own (the built-in defaults) gives no interval: none is
  // borrowed for it.
  out.interval_log_sd = calibration.prediction_log_sd > 0.0 ? log_sd : 0.0;
  return out;
}

Calibration without_dispatch(const Calibration& calibration, const std::string& stack) {
  Calibration c = calibration;
  c.stacks[stack].op_overhead_s = 0.0;
  return c;
}

std::vector<ModelAlternative> model_alternatives(const plan::Scenario& scenario, const Calibration& calibration) {
  return model_alternatives(worker_step(scenario, calibration), calibration);
}

std::vector<ModelAlternative> model_alternatives(const WorkerStep& step, const Calibration& calibration) {
  std::vector<ModelAlternative> out;
  const plan::Scenario& scenario = step.point.scenario;
  if (const auto beyond = dispatch_beyond_support(dispatch_cost(step), scenario.batch_per_gpu, calibration))
    out.push_back(
        {"without_dispatch", report::dispatch_beyond_note(*beyond), without_dispatch(calibration, beyond->stack)});
  const WorkspaceCap cap = workspace_cap(step);
  if (cap.over_cap > 0) {
    Calibration uncapped = calibration;
    uncapped.stacks[cap.stack].conv_workspace_bytes = 0.0;  // no cap: every 3x3 convolution may use Winograd
    out.push_back({"without_workspace_cap",
                   fmt::format("{}'s cap on cuDNN's workspace ({:.2f} GiB) keeps {} of the {} 3x3 convolutions of "
                               "the step from Winograd at batch {}, a reading of cuDNN's non-fused Winograd that one "
                               "reference run touches: the interval covers the prediction without the cap too",
                               cap.stack, cap.cap_bytes / (1024.0 * 1024.0 * 1024.0), cap.over_cap, cap.convolutions,
                               scenario.batch_per_gpu),
                   std::move(uncapped)});
  }
  return out;
}

std::optional<report::AssumedRate> assumed_rate(const topology::ClusterSpec& spec) {
  if (spec.network.kind == topology::NetworkKind::kNone || !spec.network.has_nic_range()) return std::nullopt;
  return report::AssumedRate{spec.name, spec.network.nic_link.bandwidth_Bps, spec.network.nic_bandwidth_low_Bps,
                             spec.network.nic_bandwidth_high_Bps};
}

Calibration at_network_rate(const Calibration& calibration, const report::AssumedRate& rate, double rate_Bps) {
  Calibration c = calibration;
  c.network_wire_scale *= rate_Bps / rate.stated_Bps;
  return c;
}

namespace {

// The workers of one full node: the scenario's GPUs per node, else every device of the cluster's node.
int full_node_gpus(const plan::Scenario& scenario) {
  if (scenario.gpus_per_node > 0) return scenario.gpus_per_node;
  return plan::load_scenario_cluster_spec(scenario).node.devices_per_node;
}

}  // namespace

int predict_simulations(const plan::Scenario& scenario, const std::vector<int>& gpus, const Calibration& calibration) {
  const topology::ClusterSpec spec = plan::load_scenario_cluster_spec(scenario);
  const bool ranged = assumed_rate(spec).has_value();
  int n = std::find(gpus.begin(), gpus.end(), 1) != gpus.end() ? 0 : 1;
  const int node_gpus = full_node_gpus(scenario);
  if (node_gpus > 1 && std::find(gpus.begin(), gpus.end(), node_gpus) == gpus.end() &&
      std::any_of(gpus.begin(), gpus.end(), [&](int g) { return g > node_gpus; }))
    ++n;
  for (int g : gpus) n += ranged && plan::cluster_nodes_needed(scenario, spec.node.devices_per_node, g) > 1 ? 3 : 1;
  n += static_cast<int>(model_alternatives(scenario, calibration).size() * gpus.size());
  return n;
}

namespace {

// Each point's speedup and efficiency over one GPU, and beyond one node its speedup over one full node of workers (as
// papers report multi-node speedups: BSC's 16 nodes over one node), simulated where the sweep has no such point.
void set_speedups(const plan::Scenario& scenario, const PredictOptions& options, double base_images_per_sec,
                  report::Report& report) {
  RunOptions quiet = options.run;
  quiet.trace = false;
  const int node_gpus = full_node_gpus(scenario);
  double node_images_per_sec = 0.0;
  for (const report::PointResult& p : report.predictions)
    if (p.gpus == node_gpus) node_images_per_sec = p.images_per_sec;
  const bool beyond_node = std::any_of(report.predictions.begin(), report.predictions.end(),
                                       [&](const report::PointResult& p) { return p.gpus > node_gpus; });
  if (node_images_per_sec == 0.0 && beyond_node) {
    node_images_per_sec =
        node_gpus == 1 ? base_images_per_sec
                       : simulate_point_forked(scenario, node_gpus, options.calibration, quiet, options.fidelity)
                             .images_per_sec;
    if (options.on_point && node_gpus != 1) options.on_point(node_gpus);
  }
  for (report::PointResult& p : report.predictions) {
    p.speedup = p.images_per_sec / base_images_per_sec;
    p.efficiency = p.speedup / p.gpus;
    if (node_images_per_sec > 0.0 && p.gpus > node_gpus) p.speedup_over_one_node = p.images_per_sec / node_images_per_sec;
  }
}

// Simulates the points of one prediction. A point the fast mode times is lowered once, and its alternatives and
// network-rate ends simulate that plan with their calibrations (the plan does not depend on the calibration);
// message-level points run in forked children.
class PointSimulator {
 public:
  PointSimulator(const plan::Scenario& scenario, Fidelity fidelity) : scenario_(scenario), fidelity_(fidelity) {}
  report::PointResult operator()(int g, const Calibration& calibration, const RunOptions& run) {
    const plan::Scenario at = plan::with_point_batch(scenario_, g);
    if (!runs_fast(at, g, fidelity_)) return simulate_point_forked(at, g, calibration, run, fidelity_);
    auto it = lowered_.find(g);
    if (it == lowered_.end()) {
      plan::LowerOptions lowering;
      lowering.materialize_schedules = false;
      it = lowered_.emplace(g, plan::prepare(at, g, lowering)).first;
    }
    return simulate(it->second, calibration, run, Fidelity::kFast);
  }

 private:
  const plan::Scenario& scenario_;
  Fidelity fidelity_;
  std::map<int, plan::Point> lowered_;
};

// Each point's rates at both ends of an assumed network rate (beyond one node) and under each alternative model.
void add_ranges_and_alternatives(const WorkerStep& step, const PredictOptions& options, PointSimulator& simulate_at,
                                 report::Report& report) {
  RunOptions quiet = options.run;
  quiet.trace = false;
  if (report.assumed_rate)
    for (report::PointResult& p : report.predictions) {
      if (p.nodes <= 1) continue;  // nothing crosses the network
      double ends[2];
      for (int i = 0; i < 2; ++i) {
        const report::AssumedRate& rate = *report.assumed_rate;
        const Calibration at = at_network_rate(options.calibration, rate, i == 0 ? rate.low_Bps : rate.high_Bps);
        ends[i] = simulate_at(p.gpus, at, quiet).images_per_sec;
        if (options.on_point) options.on_point(p.gpus);
      }
      p.range_low_images_per_sec = std::min(ends[0], ends[1]);
      p.range_high_images_per_sec = std::max(ends[0], ends[1]);
    }
  for (const ModelAlternative& alt : model_alternatives(step, options.calibration)) {
    report.alternative_notes[alt.what] = alt.note;
    for (report::PointResult& p : report.predictions) {
      p.alternatives[alt.what] = simulate_at(p.gpus, alt.calibration, quiet).images_per_sec;
      if (options.on_point) options.on_point(p.gpus);
    }
  }
}

}  // namespace

report::Report predict(const plan::Scenario& scenario, const PredictOptions& options) {
  report::Report report;
  report.scenario = scenario.name;
  report.scheme = scenario.scheme.describe();
  report.cluster = scenario.cluster;
  report.model = scenario.model;
  report.batch_per_gpu = scenario.batch_per_gpu;
  report.precision = plan::precision_name(scenario.training.precision);
  const topology::Cluster one_gpu = plan::load_scenario_cluster(scenario, 1);
  report.stack = run_stack(scenario, one_gpu);
  report.assumed_rate = assumed_rate(one_gpu.spec());
  const WorkerStep step = worker_step(scenario, options.calibration);  // the dispatch's reach and the alternatives
  check_memory_fit(scenario, step.point.model, step.point.cluster.spec().node);
  if (options.run.trace)
    for (const models::Layer& L : step.point.model.layers) report.layers.push_back(L.name);
  report.dispatch_beyond = dispatch_beyond_support(dispatch_cost(step), scenario.batch_per_gpu, options.calibration);
  report.calibration_source = options.calibration_source;
  report.unfitted_network = unfitted_network(step, options.calibration);
  report.unfitted_device = unfitted_device(step, options.calibration);
  report.interval_log_sd = interval_log_sd(report.unfitted_network, options.calibration, report.unfitted_device);
  const std::vector<int> gpus = sweep_of(scenario, options.gpus);
  // A sweep that sets the global batch per point has none for a GPU count outside it: refused, not run at the
  // scenario's batch per GPU.
  if (!scenario.sweep_global_batch.empty())
    for (int g : gpus)
      if (std::find(scenario.sweep_gpus.begin(), scenario.sweep_gpus.end(), g) == scenario.sweep_gpus.end())
        throw InputError(scenario.file, "/sweep/global_batch",
                         fmt::format("a global batch for every GPU count predicted: {} GPUs has none (the sweep sets "
                                     "it at {} GPUs)",
                                     g, fmt::join(scenario.sweep_gpus, ", ")));
  PointSimulator simulate_at(scenario, options.fidelity);
  double base_images_per_sec = 0.0;
  for (int g : gpus) {
    const plan::Scenario at = plan::with_point_batch(scenario, g);
    if (at.batch_per_gpu != scenario.batch_per_gpu) check_memory_fit(at, step.point.model, step.point.cluster.spec().node);
    report::PointResult p = simulate_at(g, options.calibration, options.run);
    if (!scenario.sweep_global_batch.empty()) p.batch_per_gpu = at.batch_per_gpu;
    if (g == 1) base_images_per_sec = p.images_per_sec;
    report.predictions.push_back(std::move(p));
    if (options.on_point) options.on_point(g);
  }
  int most_nodes = 0, most_gpus = 0;
  for (const report::PointResult& p : report.predictions) {
    most_nodes = std::max(most_nodes, p.nodes);
    most_gpus = std::max(most_gpus, p.gpus);
  }
  report.beyond_fitted_scale = beyond_fitted_scale(report.stack, most_nodes, most_gpus, options.calibration);
  if (const topology::ClusterSpec& spec = one_gpu.spec(); most_nodes > 1 && !spec.network.assumption.empty())
    report.network_assumption = report::NetworkAssumption{spec.name, spec.file, spec.network.assumption};
  for (report::PointResult& p : report.predictions)
    p.extrapolation_log_sd = extrapolation_log_sd(report.stack, p.nodes, p.gpus, options.calibration);
  add_ranges_and_alternatives(step, options, simulate_at, report);
  RunOptions quiet = options.run;
  quiet.trace = false;
  if (!options.speedups) {
    add_time_to_target(scenario, report);
    return report;
  }
  if (base_images_per_sec == 0.0) {
    base_images_per_sec = simulate_point_forked(scenario, 1, options.calibration, quiet, options.fidelity).images_per_sec;
    if (options.on_point) options.on_point(1);
  }
  set_speedups(scenario, options, base_images_per_sec, report);
  add_time_to_target(scenario, report);
  return report;
}

}  // namespace scaletwin::sim
