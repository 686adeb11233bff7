// Time to train, validated (see time_to_train.hpp).
#include "calibrate/time_to_train.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <sstream>

#include "calibrate/published_convergence.hpp"
#include "calibrate/simulate.hpp"
#include "calibrate/validate.hpp"
#include "core/error.hpp"
#include "core/progress.hpp"
#include "report/report.hpp"
#include "sim/calibration.hpp"
#include "sim/convergence.hpp"
#include "topology/cluster.hpp"

namespace scaletwin::calibrate {

namespace {

std::optional<double> score_of(std::vector<double> v);

// A number, or the score of an array of numbers (score_of); nullopt for anything else.
std::optional<double> mean_of(const Json& v) {
  if (v.is_number()) return v.get<double>();
  if (!v.is_array() || v.empty()) return std::nullopt;
  std::vector<double> values;
  for (const Json& x : v) {
    if (!x.is_number()) return std::nullopt;
    values.push_back(x.get<double>());
  }
  return score_of(values);
}

// MLPerf's score of several runs: the olympic mean (fastest and slowest dropped) of 5 or more, else the mean.
std::optional<double> score_of(std::vector<double> v) {
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  if (v.size() >= 5) v = std::vector<double>(v.begin() + 1, v.end() - 1);
  double sum = 0.0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

// Per run of "runs": the values of `key`, where every run has it as a number.
std::optional<double> runs_score(const Json& raw, const std::string& key) {
  if (!raw.contains("runs") || !raw["runs"].is_array() || raw["runs"].empty()) return std::nullopt;
  std::vector<double> v;
  for (const Json& run : raw["runs"]) {
    if (!run.is_object() || !run.contains(key) || !run[key].is_number()) return std::nullopt;
    v.push_back(run[key].get<double>());
  }
  return score_of(v);
}

// Half a step of the last printed digit, relative to the value: "~5 hours" -> 0.1, "45.4h" -> 0.0011.
double rounding_of(const std::string& printed) {
  const size_t start = printed.find_first_of("0123456789");
  if (start == std::string::npos) return 0.0;
  size_t end = start;
  while (end < printed.size() && (std::isdigit(static_cast<unsigned char>(printed[end])) || printed[end] == '.')) ++end;
  const std::string number = printed.substr(start, end - start);
  const double value = std::stod(number);
  const size_t dot = number.find('.');
  const double step = dot == std::string::npos ? 1.0 : std::pow(10.0, -static_cast<double>(number.size() - dot - 1));
  return value > 0.0 ? step / 2.0 / value : 0.0;
}

// The warm-up of the recipe at the fitted batch nearest (in log) to `batch`; 0 without a recipe.
double recipe_warmup(const plan::Convergence& c, double batch) {
  double best = 0.0, distance = 1e300;
  for (const auto& [b, w] : c.warmup_by_batch)
    if (std::abs(std::log(b / batch)) < distance) distance = std::abs(std::log(b / batch)), best = w;
  return best;
}

// The record's epochs (stated, and the evaluations its time includes) or where they come from (the convergence model
// and the warm-up); false with r.why_not set when neither.
bool read_epochs(const Json& raw, const std::optional<plan::Convergence>& convergence, TrainTimeRecord& r) {
  if (raw.contains("epochs") && raw["epochs"].is_number()) {
    r.epochs = raw["epochs"].get<double>();
    r.epochs_basis = "stated";
  } else if (raw.contains("epochs_per_run") && mean_of(raw["epochs_per_run"])) {
    r.epochs = *mean_of(raw["epochs_per_run"]);
    r.epochs_basis = "stated";
  } else if (const auto runs = runs_score(raw, "epochs")) {
    r.epochs = *runs;
    r.epochs_basis = "stated";
  } else {
    r.convergence = convergence ? convergence : sim::shipped_convergence(r.model);
    if (!r.convergence) {
      r.why_not = fmt::format("epochs not stated, and no convergence model of {} (--convergence)", r.model);
      return false;
    }
    if (!r.convergence->model.empty() && r.convergence->model != r.model) {
      r.why_not = fmt::format("epochs not stated, and the convergence model is of {}, not {}", r.convergence->model,
                              r.model);
      return false;
    }
    r.epochs_basis = "convergence model";
    if (raw.contains("lr_warmup_epochs") && raw["lr_warmup_epochs"].is_number())
      r.warmup_epochs = raw["lr_warmup_epochs"].get<double>();
    else
      r.warmup_epochs = recipe_warmup(*r.convergence, r.global_batch);
    return true;
  }
  // What the time covers beside training: the record's evaluation period where it states one; DeepLearningExamples'
  // training scripts validate after every epoch (their default).
  if (raw.contains("eval_every_epochs") && raw["eval_every_epochs"].is_number())
    r.eval_every_epochs = raw["eval_every_epochs"].get<double>();
  else if (raw.value("source_type", std::string()) == "readme_table")
    r.eval_every_epochs = 1.0;
  return true;
}

TrainTimeRecord read_record(const Json& raw, const std::string& file, size_t index,
                            const std::optional<plan::Convergence>& convergence) {
  TrainTimeRecord r;
  r.file = file;
  r.json_path = fmt::format("/runs/{}", index);
  r.id = raw.is_object() && raw.contains("id") && raw["id"].is_string() ? raw["id"].get<std::string>() : r.json_path;
  if (!raw.is_object()) {
    r.why_not = "not an object";
    return r;
  }
  r.model = raw.value("model", std::string());
  if (raw.contains("time_to_train_s") && raw["time_to_train_s"].is_number())
    r.measured_s = raw["time_to_train_s"].get<double>();
  else if (raw.contains("time_to_train_min") && mean_of(raw["time_to_train_min"]))
    r.measured_s = 60.0 * *mean_of(raw["time_to_train_min"]);
  else if (raw.contains("minutes") && mean_of(raw["minutes"]))
    r.measured_s = 60.0 * *mean_of(raw["minutes"]);
  else if (const auto runs = runs_score(raw, "time_to_train_min_derived"))
    r.measured_s = 60.0 * *runs;
  if (!(r.measured_s > 0.0)) {
    r.why_not = "no time to train (time_to_train_s, time_to_train_min, minutes or runs[].time_to_train_min_derived)";
    return r;
  }
  if (raw.contains("time_as_printed") && raw["time_as_printed"].is_string()) {
    r.printed = raw["time_as_printed"].get<std::string>();
    r.rounding = rounding_of(r.printed);
  }
  r.estimated = raw.value("time_estimated_per_readme", Json(false)).is_boolean() &&
                raw.value("time_estimated_per_readme", Json(false)).get<bool>();
  const int gpus = raw.contains("gpus") && raw["gpus"].is_number_integer() ? raw["gpus"].get<int>() : 0;
  Json run = raw;
  if (!(raw.contains("batch_per_gpu") && raw["batch_per_gpu"].is_number_integer())) {
    if (raw.contains("global_batch") && raw["global_batch"].is_number_integer() && gpus > 0 &&
        raw["global_batch"].get<int64_t>() % gpus == 0)
      run["batch_per_gpu"] = raw["global_batch"].get<int64_t>() / gpus;
    else {
      r.why_not = "batch not stated (batch_per_gpu, or global_batch and gpus)";
      return r;
    }
  }
  r.global_batch = static_cast<double>(run["batch_per_gpu"].get<int64_t>()) * std::max(gpus, 1);
  if (!read_epochs(raw, convergence, r)) return r;
  if (!run.contains("images_per_sec") || !run["images_per_sec"].is_number()) run["images_per_sec"] = 1.0;
  try {
    std::vector<MeasuredRun> parsed =
        parse_measurements(Json{{"format", "scaletwin-measurements/1"}, {"runs", Json::array({run})}}, file);
    parsed.front().json_path = r.json_path;
    r.run = std::move(parsed.front());
  } catch (const InputError& e) {
    std::string what = e.what();
    const size_t at = what.find("/runs/0");
    if (at != std::string::npos) what.replace(at, 7, r.json_path);
    r.why_not = "the throughput reader refuses it: " + what;
  }
  return r;
}

}  // namespace

std::vector<TrainTimeRecord> read_time_to_train(const std::vector<std::string>& files,
                                                const std::optional<plan::Convergence>& convergence) {
  std::vector<TrainTimeRecord> out;
  for (const std::string& file : files) {
    const Json doc = load_json_file(file);
    const JsonObject root = JsonObject::root(doc, file);
    if (root.get_string("format", "") != "scaletwin-measurements/1")
      root.fail("format", "\"scaletwin-measurements/1\" (records with a time to train)");
    const Json& runs = root.get_array("runs");
    for (size_t i = 0; i < runs.size(); ++i) out.push_back(read_record(runs[i], file, i, convergence));
  }
  return out;
}

bool only_time_to_train(const std::vector<std::string>& files) {
  bool any_time = false;
  for (const std::string& file : files) {
    const Json doc = load_json_file(file);
    if (!doc.is_object() || !doc.contains("runs") || !doc["runs"].is_array()) return false;
    for (const Json& run : doc["runs"]) {
      if (!run.is_object()) continue;
      if (run.contains("images_per_sec") && run["images_per_sec"].is_number()) return false;
      any_time = any_time || run.contains("time_to_train_s") || run.contains("time_to_train_min") ||
                 run.contains("minutes") || runs_score(run, "time_to_train_min_derived").has_value();
    }
  }
  return any_time;
}

TrainTimeCheck check_time_to_train(std::vector<TrainTimeRecord> records, const std::string& calibration, int parallel,
                                   bool quiet) {
  TrainTimeCheck check;
  std::vector<MeasuredRun> runs;
  std::vector<size_t> of;
  for (size_t i = 0; i < records.size(); ++i)
    if (records[i].run) runs.push_back(*records[i].run), of.push_back(i);
  // Each run's device's calibration, as predict picks it.
  std::vector<sim::Calibration> calibrations;
  std::map<std::pair<std::string, std::string>, sim::ChosenCalibration> chosen;
  for (size_t k = 0; k < runs.size(); ++k) {
    const topology::DeviceType d = plan::load_scenario_cluster_spec(scenario_of(runs[k])).node.device;
    auto it = chosen.find({d.name, d.family});
    if (it == chosen.end())
      it = chosen.emplace(std::pair{d.name, d.family}, sim::choose_calibration(calibration, d.name, d.family)).first;
    calibrations.push_back(it->second.calibration);
    records[of[k]].calibration = it->second.source;
  }
  if (!quiet) std::cerr << fmt::format("validate: {} of {} records have a time to predict\n", runs.size(), records.size());
  const report::Validation v = runs.empty() ? report::Validation{} : validate_runs(runs, calibrations, parallel);
  // The inference rate where evaluations count (epochs from the convergence model): the forward phase of the step.
  std::vector<SimJob> eval_jobs;
  std::vector<size_t> eval_of;
  for (size_t k = 0; k < runs.size(); ++k)
    if (records[of[k]].epochs_basis == "convergence model" || records[of[k]].eval_every_epochs > 0.0) {
      eval_jobs.push_back(SimJob{scenario_of(runs[k]), runs[k].gpus(), calibrations[k]});
      eval_of.push_back(k);
    }
  const std::vector<report::PointResult> eval_points =
      eval_jobs.empty() ? std::vector<report::PointResult>{} : simulate_all(eval_jobs, parallel, sim::RunOptions{});
  std::map<size_t, const report::PointResult*> point_of;
  for (size_t e = 0; e < eval_of.size(); ++e) point_of[eval_of[e]] = &eval_points[e];
  double ape = 0.0;
  for (size_t k = 0; k < runs.size(); ++k) {
    TrainTimeRecord& r = records[of[k]];
    const report::ValidationRow& row = v.rows[k];
    r.predicted_images_per_sec = row.predicted_images_per_sec;
    double convergence_log_sd = 0.0;
    if (r.epochs_basis == "convergence model") {
      const plan::Convergence& c = *r.convergence;
      const double critical = sim::critical_batch_for(c, c.optimizer);
      const double images = sim::images_to_target(c, "tuned", r.global_batch, r.global_batch, 0.0, critical,
                                                  r.warmup_epochs);
      const double every = c.eval_every_epochs > 0.0 ? c.eval_every_epochs : kRcpEvalEveryEpochs;
      const sim::ExpectedEvaluation seen = sim::expected_evaluation_at(images / kImagenetTrainImages, every);
      r.epochs = seen.epochs;
      r.evaluations = seen.evaluations;
      convergence_log_sd = std::hypot(c.log_sd, sim::convergence_extrapolation_log_sd(c, r.global_batch, critical));
    }
    if (r.epochs_basis == "stated" && r.eval_every_epochs > 0.0)
      r.evaluations = std::floor(r.epochs / r.eval_every_epochs + 1e-9);
    if (r.evaluations > 0.0) {
      r.inference_images_per_sec = sim::inference_images_per_sec(*point_of.at(k), r.global_batch);
      r.eval_s = r.inference_images_per_sec > 0.0 ? r.evaluations * kImagenetValImages / r.inference_images_per_sec
                                                  : 0.0;
    }
    r.train_s = r.predicted_images_per_sec > 0.0 ? r.epochs * kImagenetTrainImages / r.predicted_images_per_sec : 0.0;
    r.predicted_s = r.train_s + r.eval_s;
    r.error = r.predicted_s / r.measured_s - 1.0;
    if (row.interval_high > 0.0) {
      const double up = std::log(row.interval_high / r.predicted_images_per_sec) / report::kZ90;
      const double down = std::log(r.predicted_images_per_sec / row.interval_low) / report::kZ90;
      r.low_s = r.predicted_s / std::exp(report::kZ90 * std::hypot(up, convergence_log_sd));
      r.high_s = r.predicted_s * std::exp(report::kZ90 * std::hypot(down, convergence_log_sd));
      ++check.with_interval;
      if (r.measured_s * (1.0 + r.rounding) >= r.low_s && r.measured_s * (1.0 - r.rounding) <= r.high_s) ++check.inside;
    }
    ape += std::abs(r.error);
    ++check.predicted;
  }
  check.mape = check.predicted > 0 ? ape / check.predicted : 0.0;
  check.rows = std::move(records);
  return check;
}

Json time_to_train_json(const TrainTimeCheck& check) {
  Json rows = Json::array();
  for (const TrainTimeRecord& r : check.rows) {
    Json j = {{"id", r.id}, {"file", r.file}, {"record", r.json_path}, {"predicted", r.run.has_value()}};
    if (r.measured_s > 0.0) j["measured_s"] = r.measured_s;
    if (!r.printed.empty()) j["printed"] = r.printed, j["printed_rounding"] = r.rounding;
    if (!r.run) {
      j["why_not"] = r.why_not;
    } else {
      j["estimated_by_readme"] = r.estimated;
      j["epochs"] = r.epochs;
      j["epochs_basis"] = r.epochs_basis;
      j["global_batch"] = r.global_batch;
      j["predicted_images_per_sec"] = r.predicted_images_per_sec;
      j["train_s"] = r.train_s;
      j["evaluations"] = r.evaluations;
      j["eval_s"] = r.eval_s;
      j["predicted_s"] = r.predicted_s;
      j["error"] = r.error;
      j["calibration"] = r.calibration;
      if (r.convergence) j["convergence"] = r.convergence->source;
      if (r.high_s > 0.0) j["interval_s"] = Json::array({r.low_s, r.high_s});
    }
    rows.push_back(std::move(j));
  }
  Json out = {{"format", "scaletwin-time-to-train-check/1"},
              {"records", check.rows.size()},
              {"predicted", check.predicted},
              {"mape", check.mape},
              {"with_interval", check.with_interval},
              {"inside_interval", check.inside},
              {"rows", rows}};
  return out;
}

std::string time_to_train_table(const TrainTimeCheck& check) {
  std::ostringstream out;
  out << fmt::format("{:<58} {:>4} {:>6} {:>6} {:>10} {:>10} {:>7} {:>21}\n", "run", "gpus", "batch", "epochs",
                     "measured", "predicted", "error", "90% interval");
  std::map<std::string, int> not_predicted;
  for (const TrainTimeRecord& r : check.rows) {
    if (!r.run) {
      const std::string reason = r.why_not.substr(0, r.why_not.find(" ("));
      ++not_predicted[r.why_not.starts_with("the throughput reader") ? std::string("the throughput reader refuses it")
                                                                     : reason];
      continue;
    }
    out << fmt::format("{:<58} {:>4} {:>6.0f} {:>6.1f} {:>10} {:>10} {:>+6.1f}% {:>21}\n", r.id.substr(0, 58),
                       r.run->gpus(), r.global_batch, r.epochs, format_duration(r.measured_s),
                       format_duration(r.predicted_s), 100.0 * r.error,
                       r.high_s > 0.0 ? format_duration(r.low_s) + "-" + format_duration(r.high_s) : std::string("-"));
  }
  out << fmt::format("time to train: {} of {} records predicted, MAPE {:.1f}%{}\n", check.predicted, check.rows.size(),
                     100.0 * check.mape,
                     check.with_interval > 0
                         ? fmt::format(", {} of {} inside their 90% interval (the printed rounding allowed)",
                                       check.inside, check.with_interval)
                         : std::string());
  for (const auto& [reason, n] : not_predicted) out << fmt::format("  not predicted: {} record{}: {}\n", n, n == 1 ? "" : "s", reason);
  for (const TrainTimeRecord& r : check.rows)
    if (!r.run && !r.why_not.starts_with("no time to train"))
      out << fmt::format("    {} {}: {}\n", r.json_path, r.id, r.why_not);
  return out.str();
}

}  // namespace scaletwin::calibrate
