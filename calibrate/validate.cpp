// Validation of a calibration against measured runs (see validate.hpp).
#include "calibrate/validate.hpp"

#include "calibrate/simulate.hpp"
#include "report/report.hpp"
#include "sim/predict.hpp"

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

report::Validation validate_runs(const std::vector<MeasuredRun>& runs, const sim::Calibration& calibration,
                                 int parallel) {
  std::vector<SimJob> jobs;
  std::vector<report::RunRecord> measured;
  for (const MeasuredRun& r : runs) {
    jobs.push_back(SimJob{scenario_of(r), r.gpus(), calibration});
    measured.push_back(run_record(r));
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
  }
  report::set_intervals(v, calibration.prediction_log_sd);
  return v;
}

}  // namespace scaletwin::calibrate
