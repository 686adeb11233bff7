// scaletwin calibrate: fits the simulator's parameters to measured runs and writes a calibration file.
//
//   scaletwin calibrate --measurements FILE [--measurements FILE ...] -o CALIBRATION [--json FILE]
//                       [--start CALIBRATION] [--collective-bench FILE ...] [--bench-cluster NAME_OR_FILE]
//                       [--bench-algorithm NAME] [--holdout 'FIELD OP VALUE'] [--outer N] [--jobs N] [--no-validate]
//                       [--fix NAME ...] [--fit NAME ...] [--model-factors | --model-factors-only] [--quiet]
//   scaletwin calibrate --convergence --measurements FILE [--measurements FILE ...] -o CONVERGENCE [--json FILE]
//
// --collective-bench reads nccl-tests output (text or scaletwin-collective-bench/1 JSON) or bench_allreduce's table
// and sets the latency and bandwidth factors of the link class its ring crosses (on --bench-cluster, default the
// first run's cluster); those factors are then not fitted. --holdout leaves the matching runs out of the fit and
// reports the error of predicting them (grouped cross-validation, e.g. --holdout 'nodes>1'). The calibration file
// carries the fit (parameters with standard errors, MAPE, the networks fitted, each stack's largest run) under "fit",
// of which `predict` reads the networks and the scale (to say when a scenario's network is not among them, or its
// sweep goes beyond them). The count of simulations run so far goes to stderr unless --quiet (the fit's total is not
// known ahead). --fix keeps a parameter
// at its start value; a device field the start gives from a source (its "sourced": the K80's memory rate and K½,
// sim/calibration.cpp) is kept without it, and fitted only when --fit names it. --model-factors-only fits nothing but
// a factor per measured model on its conv and matmul efficiency, from --start's values (a user's own network measured
// on a node, on a shipped calibration whose prediction interval it keeps).
// --convergence fits the convergence model (sim/convergence.hpp, calibrate/convergence_fit.hpp) to runs of
// `scaletwin run --target-accuracy` instead and writes a scaletwin-convergence/1 file, which a scenario's
// training.convergence names and `validate --convergence` checks. Given one file of published convergence (MLPerf's
// reference convergence points and Goyal et al.'s rows, ../shared/reference/modern/convergence.json), it fits the
// model to those instead (calibrate/published_convergence.hpp): calibrations/resnet50-imagenet-convergence.json.
#include <fmt/format.h>

#include <cmath>

#include <iostream>

#include "calibrate/collective_bench.hpp"
#include "calibrate/convergence_fit.hpp"
#include "calibrate/published_convergence.hpp"
#include "calibrate/jitter.hpp"
#include "calibrate/fit.hpp"
#include "cli/command.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/progress.hpp"
#include "report/report.hpp"

namespace scaletwin::cli {

namespace {

// --start's calibration (a file, shipped:NAME or none), its errors named as --start's.
sim::Calibration start_calibration(const std::string& choice) {
  try {
    return sim::choose_calibration(choice, "").calibration;
  } catch (const InputError& e) {
    if (e.json_path() != "--calibration") throw;
    std::string message = e.what();
    for (size_t at = message.find("--calibration"); at != std::string::npos; at = message.find("--calibration", at))
      message.replace(at, 13, "--start");
    throw InputError::with_message(message, e.file(), "--start");
  }
}

struct CalibrateArgs {
  std::vector<std::string> measurements;
  std::string output;
  std::string json;
  std::string start;
  std::vector<std::string> benches;
  std::string bench_cluster;
  std::string bench_algorithm = "ring";
  std::string holdout;
  bool convergence = false;
  int outer = 3;
  int jobs = 2;
  bool no_validate = false;
  bool model_factors = false;
  bool only_model_factors = false;
  std::vector<std::string> fixed;
  std::vector<std::string> fit;
  bool quiet = false;
};

// Applies every collective benchmark to `c`; returns what was fitted, for the report.
Json apply_benches(const CalibrateArgs& a, const std::vector<calibrate::MeasuredRun>& runs, sim::Calibration& c,
                   std::set<sim::LinkClass>& fixed) {
  Json out = Json::array();
  for (const std::string& path : a.benches) {
    const calibrate::CollectiveBench bench = calibrate::load_collective_bench(path);
    topology::ClusterSpec spec = topology::load_cluster_spec(a.bench_cluster.empty() ? runs.front().cluster : a.bench_cluster);
    const int per_node = std::max(1, spec.node.devices_per_node);
    const topology::Cluster cluster(std::move(spec), (bench.ranks + per_node - 1) / per_node);
    const bool has_algorithm = std::any_of(bench.samples.begin(), bench.samples.end(),
                                           [&](const auto& s) { return s.algorithm == a.bench_algorithm; });
    const std::string algorithm = has_algorithm ? a.bench_algorithm : "";
    const calibrate::LinkFit f = calibrate::fit_link(bench, algorithm, cluster, c);
    c.links[f.link] = sim::LinkFactors{f.latency_factor, f.bandwidth_factor};
    fixed.insert(f.link);
    out.push_back({{"file", path}, {"format", bench.format}, {"ranks", bench.ranks}, {"points", f.measured.points},
                   {"link", sim::link_class_name(f.link)}, {"latency_s", f.measured.latency_s},
                   {"bus_bandwidth_Bps", f.measured.bus_bandwidth_Bps}, {"route_latency_s", f.route_latency_s},
                   {"route_bandwidth_Bps", f.route_bandwidth_Bps}, {"latency_factor", f.latency_factor},
                   {"bandwidth_factor", f.bandwidth_factor}});
  }
  return out;
}

// Published convergence (MLPerf's RCPs, Goyal et al.'s rows: calibrate/published_convergence.hpp), one file alone.
int run_published_convergence_fit(const CalibrateArgs& a) {
  if (a.measurements.size() != 1)
    throw InputError(a.measurements[1], "--measurements",
                     "one file of published convergence (its \"rcp\" records), not mixed with other files");
  calibrate::PublishedConvergence data = calibrate::read_published_convergence(a.measurements.front());
  const calibrate::PublishedFit fit = calibrate::fit_published_convergence(data);
  const Json out = calibrate::published_fit_to_json(fit, data);
  write_json_output(a.output, out);
  if (!a.json.empty()) write_json_output(a.json, out);
  fmt::print("{}convergence written to {}\n", calibrate::published_fit_table(fit, data), a.output);
  return kExitOk;
}

int run_convergence_fit(const CalibrateArgs& a) {
  if (!a.measurements.empty() && calibrate::is_published_convergence(load_json_file(a.measurements.front())))
    return run_published_convergence_fit(a);
  const calibrate::ConvergenceData data = calibrate::read_convergence_runs(a.measurements);
  calibrate::ConvergenceFit fit = calibrate::fit_convergence(data);
  fit.model.source = a.output;
  const Json out = calibrate::convergence_to_json(fit, data);
  write_json_output(a.output, out);
  if (!a.json.empty()) write_json_output(a.json, out);
  auto se = [](const std::optional<double>& v, const char* unit) {
    return v ? fmt::format(" (s.e. {:.3g}{})", *v, unit) : std::string(" (not identified)");
  };
  fmt::print("convergence of {} to test accuracy {} ({} learning-rate scaling from batch {}), {} runs:\n", data.model,
             data.target_accuracy, data.lr_scaling, data.reference_batch, data.runs.size());
  fmt::print("  images_min      {:>10.0f}{}\n", fit.model.images_min, se(fit.se_log_images_min, " in log"));
  fmt::print("  critical_batch  {:>10.0f}{}\n", fit.model.critical_batch, se(fit.se_log_critical_batch, " in log"));
  fmt::print("  staleness_cost  {:>10.3f}{}\n", fit.model.staleness_cost, se(fit.se_staleness_cost, ""));
  fmt::print("  in-sample MAPE {:.1f}%, leave-one-configuration-out log sd {:.3f} (90% interval x/{:.2f})\n",
             100.0 * fit.in_sample_mape, fit.model.log_sd, report::interval_factor(fit.model.log_sd));
  if (out.contains("noise_scale"))
    fmt::print("  measured gradient noise scale B_simple (median over runs): {:.0f}\n",
               out["noise_scale"]["median_b_simple"].get<double>());
  fmt::print("convergence written to {}\n", a.output);
  return kExitOk;
}

int run_calibrate(const CalibrateArgs& a) {
  if (a.convergence) return run_convergence_fit(a);
  if (a.jobs < 1) throw InputError("", "--jobs", "at least 1");
  if (a.outer < 1) throw InputError("", "--outer", "at least 1");
  std::vector<calibrate::MeasuredRun> all = calibrate::load_measurements(a.measurements);
  print_notes("calibrate", calibrate::reading_notes(all));
  std::vector<calibrate::MeasuredRun> train, held;
  if (a.holdout.empty()) {
    train = all;
  } else {
    const auto filter = calibrate::parse_run_filter(a.holdout, "--holdout");
    for (auto& r : all) (filter(r) ? held : train).push_back(r);
    if (train.empty()) throw InputError("", "--holdout", "a filter that leaves some runs to fit");
  }
  sim::Calibration start = a.start.empty() ? sim::default_calibration() : start_calibration(a.start);
  calibrate::FitOptions options;
  options.parallel = a.jobs;
  options.outer_iterations = a.outer;
  options.validate = !a.no_validate;
  options.model_factors = a.model_factors;
  options.only_model_factors = a.only_model_factors;
  options.fixed = a.fixed;
  options.fit = a.fit;
  const Json benches = apply_benches(a, train, start, options.fixed_links);
  // Measured, not fitted: set before the fit so that the fitted values explain what the jitter does not.
  const std::vector<calibrate::MeasuredJitter> jitter = calibrate::apply_measured_jitter(train, start);
  Progress progress("calibrate: simulations", 0, progress_style_for_stderr(a.quiet));
  const ProgressScope progress_scope(progress);  // calibrate/simulate.cpp ticks it per finished simulation
  const calibrate::FitResult fit = calibrate::fit_calibration(train, start, options);
  for (const std::string& f : fit.fix_not_exercised)  // said even with --quiet: a misspelt name fixes nothing
    std::cerr << fmt::format("calibrate: --fix {}: names no parameter these runs exercise; it fixes nothing\n", f);
  Json fit_json = calibrate::fit_to_json(fit);
  fit_json["run_ids"] = Json::array();  // what validate counts as in-sample
  for (const calibrate::MeasuredRun& r : train) fit_json["run_ids"].push_back(r.id);
  if (!benches.empty()) fit_json["collective_benchmarks"] = benches;
  if (!jitter.empty()) fit_json["compute_jitter"] = calibrate::measured_jitter_to_json(jitter);
  report::Validation holdout;
  if (!held.empty()) {
    holdout = calibrate::validate_runs(held, fit.calibration, a.jobs);
    fit_json["holdout"] = {{"filter", a.holdout}, {"runs", held.size()}, {"mape", holdout.mape}};
  }
  progress.finish();
  Json file = sim::calibration_to_json(fit.calibration);
  file["fit"] = fit_json;
  write_json_output(a.output, file);
  if (!a.json.empty()) {
    Json result = {{"calibration", a.output}, {"fit", fit_json}};
    if (options.validate) result["in_sample"] = report::validation_to_json(fit.in_sample);
    if (!held.empty()) result["holdout"] = report::validation_to_json(holdout);
    write_json_output(a.json, result);
  }
  if (a.json != "-") {
    std::cout << calibrate::fit_table(fit);
    for (const Json& b : benches)
      std::cout << fmt::format("{} ({}): {} links, latency factor {:.3g}, bandwidth factor {:.3g}\n",
                               b["file"].get<std::string>(), b["format"].get<std::string>(),
                               b["link"].get<std::string>(), b["latency_factor"].get<double>(),
                               b["bandwidth_factor"].get<double>());
    for (const calibrate::MeasuredJitter& m : jitter)
      std::cout << fmt::format("{}: compute jitter {:.2f}% (measured, mean of {} run(s))\n", m.device,
                               100.0 * m.value, m.runs.size());
    if (!held.empty())
      std::cout << fmt::format("held out ({}):\n", a.holdout) << report::validation_table(holdout);
    std::cout << fmt::format("calibration written to {}\n", a.output);
  }
  return kExitOk;
}

}  // namespace

void add_calibrate_command(CLI::App& root, Action& action) {
  auto args = std::make_shared<CalibrateArgs>();
  auto* sub = root.add_subcommand("calibrate", "fit the simulator's parameters to measured runs");
  sub->add_option("--measurements", args->measurements, "measurements file (repeatable)")->required();
  sub->add_option("-o,--output", args->output, "calibration file to write")->required();
  sub->add_option("--json", args->json, "write the fit and its validation to FILE ('-' = standard output)");
  sub->add_option("--start", args->start,
                  "calibration to start from: a file, shipped:NAME or none (default: the built-in defaults)");
  sub->add_option("--collective-bench", args->benches,
                  "nccl-tests output (text or JSON) or bench_allreduce output setting one link class (repeatable)");
  sub->add_option("--bench-cluster", args->bench_cluster, "cluster the benchmarks ran on (default: the first run's)");
  sub->add_option("--bench-algorithm", args->bench_algorithm, "algorithm rows of bench_allreduce to use (default ring)");
  sub->add_option("--holdout", args->holdout,
                  "leave out runs matching 'FIELD OP VALUE' (e.g. 'nodes>1'; terms join with && and ||) and report "
                  "their error");
  sub->add_option("--outer", args->outer, "linearise-and-fit rounds (default 3)");
  sub->add_option("--jobs", args->jobs, "simulations at a time (default 2)");
  sub->add_flag("--no-validate", args->no_validate, "skip the message-level validation of the fitted runs");
  sub->add_option("--fix", args->fixed,
                  "keep this parameter at its start value (a name as the fit reports it, or its last part; repeatable)");
  sub->add_option("--fit", args->fit,
                  "fit this device field too though the start calibration gives it from a source (its \"sourced\": "
                  "the K80's memory, reduction_half_length, conv_knee_flops_per_byte; repeatable)");
  sub->add_flag("--model-factors", args->model_factors,
                "also fit a factor per model on its conv and matmul efficiency (only for models you measured)");
  sub->add_flag("--model-factors-only", args->only_model_factors,
                "fit nothing but a factor per measured model (one model too), everything else kept from --start: "
                "your own network's one-node runs on a shipped calibration");
  sub->add_flag("-q,--quiet", args->quiet, "no progress on standard error");
  sub->add_flag("--convergence", args->convergence,
                "fit the convergence model (time to accuracy) to runs of scaletwin run --target-accuracy instead");
  sub->callback([&action, args] { action = [args] { return run_calibrate(*args); }; });
}

}  // namespace scaletwin::cli
