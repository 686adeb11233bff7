// scaletwin validate: predicts every measured run with a calibration and reports the error of each and the MAPE.
//
//   scaletwin validate --calibration FILE|shipped:NAME|none --measurements FILE [--measurements FILE ...]
//                      [--cv 'FIELD OP VALUE [&&|| ...]' [--model-factors]] [--by FIELD,...] [--json FILE]
//                      [--jobs N] [--report DIR] [--quiet]
//   scaletwin validate --convergence FILE --measurements FILE [--measurements FILE ...] [--json FILE]
//
// --cv 'nodes<=2' calibrates on the runs the filter selects (starting from --calibration, default the built-in
// defaults) and validates the others: calibrate small, predict large; 'model!=vgg16' leaves one model out;
// 'model!=vgg16 || gpus<=1' keeps its one-GPU runs in the fit (with --model-factors they set its own factor) and
// predicts its multi-GPU runs.
// --by framework,model adds a line per group of runs that share those fields' values (calibrate/measurements.hpp:
// run_field): their count, MAPE, largest |error| and how many lie inside their interval (JSON "groups").
//
// --json: {"runs": [{"id", "measured_images_per_sec", "predicted_images_per_sec", "error"}], "mape"} with
// error = (predicted - measured) / measured and mape = mean |error| in percent (../shared/spec.md).
// Without --calibration, each run is predicted with its device's calibration as predict picks it (named per run in
// the JSON's "calibration"); rows in a calibration's own data ("fit"/"run_ids") are marked in_sample, and the table
// and JSON give the in-sample and held-out MAPE apart.
// --report DIR writes DIR/report.json (the same JSON), DIR/report.txt (the table) and DIR/report.html (charts of predicted against measured,
// the runs with their errors, the calibration used: report/validation.hpp). Progress (one tick per
// simulated run) goes to stderr unless --quiet.
// --convergence FILE checks a convergence model (calibrate --convergence) on runs of scaletwin run
// --target-accuracy: each run's images and time to the target predicted (the time at the run's own measured pace),
// the error per run, the MAPE, how many fall inside the 90% interval, and the run-to-run spread of repeated
// configurations beside it.
// --time-to-train predicts the training time of every record that has one (DeepLearningExamples' 90-epoch tables,
// MLPerf-style records: calibrate/time_to_train.hpp): images/s simulated as for a throughput run of the record, epochs
// as stated or, with --convergence, from the convergence model at the record's global batch (evaluations then
// counted); each error, the MAPE, the interval coverage, and every record not predicted with why.
#include <algorithm>
#include <optional>
#include <iostream>
#include <map>

#include <fmt/format.h>

#include <cmath>

#include "calibrate/convergence_fit.hpp"
#include "calibrate/fit.hpp"
#include "calibrate/jitter.hpp"
#include "calibrate/time_to_train.hpp"
#include "calibrate/validate.hpp"
#include "cli/command.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/staged_directory.hpp"
#include "core/progress.hpp"
#include "report/validation.hpp"

namespace scaletwin::cli {

namespace {

struct ValidateArgs {
  std::string calibration;
  std::vector<std::string> measurements;
  std::string json;
  std::string report_dir;
  std::string cv;
  std::vector<std::string> fixed;
  std::vector<std::string> fit;
  bool model_factors = false;
  int jobs = 2;
  bool quiet = false;
  std::string convergence;
  std::string by;
  bool time_to_train = false;
};

// --by FIELD[,FIELD...]: the fields to group the runs by, each one that some run has (run_field).
std::vector<std::string> group_fields(const std::string& by, const std::vector<calibrate::MeasuredRun>& runs) {
  std::vector<std::string> fields;
  for (std::string field : comma_items(by)) {
    field.erase(0, field.find_first_not_of(' '));
    field.erase(field.find_last_not_of(' ') + 1);
    const bool known = std::any_of(runs.begin(), runs.end(), [&](const calibrate::MeasuredRun& r) {
      return !calibrate::run_field(r, field).empty();
    });
    if (field.empty() || !known)
      throw InputError("", "--by",
                       fmt::format("run fields separated by commas, each one the runs have: framework, model, cluster, "
                                   "nodes, gpus, gpus_per_node, batch_per_gpu, data, scheme, or a field of their own "
                                   "(no run has \"{}\")", field));
    fields.push_back(field);
  }
  return fields;
}

void write_report(StagedDirectory& out, const ValidateArgs& a, const report::Validation& v,
                  const sim::Calibration& calibration) {
  report::ValidationReportContext context;
  context.measurement_files = a.measurements;
  context.calibration_source = a.calibration.empty() && a.cv.empty() ? "each run's device's (as predict picks it)" : a.calibration;
  context.calibration = sim::calibration_to_json(calibration);
  out.write("report.json", report::validation_to_json(v).dump(2) + "\n");
  out.write("report.txt", report::validation_table(v));
  out.write("report.html", report::validation_html(v, context));
  out.publish();
}

// --cv FILTER: calibrate on the runs FILTER selects, starting from the given calibration, and validate the others
// with the fitted calibration: the error of predicting what was not fitted.
sim::Calibration fit_for_cv(const ValidateArgs& a, std::vector<calibrate::MeasuredRun>& runs,
                            const sim::Calibration& start) {
  const auto filter = calibrate::parse_run_filter(a.cv, "--cv");
  std::vector<calibrate::MeasuredRun> train, held;
  for (auto& r : runs) (filter(r) ? train : held).push_back(r);
  if (train.empty()) throw InputError("", "--cv", "a filter that selects some runs to fit (got \"" + a.cv + "\")");
  if (held.empty()) throw InputError("", "--cv", "a filter that leaves some runs to predict (got \"" + a.cv + "\")");
  calibrate::FitOptions options;
  options.parallel = a.jobs;
  options.validate = false;
  options.fixed = a.fixed;
  options.fit = a.fit;
  options.fit_may_name_unexercised = true;  // a fold may leave out every run of a stack whose cost --fit names
  options.model_factors = a.model_factors;
  sim::Calibration c = start;
  calibrate::apply_measured_jitter(train, c);
  Progress progress("validate --cv: fit", 0, progress_style_for_stderr(a.quiet));
  const ProgressScope scope(progress);
  const calibrate::FitResult fit = calibrate::fit_calibration(train, c, options);
  progress.finish();
  for (const std::string& f : fit.fix_not_exercised)  // said even with --quiet, as below
    std::cerr << fmt::format("validate --cv: --fix {}: names no parameter the fold ({}) exercises; it fixes nothing\n",
                             f, a.cv);
  for (const std::string& f : fit.fit_not_exercised)  // said even with --quiet: the fold fits less than asked
    std::cerr << fmt::format("validate --cv: --fit {}: no run of the fold ({}) exercises it; it keeps its start "
                             "value\n", f, a.cv);
  if (!a.quiet)
    std::cerr << fmt::format("validate --cv: fitted on {} runs ({}), predicting the other {}\n", train.size(), a.cv,
                             held.size());
  runs = std::move(held);
  return fit.calibration;
}

int run_convergence_check(const ValidateArgs& a) {
  const plan::Convergence model = plan::load_convergence(a.convergence);
  const calibrate::ConvergenceData data = calibrate::read_convergence_runs(a.measurements);
  if (model.target_accuracy > 0.0 && std::abs(model.target_accuracy - data.target_accuracy) > 1e-12)
    throw InputError(data.runs.front().file, "/runs/time_to_target",
                     fmt::format("runs to the convergence model's target accuracy {} (they went to {})",
                                 model.target_accuracy, data.target_accuracy));
  const calibrate::ConvergenceCheck check = calibrate::check_convergence(model, data);
  if (!a.json.empty()) write_json_output(a.json, calibrate::convergence_check_json(check, model));
  if (a.json != "-") fmt::print("{}", calibrate::convergence_check_table(check, model));
  return kExitOk;
}

int run_time_to_train_check(const ValidateArgs& a) {
  for (const auto& [given, name] : {std::pair{!a.cv.empty(), "--cv"}, {!a.by.empty(), "--by"},
                                    {!a.report_dir.empty(), "--report"}})
    if (given) throw InputError("", name, "not with time-to-train records (their check has a table and --json)");
  std::optional<plan::Convergence> convergence;
  if (!a.convergence.empty()) convergence = plan::load_convergence(a.convergence);
  std::vector<calibrate::TrainTimeRecord> records = calibrate::read_time_to_train(a.measurements, convergence);
  Progress progress("validate", std::count_if(records.begin(), records.end(), [](const auto& r) { return r.run.has_value(); }),
                    progress_style_for_stderr(a.quiet));
  calibrate::TrainTimeCheck check;
  {
    const ProgressScope scope(progress);
    check = calibrate::check_time_to_train(std::move(records), a.calibration, a.jobs, a.quiet);
  }
  progress.finish();
  if (!a.json.empty()) write_json_output(a.json, calibrate::time_to_train_json(check));
  if (a.json != "-") std::cout << calibrate::time_to_train_table(check);
  return kExitOk;
}

int run_validate(const ValidateArgs& a) {
  if (a.jobs < 1) throw InputError("", "--jobs", "at least 1");
  // Files of time-to-train records and no throughput run are checked on their times (../shared/spec.md), flag or not.
  if (a.time_to_train || (a.cv.empty() && calibrate::only_time_to_train(a.measurements)))
    return run_time_to_train_check(a);
  if (!a.convergence.empty() && !a.by.empty())
    throw InputError("", "--by", "groups of throughput runs, not with --convergence (its table is per run)");
  if (!a.convergence.empty()) return run_convergence_check(a);
  if (a.cv.empty() && (a.model_factors || !a.fixed.empty() || !a.fit.empty()))
    throw InputError("", a.model_factors ? "--model-factors" : !a.fixed.empty() ? "--fix" : "--fit",
                     "--cv as well: it shapes the fit that --cv runs (without --cv nothing is fitted)");
  auto runs = calibrate::load_measurements(a.measurements);
  std::optional<StagedDirectory> out;  // an unusable --report fails before the runs are simulated
  if (!a.report_dir.empty()) out.emplace(a.report_dir, "--report");
  print_notes("validate", calibrate::reading_notes(runs));
  const std::vector<std::string> fields = a.by.empty() ? std::vector<std::string>{} : group_fields(a.by, runs);
  // Without --calibration (and --cv), each run is predicted as predict would predict it: with its device's
  // calibration (sim::choose_calibration), named per run.
  const bool per_run = a.calibration.empty() && a.cv.empty();
  std::vector<std::string> sources;
  std::vector<sim::Calibration> calibrations;
  if (per_run) {
    std::map<std::pair<std::string, std::string>, sim::ChosenCalibration> chosen;
    for (const calibrate::MeasuredRun& r : runs) {
      const topology::DeviceType d = plan::load_scenario_cluster_spec(calibrate::scenario_of(r)).node.device;
      auto it = chosen.find({d.name, d.family});
      if (it == chosen.end()) it = chosen.emplace(std::pair{d.name, d.family}, sim::choose_calibration("", d.name, d.family)).first;
      calibrations.push_back(it->second.calibration);
      sources.push_back(it->second.source);
    }
    if (!a.quiet) {
      std::map<std::string, int> count;
      for (const std::string& s : sources) ++count[s];
      for (const auto& [source, n] : count)
        std::cerr << fmt::format("validate: {} run{} predicted with {}\n", n, n == 1 ? "" : "s", source);
    }
  } else {
    const topology::DeviceType device =
        runs.empty() ? topology::DeviceType{}
                     : plan::load_scenario_cluster_spec(calibrate::scenario_of(runs.front())).node.device;
    sim::Calibration calibration =
        sim::choose_calibration(a.calibration.empty() ? "none" : a.calibration, device.name, device.family).calibration;
    if (!a.cv.empty()) calibration = fit_for_cv(a, runs, calibration);
    calibrations.assign(runs.size(), calibration);
  }
  Progress progress("validate", runs.size(), progress_style_for_stderr(a.quiet));
  report::Validation v;
  {
    const ProgressScope scope(progress);  // calibrate/simulate.cpp ticks it per finished run
    v = calibrate::validate_runs(runs, calibrations, a.jobs);
  }
  progress.finish();
  for (size_t i = 0; i < sources.size(); ++i) v.rows[i].calibration = sources[i];
  const sim::Calibration calibration = calibrations.empty() ? sim::default_calibration() : calibrations.front();
  if (!fields.empty()) {
    std::vector<std::vector<std::string>> keys;
    for (const calibrate::MeasuredRun& r : runs) {
      keys.emplace_back();
      for (const std::string& f : fields) keys.back().push_back(calibrate::run_field(r, f));
    }
    report::set_groups(v, fields, keys);
  }
  if (out) write_report(*out, a, v, calibration);
  if (!a.json.empty())
    write_json_output(a.json, report::validation_to_json(v));
  else
    std::cout << report::validation_table(v);
  return kExitOk;
}

}  // namespace

void add_validate_command(CLI::App& root, Action& action) {
  auto args = std::make_shared<ValidateArgs>();
  auto* sub = root.add_subcommand("validate", "predict every measured run and report each error and the MAPE");
  sub->add_option("--calibration", args->calibration,
                  "calibration file, shipped:NAME or none (default: each run's device's, as predict picks it; with "
                  "--cv: where the fit starts, default none)");
  sub->add_option("--cv", args->cv,
                  "fit on the runs matching 'FIELD OP VALUE' (e.g. 'nodes<=2', 'model!=vgg16'; terms join with && "
                  "and ||: 'model!=vgg16 || gpus<=1') and validate the others");
  sub->add_option("--measurements", args->measurements, "measurements file (repeatable)")->required();
  sub->add_option("--fix", args->fixed, "with --cv: keep this parameter at its start value (as calibrate --fix)");
  sub->add_option("--fit", args->fit, "with --cv: fit this sourced parameter too (as calibrate --fit)");
  sub->add_flag("--model-factors", args->model_factors,
                "with --cv: fit a factor per model too (as calibrate --model-factors): with 'model!=M || gpus<=1', "
                "M's one-GPU runs calibrate its factor and its multi-GPU runs are predicted");
  sub->add_option("--json", args->json, "write the JSON result to FILE ('-' = standard output)");
  sub->add_option("--report", args->report_dir, "write report.json and report.html (charts, runs, calibration) into DIR");
  sub->add_option("--jobs", args->jobs, "simulations at a time (default 2)");
  sub->add_option("--by", args->by,
                  "also the MAPE, largest error and interval coverage per value of these run fields "
                  "('framework,model', 'nodes')");
  sub->add_flag("-q,--quiet", args->quiet, "no progress on standard error");
  sub->add_option("--convergence", args->convergence,
                  "check this convergence model (calibrate --convergence) on runs to a target accuracy instead; with "
                  "--time-to-train: the model that gives the epochs of records that state none");
  sub->add_flag("--time-to-train", args->time_to_train,
                "predict the training time of every record that has one (epochs as stated, or from --convergence) "
                "and report each error");
  sub->callback([&action, args] { action = [args] { return run_validate(*args); }; });
}

}  // namespace scaletwin::cli
