// What a simulation reports: per GPU count the spec's figures (iteration_s, images_per_sec, speedup, efficiency,
// compute_s, exposed_comm_s), a per-phase and per-collective breakdown on the critical worker, staleness for
// asynchronous schemes, and trace events; JSON (spec: predict --json), a readable table, and Chrome trace format.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/json_reader.hpp"

namespace scaletwin::report {

struct TraceEvent {
  int track = 0;  // endpoint index
  std::string name;      // phase name or collective label
  std::string category;  // "compute" or the collective purpose
  double start_s = 0.0;
  double end_s = 0.0;
  int layer = -1;  // a compute op's model layer (Report::layers names it); -1: none (a collective, data, update)
};

struct CollectiveTime {
  std::string label;
  std::string purpose;
  double bytes = 0.0;
  double seconds = 0.0;  // mean duration (launch to completion) per iteration on the critical worker
};

struct PointResult {
  int gpus = 0;
  int nodes = 0;
  int64_t batch_per_gpu = 0;  // the point's (a sweep's global_batch sets it per point; 0: the report's)
  double iteration_s = 0.0;
  double images_per_sec = 0.0;
  double speedup = 0.0;
  double efficiency = 0.0;
  double speedup_over_one_node = 0.0;  // over one full node of workers (simulated if the sweep lacks it); 0 within one node
  double compute_s = 0.0;       // compute time per iteration of the critical worker
  double exposed_comm_s = 0.0;  // iteration_s not covered by the critical worker's compute
  double jitter_wait_s = 0.0;   // of exposed_comm_s: the expected wait for the slowest worker (sim/jitter.hpp)
  std::string sync;             // "sync", "async", "mixed_async"
  std::string fidelity = "message";
  std::string plan_hash;
  int critical_worker = 0;
  std::map<std::string, double> phase_s;  // compute seconds per phase per iteration (critical worker)
  std::vector<CollectiveTime> collectives;
  double staleness_mean = 0.0;  // async: updates applied by others between a worker's pull and its next push
  double staleness_max = 0.0;
  int64_t staleness_samples = 0;
  double simulated_s = 0.0;  // simulated clock at the end
  // Time to accuracy (sim/convergence.hpp; 0 when the scenario sets no training target): the batch one update
  // averages, the images to the target (or the stated epochs' images) and the time they take at images_per_sec.
  double update_batch = 0.0;
  double images_to_target = 0.0;
  double time_to_target_s = 0.0;
  // With a convergence model and the training set's size: the epochs trained when the target is first seen (at an
  // evaluation: a whole number of evaluation periods after the first), the evaluations run up to it and their time
  // at the simulated inference rate (in time_to_target_s with training and per-epoch overheads; 0 when not counted),
  // and the log spread the convergence model adds beyond the batches it was fitted on (sim/convergence.hpp).
  double epochs_to_target = 0.0;
  int evaluations = 0;
  double eval_s = 0.0;
  double convergence_extrapolation_log_sd = 0.0;
  // On several nodes of a cluster whose NIC rate is an assumption with a range (Report::assumed_rate): images/s
  // simulated at the low and the high end of the range (the smaller first); 0, 0 elsewhere.
  double range_low_images_per_sec = 0.0, range_high_images_per_sec = 0.0;
  // Beyond the scale its stack was fitted at (Report::beyond_fitted_scale): the log spread the point's interval adds,
  // in quadrature, to the calibration's (sim::extrapolation_log_sd); 0 within the fitted scale.
  double extrapolation_log_sd = 0.0;
  // Images/s under each alternative the model cannot rule out for this scenario (Report::alternative_notes say
  // why), which the interval covers too: "without_dispatch" where the stack's dispatch adds more of the step than on
  // any run its calibration was fitted on (Report::dispatch_beyond), "without_workspace_cap" where the stack's cap
  // on cuDNN's workspace keeps convolutions from Winograd (sim/predict.hpp: model_alternatives). Empty elsewhere.
  std::map<std::string, double> alternatives;
  std::vector<std::string> tracks;  // endpoint names
  std::vector<TraceEvent> trace;    // when requested
};

// A cluster's NIC rate that its file assumes, with the range the assumption leaves open (clusters/README.md:
// network.nic_link.bandwidth_range), in bytes/s per direction.
struct AssumedRate {
  std::string cluster;
  double stated_Bps = 0.0, low_Bps = 0.0, high_Bps = 0.0;
};

// What a report says of an assumed rate beside its intervals: "aws-p2.xlarge's NIC rate is an assumption (125.00
// MB/s per direction): on several nodes the interval covers the predictions at 125.00 MB/s and at 1.25 GB/s too".
std::string assumed_rate_note(const AssumedRate& rate);

// A sweep across nodes of a cluster whose network the cluster file describes in part by assumption (its
// /network/assumption: a topology or figures no source gave): what the predictions between nodes rest on.
struct NetworkAssumption {
  std::string cluster;
  std::string file;  // the cluster file ("clusters/dgx-h100.json (built-in)")
  std::string text;
};
// "the network between nodes of dgx-h100 rests on assumptions (clusters/dgx-h100.json (built-in), /network/
// assumption): ...".
std::string network_assumption_note(const NetworkAssumption& assumption);

// A step that leans on its stack's dispatch (fitted, docs/results/k80-calibration.md) further than any run its calibration was
// fitted on: the share of the worker's compute the dispatch adds here and at most there.
struct DispatchBeyondSupport {
  std::string stack;
  int64_t batch_per_gpu = 0;
  double share = 0.0, support = 0.0;
};

// "tensorflow's dispatch adds 47% of the step's compute at batch 8, more than the 21% of any run its calibration
// was fitted on: the interval covers the prediction without the dispatch too".
std::string dispatch_beyond_note(const DispatchBeyondSupport& beyond);

// A network that the calibration's values for its device were not fitted on (sim::Calibration::fitted_networks):
// the networks they were, and the held-out MAPE of the cross-validation folds that left a network out (the
// smallest and the largest; folds 0 when the calibration records none). interval_log_sd: the spread its interval is
// drawn from, the root mean square of log(predicted / measured) over those folds' runs where that is wider than the
// calibration's over all folds (a network the fit never saw is predicted as those were); 0: the calibration's.
struct UnfittedNetwork {
  std::string network;
  std::string device;
  std::vector<std::string> fitted;
  int left_out_folds = 0;
  double left_out_mape_low = 0.0, left_out_mape_high = 0.0;  // percent
  double interval_log_sd = 0.0;
};

// "resnet101_v1 is not among the networks the calibration was fitted on for Tesla K80 (one GK210) (alexnet, ...):
// the 5 networks its cross-validation left out were predicted 0.8-17.2% off; ...".
std::string unfitted_network_note(const UnfittedNetwork& unfitted);
Json unfitted_network_to_json(const UnfittedNetwork& unfitted);

// A GPU whose calibration entry the calibration did not fit (sim::Calibration::fitted_networks lists the entries it
// fitted): the entry its efficiencies come from instead ("family:hopper", "default"), the entries the calibration
// did fit, and the cross-device transfer error: how far off the left-out-family folds ("family!=...") of
// `transfer_source`'s cross-validation predicted the devices of a family the fit never saw (their runs and MAPE),
// and the spread the interval is drawn from (interval_log_sd; 0: no such folds, no interval).
struct UnfittedDevice {
  std::string device;
  std::string family;
  std::string entry;
  std::vector<std::string> fitted;
  std::string transfer_source;
  int transfer_runs = 0;
  double transfer_mape = 0.0;  // percent
  double interval_log_sd = 0.0;
};

// "H100-SXM5-80GB (hopper) is not a device the calibration was fitted on (it fitted Tesla K80 (one GK210)): its
// efficiencies are the entry "default"'s; ...".
std::string unfitted_device_note(const UnfittedDevice& unfitted);
Json unfitted_device_to_json(const UnfittedDevice& unfitted);

// A sweep that goes beyond the scale of the runs its calibration was fitted on for the scenario's stack
// (sim::Calibration::fitted_scale): the largest node and GPU counts among those runs (0: no run of the stack), and
// the sweep's largest point. What grows with scale there (the exchange's tail, the wait for the slowest of more
// workers, and the stack's own costs between GPUs or nodes where none of its runs had several) is extrapolated.
struct BeyondFittedScale {
  std::string stack;
  int fitted_nodes = 0, fitted_gpus = 0;
  int nodes = 0, gpus = 0;
  // The log spread an interval gains per doubling of nodes or GPUs beyond the fitted scale, from the calibration's
  // scale folds (sim::scale_growth); 0: none recorded.
  double growth_per_doubling = 0.0;
  std::string growth_fold;  // the fold it comes from ("nodes<=1")
};

// "tensorflow's runs in the calibration reach 8 nodes (64 GPUs); the sweep goes to 16 nodes (64 GPUs): ...".
std::string beyond_fitted_scale_note(const BeyondFittedScale& beyond);
Json beyond_fitted_scale_to_json(const BeyondFittedScale& beyond);

struct Report {
  std::string scenario;
  std::string scheme;
  std::string cluster;
  std::string model;
  int64_t batch_per_gpu = 0;       // the scenario's (0: not stated)
  std::string precision;           // the scenario's training precision ("fp32", "bf16", ...; "" not stated)
  std::string stack;               // the software stack simulated (sim/stacks.hpp)
  std::string calibration_source;  // "calibrations/k80.json (built in)", a file, or "built-in defaults"
  // The calibration's cross-validated error, as the standard deviation of log(predicted / measured)
  // (Calibration::prediction_log_sd); 0 when it has none, and then no interval is given.
  double interval_log_sd = 0.0;
  // Time to accuracy: what the time is to ("test accuracy 0.82 (convergence FILE)" or "90 epochs of N images"),
  // and the log spread of its interval (the convergence model's and the throughput's, combined); "" when none.
  std::string time_basis;
  double time_log_sd = 0.0;
  // Set where the cluster's NIC rate is an assumption with a range: points on several nodes are simulated at both
  // ends too (PointResult::range_*), and their intervals cover both.
  std::optional<AssumedRate> assumed_rate;
  std::optional<NetworkAssumption> network_assumption;  // set where the sweep reaches several nodes
  // Set where the step leans on its dispatch beyond the calibration's support: every point is simulated without
  // the dispatch too (PointResult::alternatives "without_dispatch"), and its interval covers both.
  std::optional<DispatchBeyondSupport> dispatch_beyond;
  // Set where the scenario's network is not among those the calibration was fitted on for its device.
  std::optional<UnfittedNetwork> unfitted_network;
  // Set where the scenario's GPU is not one the calibration was fitted on (its interval from the transfer error).
  std::optional<UnfittedDevice> unfitted_device;
  // Set where the sweep goes beyond the scale of the calibration's runs of the scenario's stack.
  std::optional<BeyondFittedScale> beyond_fitted_scale;
  // One line per alternative the points were also simulated under (PointResult::alternatives): what and why.
  std::map<std::string, std::string> alternative_notes;
  std::vector<PointResult> predictions;
  // The model's layer names by index, for the trace's compute events (TraceEvent::layer); empty: not named.
  std::vector<std::string> layers;
};

// The two-sided 90% quantile of a normal, and the 90% prediction interval of a predicted figure x:
// x ×/÷ interval_factor(log_sd) = x * exp(-+kZ90 log_sd) ({x, x} when log_sd is 0).
constexpr double kZ90 = 1.6448536269514722;
double interval_factor(double log_sd);
std::pair<double, double> prediction_interval(double x, double log_sd);
// The 90% interval of a predicted images/s x as ratios to it, {low, high}: x ×/÷ interval_factor(log_sd) around x
// and around each alternative prediction the model cannot rule out (the ends of an assumed NIC range,
// PointResult::range_*; PointResult::alternatives; 0: none):
// low = min(1, alternatives / x) / factor, high = max(1, alternatives / x) * factor. {1, 1} when neither.
std::pair<double, double> interval_ratios(double log_sd, double x, const std::vector<double>& alternatives);
// The figures an interval covers beside x: an assumed range's ends and every alternative's.
std::vector<double> alternative_rates(double range_low, double range_high,
                                      const std::map<std::string, double>& alternatives);
std::pair<double, double> interval_ratios(double log_sd, const PointResult& p);
// Whether a point has alternatives (above) that its interval covers.
bool has_alternatives(const PointResult& p);
// Whether a point of the report has an interval: the calibration gives one, or the point has alternatives.
bool has_interval(const Report& r, const PointResult& p);
// The label of an error (predicted - measured) / measured, as tables and charts write it: "+3.1%", "-12.0%".
std::string error_label(double error);

Json point_to_json(const PointResult& p, bool with_trace);
PointResult point_from_json(const Json& j);
Json report_to_json(const Report& r);
std::string report_table(const Report& r);
// Chrome trace format (Perfetto): one process per GPU count, one thread (track) per endpoint.
Json chrome_trace(const Report& r);

}  // namespace scaletwin::report
