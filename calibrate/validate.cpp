// Validation of a calibration against measured runs (see validate.hpp).
#include "calibrate/validate.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "calibrate/simulate.hpp"
#include "core/error.hpp"
#include "report/report.hpp"
#include "sim/predict.hpp"
#include "sim/stacks.hpp"

namespace scaletwin::calibrate {

report::RunLabels run_labels(const MeasuredRun& r) {
  report::RunLabels l;
  l.gpus = r.gpus();
  l.nodes = r.nodes;
  l.model = r.model;
  l.cluster = r.cluster;
  l.batch_per_gpu = r.batch_per_gpu;
  l.data = plan::data_name(r.data);
  l.scheme = r.scheme.describe();
  l.scheme_family = run_field(r, "scheme");
  return l;
}

namespace {

// Runs on several nodes of a cluster whose NIC rate is an assumption with a range: both ends too (no progress ticks:
// the command counts the runs).
void simulate_assumed_rate_ends(const std::vector<SimJob>& jobs, const std::vector<report::PointResult>& points,
                                const std::vector<sim::Calibration>& calibrations, int parallel,
                                report::Validation& v) {
  std::vector<SimJob> ends;
  std::vector<size_t> ranged;
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (points[i].nodes <= 1) continue;
    const std::optional<report::AssumedRate> rate =
        sim::assumed_rate(plan::load_scenario_cluster_spec(jobs[i].scenario));
    if (!rate) continue;
    for (const double at : {rate->low_Bps, rate->high_Bps})
      ends.push_back(SimJob{jobs[i].scenario, jobs[i].gpus, sim::at_network_rate(calibrations[i], *rate, at)});
    ranged.push_back(i);
  }
  if (ends.empty()) return;
  const std::vector<report::PointResult> at_ends = sim::simulate_points_forked(ends, parallel, sim::RunOptions{});
  for (size_t k = 0; k < ranged.size(); ++k) {
    const double a = at_ends[2 * k].images_per_sec, b = at_ends[2 * k + 1].images_per_sec;
    v.rows[ranged[k]].range_low_images_per_sec = std::min(a, b);
    v.rows[ranged[k]].range_high_images_per_sec = std::max(a, b);
  }
}

}  // namespace

report::Validation validate_runs(const std::vector<MeasuredRun>& runs, const sim::Calibration& calibration,
                                 int parallel) {
  return validate_runs(runs, std::vector<sim::Calibration>(runs.size(), calibration), parallel);
}

report::Validation validate_runs(const std::vector<MeasuredRun>& runs,
                                 const std::vector<sim::Calibration>& calibrations, int parallel) {
  ST_ASSERT(calibrations.size() == runs.size(), "validate: one calibration per run");
  std::vector<SimJob> jobs;
  std::vector<report::RunRecord> measured;
  for (size_t i = 0; i < runs.size(); ++i) {
    jobs.push_back(SimJob{scenario_of(runs[i]), runs[i].gpus(), calibrations[i]});
    measured.push_back(run_record(runs[i]));
  }
  const std::vector<report::PointResult> points = simulate_all(jobs, parallel, sim::RunOptions{});
  std::vector<report::RunRecord> predicted;
  for (const report::PointResult& p : points) predicted.push_back(report::predicted_record(p));
  report::Validation v = report::make_validation(measured, predicted);
  v.fast_above_gpus = sim::kAutoFastAboveGpus;
  for (size_t i = 0; i < runs.size(); ++i) {
    v.rows[i].repeats = runs[i].repeats;
    v.rows[i].measured_std_error = runs[i].images_per_sec_std_error;
    v.rows[i].fidelity = points[i].fidelity;
    v.rows[i].run = run_labels(runs[i]);
    // In the calibration's own data (calibrate writes the ids it fitted: "fit"/"run_ids"), or not; unknown without.
    if (!calibrations[i].fitted_runs.empty())
      v.rows[i].in_sample = calibrations[i].fitted_runs.count(runs[i].id) != 0 ? 1 : 0;
  }
  simulate_assumed_rate_ends(jobs, points, calibrations, parallel, v);
  // What each run's step owes to its stack's dispatch, and the largest share per stack (the support of a
  // calibration fitted on these runs); each run under the model's alternatives (sim::model_alternatives); a run of a
  // network the calibration was not fitted on, its interval from the left-out-network folds (sim::interval_log_sd).
  std::vector<SimJob> alternatives;
  std::vector<std::pair<size_t, std::string>> of;  // the run and the alternative of each job
  std::vector<double> row_log_sd(jobs.size(), 0.0);
  for (size_t i = 0; i < runs.size(); ++i) {
    const sim::Calibration& calibration = calibrations[i];
    const sim::WorkerStep step = sim::worker_step(jobs[i].scenario, calibration);  // lowered once for all three
    const sim::DispatchCost dispatch = sim::dispatch_cost(step);
    if (dispatch.added_s > 0.0 && dispatch.compute_s > 0.0) {
      v.rows[i].dispatch_share = dispatch.added_s / dispatch.compute_s;
      double& support = v.dispatch_support[dispatch.stack];
      support = std::max(support, v.rows[i].dispatch_share);
    }
    for (sim::ModelAlternative& alt : sim::model_alternatives(step, calibration)) {
      alternatives.push_back(SimJob{jobs[i].scenario, jobs[i].gpus, std::move(alt.calibration)});
      of.emplace_back(i, alt.what);
    }
    std::optional<report::UnfittedNetwork> unfitted = sim::unfitted_network(step, calibration);
    row_log_sd[i] = std::hypot(sim::interval_log_sd(unfitted, calibration, sim::unfitted_device(step, calibration)),
                               sim::extrapolation_log_sd(sim::run_stack(jobs[i].scenario, step.point.cluster),
                                                         points[i].nodes, points[i].gpus, calibration));
    if (!unfitted) continue;
    const auto same = std::find_if(v.unfitted_networks.begin(), v.unfitted_networks.end(), [&](const auto& u) {
      return u.first.network == unfitted->network && u.first.device == unfitted->device;
    });
    if (same != v.unfitted_networks.end())
      ++same->second;
    else
      v.unfitted_networks.emplace_back(std::move(*unfitted), 1);
  }
  if (!alternatives.empty()) {
    const std::vector<report::PointResult> under =
        sim::simulate_points_forked(alternatives, parallel, sim::RunOptions{});
    for (size_t k = 0; k < of.size(); ++k) v.rows[of[k].first].alternatives[of[k].second] = under[k].images_per_sec;
  }
  // One spread for all where every run had the same calibration's (0: several, each row its own).
  const bool one = std::all_of(calibrations.begin(), calibrations.end(), [&](const sim::Calibration& c) {
    return c.prediction_log_sd == calibrations.front().prediction_log_sd;
  });
  report::set_intervals(v, one && !calibrations.empty() ? calibrations.front().prediction_log_sd : 0.0, row_log_sd);
  return v;
}

}  // namespace scaletwin::calibrate
