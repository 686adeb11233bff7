// predict: simulate a scenario for every GPU count of its sweep.
//
// SimGrid's engine is one per process and its clock never resets, so every point runs in a forked child that
// loads the model and cluster, lowers the plan, simulates it and pipes its report::PointResult back as JSON; errors travel
// back the same way and are rethrown with their kind (InputError, InternalError). speedup and efficiency are
// against the 1-GPU point of the same scenario (simulated as well when the sweep lacks it); points on several
// nodes also get speedup_over_one_node, against the largest one-node point of the sweep.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "plan/iteration_plan.hpp"
#include "plan/scenario.hpp"
#include "report/report.hpp"
#include "sim/calibration.hpp"
#include "sim/runner.hpp"

namespace scaletwin::sim {

// Which simulator times a point: the message-level SimGrid runner (runner.hpp), the fast round-level one
// (sim/fast/runner.hpp), or auto: fast above kAutoFastAboveGpus GPUs, message-level up to it. Plans the fast mode
// cannot run (asynchronous ones) always use the message level. report::PointResult::fidelity says which was used.
enum class Fidelity { kMessage, kFast, kAuto };
constexpr int kAutoFastAboveGpus = 64;
const char* fidelity_name(Fidelity f);
Fidelity fidelity_from_name(const std::string& name);  // InputError naming --fidelity otherwise

struct PredictOptions {
  std::vector<int> gpus;  // empty: the scenario's sweep, else nodes * gpus_per_node
  Calibration calibration = default_calibration();
  std::string calibration_source = "built-in defaults";  // how the report names it (choose_calibration)
  RunOptions run;
  Fidelity fidelity = Fidelity::kAuto;
  // Called after each simulated point (the sweep's, then the 1-GPU base when the sweep lacks it): progress.
  std::function<void(int gpus)> on_point;
  // false: no speedup or efficiency (left 0), so no 1-GPU or one-node point is simulated for them (explore, which
  // needs each candidate's own point only).
  bool speedups = true;
};

// The GPU counts a scenario is predicted for.
std::vector<int> sweep_of(const plan::Scenario& scenario, const std::vector<int>& requested);

// Simulates a prepared point (plan::prepare) in this process: the fast mode where `fidelity` selects it for the
// point (runs_fast: kAuto above 64 GPUs; asynchronous plans never), else the message level, which needs the plan's
// schedules materialized (prepare's default LowerOptions) and runs once per process (SimGrid's engine).
report::PointResult simulate(const plan::Point& point, const Calibration& calibration, const RunOptions& options,
                             Fidelity fidelity);

// Simulates one point in this process (load, lower, run). Only once per process.
report::PointResult simulate_point(const plan::Scenario& scenario, int gpus, const Calibration& calibration,
                                   const RunOptions& options);

// With a fidelity (kAuto: predict's rule), in this process: the fast mode where it applies, else as above.
report::PointResult simulate_point(const plan::Scenario& scenario, int gpus, const Calibration& calibration,
                                   const RunOptions& options, Fidelity fidelity);

// Simulates one point in a forked child and returns its result.
report::PointResult simulate_point_forked(const plan::Scenario& scenario, int gpus, const Calibration& calibration,
                                          const RunOptions& options);

// With a fidelity: kMessage as above (forked); kFast and kAuto lower the plan in this process and run the fast
// mode in it when it applies (no SimGrid engine involved), else fork as above.
report::PointResult simulate_point_forked(const plan::Scenario& scenario, int gpus, const Calibration& calibration,
                                          const RunOptions& options, Fidelity fidelity);

// The cluster's assumed NIC rate and its range (network.nic_link.bandwidth_range), if its file gives one.
std::optional<report::AssumedRate> assumed_rate(const topology::ClusterSpec& spec);
// `calibration` with the cluster's network links at `rate_Bps` instead of the stated rate
// (Calibration::network_wire_scale): what a simulation at one end of the range uses.
Calibration at_network_rate(const Calibration& calibration, const report::AssumedRate& rate, double rate_Bps);

// Simulates the sweep; where the cluster's NIC rate is assumed with a range, each point on several nodes also at
// both ends of it (report::Report::assumed_rate, PointResult::range_*); where the step leans on the stack's
// dispatch beyond the calibration's support or its workspace cap bites, each point also under those
// alternatives (model_alternatives).
report::Report predict(const plan::Scenario& scenario, const PredictOptions& options);
// How many simulations predict runs for the sweep `gpus` (for progress): its points, the 1-GPU base where the sweep
// lacks it, two more for each point on several nodes where the cluster's NIC rate has a range, and one more per
// point for each of the scenario's model alternatives.
int predict_simulations(const plan::Scenario& scenario, const std::vector<int>& gpus, const Calibration& calibration);

// One worker's step at one GPU, lowered once for predict's notes below: the point (its compute items; no
// schedules), the stack that runs it, and the calibration as that stack and model apply it (Calibration::for_run).
struct WorkerStep {
  plan::Point point;
  std::string stack;
  Calibration run;
};
WorkerStep worker_step(const plan::Scenario& scenario, const Calibration& calibration);

// The 3x3 stride-1 convolutions of one worker's step (batch_per_gpu samples) that would run as Winograd transforms
// on the scenario's device, and how many of them the scenario's stack keeps from it: their workspace
// (winograd_workspace_bytes) over the stack's conv_workspace_bytes (calibration.hpp). predict says so.
struct WorkspaceCap {
  std::string stack;
  double cap_bytes = 0.0;  // 0: the stack has no cap
  int convolutions = 0;    // 3x3 stride-1 convolutions (none where the device has no Winograd gain)
  int over_cap = 0;        // of those, the ones without the gain
};
WorkspaceCap workspace_cap(const WorkerStep& step);
WorkspaceCap workspace_cap(const plan::Scenario& scenario, const Calibration& calibration);

// What the scenario's framework dispatch (the stack's op_overhead_s, added to each op's time: compute_model.hpp)
// adds to one worker's compute step (batch_per_gpu samples, data loading excluded), from the compute model alone.
// TensorFlow's is fitted (docs/results/k80-calibration.md) and above what its executor spends on the graph ops of one layer and
// phase: where it is a large share of the step (small batches), the prediction rests on that fit more than on the
// model. predict says so.
struct DispatchCost {
  std::string stack;
  double per_op_s = 0.0;   // the dispatch per op on the scenario's device; 0 where it has none or is a host CPU
  int ops = 0;             // compute ops of the step
  double compute_s = 0.0;  // the step's compute with the dispatch
  double added_s = 0.0;    // what the dispatch adds to it
};
DispatchCost dispatch_cost(const WorkerStep& step);
DispatchCost dispatch_cost(const plan::Scenario& scenario, const Calibration& calibration);

// Whether the scenario's step leans on its stack's dispatch further than any run the calibration was fitted on
// (Calibration::dispatch_support): the share of the worker's compute the dispatch adds exceeds the stack's support.
// predict and validate then simulate it without the dispatch too (without_dispatch) and the interval covers both:
// the fitted dispatch stands in for costs the model does not separate (docs/results/k80-calibration.md), so where it weighs more
// than on the runs it was fitted to, nothing says how much of it is real. nullopt where the calibration states no
// support for the stack or the share lies within it.
std::optional<report::DispatchBeyondSupport> dispatch_beyond_support(const plan::Scenario& scenario,
                                                                     const Calibration& calibration);
// The same for a step's dispatch already measured (dispatch_cost) at batch `batch_per_gpu`.
std::optional<report::DispatchBeyondSupport> dispatch_beyond_support(const DispatchCost& dispatch,
                                                                     int64_t batch_per_gpu,
                                                                     const Calibration& calibration);
// Where the scenario's network (models::Model::name) is not among those the calibration's values for its device
// were fitted on (Calibration::fitted_networks), which ones were and how far off the cross-validation's
// left-out-network folds ("model!=...") predicted theirs. nullopt where the calibration lists no networks for the
// device (it was not fitted there, or does not say) or lists this one.
// Takes the step predict and validate lower anyway (its model and cluster loaded: worker_step).
std::optional<report::UnfittedNetwork> unfitted_network(const WorkerStep& step, const Calibration& calibration);
// Where the scenario's GPU is not one the calibration fitted (its calibration entry, Calibration::device_key, has no
// fitted networks): the entry it takes and the cross-device transfer error, from the calibration's own
// left-out-family folds ("family!=...") or else the shipped modern calibration's. nullopt for a fitted device and
// for a CPU (the CPU executor's runs calibrate it: docs/results/this-machine.md).
std::optional<report::UnfittedDevice> unfitted_device(const WorkerStep& step, const Calibration& calibration);
// Where a sweep's largest point (`nodes`, `gpus`) goes beyond the scale of the calibration's runs of `stack`
// (Calibration::fitted_scale; a stack without runs there: any point); nullopt where it does not, or where the
// calibration does not record the scale of its runs.
std::optional<report::BeyondFittedScale> beyond_fitted_scale(const std::string& stack, int nodes, int gpus,
                                                             const Calibration& calibration);
// How a prediction's error grows with its distance beyond the scale the calibration was fitted at, from its scale
// folds ("nodes<=K" fitted on runs of at most K nodes and predicting the rest, up to the largest fitted node count N;
// "gpus<=K" likewise in GPUs): the fold's RMS log error per doubling it extrapolated, log_sd / log2(N / K), the
// largest over such folds; {0, ""} where the calibration records none.
std::pair<double, std::string> scale_growth(const Calibration& calibration);
// The log spread a point of `nodes` and `gpus` adds to its interval (in quadrature) beyond the scale of the
// calibration's runs of `stack`: scale_growth's per doubling times the doublings beyond it, of nodes or of GPUs,
// whichever is more (a stack without runs there: from one node and one GPU); 0 within the fitted scale.
double extrapolation_log_sd(const std::string& stack, int nodes, int gpus, const Calibration& calibration);
// The spread (log sd) of a prediction's 90% interval: the left-out-network folds' where the network is unfitted and
// theirs is wider than the calibration's pooled one (UnfittedNetwork::interval_log_sd set), else the pooled one; for
// a GPU the calibration did not fit, at least the cross-device transfer error (UnfittedDevice::interval_log_sd, set
// where the calibration has a cross-validated error of its own: the built-in defaults have none, and no interval).
double interval_log_sd(const std::optional<report::UnfittedNetwork>& unfitted, const Calibration& calibration,
                       const std::optional<report::UnfittedDevice>& device = std::nullopt);

// `calibration` without the dispatch of stack `stack`.
Calibration without_dispatch(const Calibration& calibration, const std::string& stack);

// An alternative the model cannot rule out for a scenario: its name (report::PointResult::alternatives), the line
// that says why, and the calibration that simulates it. predict and validate simulate each and widen the interval
// over it.
struct ModelAlternative {
  std::string what;
  std::string note;
  Calibration calibration;
};
// The scenario's alternatives under `calibration`: "without_dispatch" where its step leans on the stack's dispatch
// beyond the calibration's support (dispatch_beyond_support); "without_workspace_cap" where the stack's cap on
// cuDNN's workspace keeps some 3x3 convolutions from Winograd (workspace_cap): the cap's effect rests on the model's
// reading of cuDNN's non-fused Winograd (docs/results/k80-calibration.md, Limits), which a single reference run touches.
std::vector<ModelAlternative> model_alternatives(const plan::Scenario& scenario, const Calibration& calibration);
// The same from a worker's step already lowered (worker_step(scenario, calibration)).
std::vector<ModelAlternative> model_alternatives(const WorkerStep& step, const Calibration& calibration);

}  // namespace scaletwin::sim
