// Report output: JSON (spec fields first, then the breakdowns), the readable table, and Chrome trace events.
#include "report/report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/progress.hpp"
#include "core/units.hpp"

namespace scaletwin::report {

Json point_to_json(const PointResult& p, bool with_trace) {
  Json j = {{"gpus", p.gpus},
            {"nodes", p.nodes},
            {"iteration_s", p.iteration_s},
            {"images_per_sec", p.images_per_sec},
            {"speedup", p.speedup},
            {"efficiency", p.efficiency},
            {"speedup_over_one_node", p.speedup_over_one_node},
            {"compute_s", p.compute_s},
            {"exposed_comm_s", p.exposed_comm_s},
            {"jitter_wait_s", p.jitter_wait_s},
            {"extrapolation_log_sd", p.extrapolation_log_sd},
            {"sync", p.sync},
            {"fidelity", p.fidelity},
            {"plan_hash", p.plan_hash},
            {"critical_worker", p.critical_worker},
            {"simulated_s", p.simulated_s},
            {"phases_s", p.phase_s}};
  if (p.batch_per_gpu > 0) j["batch_per_gpu"] = p.batch_per_gpu;
  Json colls = Json::array();
  for (const CollectiveTime& c : p.collectives)
    colls.push_back({{"label", c.label}, {"purpose", c.purpose}, {"bytes", c.bytes}, {"seconds", c.seconds}});
  j["collectives"] = colls;
  if (p.sync != "sync")
    j["staleness"] = {{"mean", p.staleness_mean}, {"max", p.staleness_max}, {"samples", p.staleness_samples}};
  if (p.time_to_target_s > 0.0) {
    j["update_batch"] = p.update_batch;
    j["images_to_target"] = p.images_to_target;
    j["time_to_target_s"] = p.time_to_target_s;
    if (p.epochs_to_target > 0.0) {
      j["epochs_to_target"] = p.epochs_to_target;
      j["evaluations"] = p.evaluations;
      j["eval_s"] = p.eval_s;
    }
    if (p.convergence_extrapolation_log_sd > 0.0)
      j["convergence_extrapolation_log_sd"] = p.convergence_extrapolation_log_sd;
  }
  if (p.range_high_images_per_sec > 0.0)
    j["assumed_range_images_per_sec"] = Json::array({p.range_low_images_per_sec, p.range_high_images_per_sec});
  for (const auto& [what, rate] : p.alternatives) j[what + "_images_per_sec"] = rate;
  if (with_trace) {
    j["tracks"] = p.tracks;
    Json ev = Json::array();
    for (const TraceEvent& e : p.trace) ev.push_back({e.track, e.name, e.category, e.start_s, e.end_s, e.layer});
    j["trace"] = ev;
  }
  return j;
}

PointResult point_from_json(const Json& j) {
  PointResult p;
  p.gpus = j.at("gpus");
  p.nodes = j.at("nodes");
  p.iteration_s = j.at("iteration_s");
  p.images_per_sec = j.at("images_per_sec");
  p.speedup = j.at("speedup");
  p.efficiency = j.at("efficiency");
  p.speedup_over_one_node = j.at("speedup_over_one_node");
  p.compute_s = j.at("compute_s");
  p.exposed_comm_s = j.at("exposed_comm_s");
  p.jitter_wait_s = j.value("jitter_wait_s", 0.0);
  p.extrapolation_log_sd = j.value("extrapolation_log_sd", 0.0);
  p.sync = j.at("sync");
  p.fidelity = j.at("fidelity");
  p.plan_hash = j.at("plan_hash");
  p.critical_worker = j.at("critical_worker");
  p.simulated_s = j.at("simulated_s");
  p.phase_s = j.at("phases_s").get<std::map<std::string, double>>();
  for (const Json& c : j.at("collectives")) p.collectives.push_back({c.at("label"), c.at("purpose"), c.at("bytes"), c.at("seconds")});
  if (j.contains("staleness")) {
    p.staleness_mean = j["staleness"].at("mean");
    p.staleness_max = j["staleness"].at("max");
    p.staleness_samples = j["staleness"].at("samples");
  }
  if (j.contains("assumed_range_images_per_sec")) {
    p.range_low_images_per_sec = j["assumed_range_images_per_sec"].at(0);
    p.range_high_images_per_sec = j["assumed_range_images_per_sec"].at(1);
  }
  const std::string suffix = "_images_per_sec";  // point_to_json writes each alternative as WHAT_images_per_sec
  for (const auto& [key, value] : j.items())
    if (key.starts_with("without_") && key.ends_with(suffix))
      p.alternatives[key.substr(0, key.size() - suffix.size())] = value;
  if (j.contains("tracks")) p.tracks = j["tracks"].get<std::vector<std::string>>();
  if (j.contains("trace"))
    for (const Json& e : j["trace"])
      p.trace.push_back({e.at(0), e.at(1), e.at(2), e.at(3), e.at(4), e.size() > 5 ? e.at(5).get<int>() : -1});
  return p;
}

double interval_factor(double log_sd) { return std::exp(kZ90 * log_sd); }

std::pair<double, double> prediction_interval(double x, double log_sd) {
  return {x / interval_factor(log_sd), x * interval_factor(log_sd)};
}

std::pair<double, double> interval_ratios(double log_sd, double x, const std::vector<double>& alternatives) {
  const double factor = log_sd > 0.0 ? interval_factor(log_sd) : 1.0;
  double low = 1.0, high = 1.0;
  for (const double a : alternatives)
    if (a > 0.0 && x > 0.0) {
      low = std::min(low, a / x);
      high = std::max(high, a / x);
    }
  return {low / factor, high * factor};
}

std::pair<double, double> interval_ratios(double log_sd, const PointResult& p) {
  if (log_sd > 0.0) log_sd = std::hypot(log_sd, p.extrapolation_log_sd);
  return interval_ratios(log_sd, p.images_per_sec,
                         alternative_rates(p.range_low_images_per_sec, p.range_high_images_per_sec, p.alternatives));
}

std::vector<double> alternative_rates(double range_low, double range_high,
                                      const std::map<std::string, double>& alternatives) {
  std::vector<double> out;
  if (range_high > 0.0) out = {range_low, range_high};
  for (const auto& [what, rate] : alternatives) out.push_back(rate);
  return out;
}

bool has_alternatives(const PointResult& p) { return p.range_high_images_per_sec > 0.0 || !p.alternatives.empty(); }

std::string assumed_rate_note(const AssumedRate& rate) {
  return fmt::format("{}'s NIC rate is an assumption ({} per direction): on several nodes the interval covers the "
                     "predictions at {} and at {} too", rate.cluster, format_bandwidth(rate.stated_Bps),
                     format_bandwidth(rate.low_Bps), format_bandwidth(rate.high_Bps));
}

std::string network_assumption_note(const NetworkAssumption& a) {
  return fmt::format("the network between nodes of {} rests on assumptions ({}, /network/assumption): {}", a.cluster,
                     a.file, a.text);
}

bool has_interval(const Report& r, const PointResult& p) { return r.interval_log_sd > 0.0 || has_alternatives(p); }

std::string dispatch_beyond_note(const DispatchBeyondSupport& beyond) {
  return fmt::format("{}'s dispatch adds {:.0f}% of the step's compute at batch {}, more than the {:.0f}% of any run "
                     "its calibration was fitted on: the interval covers the prediction without the dispatch too",
                     beyond.stack, 100.0 * beyond.share, beyond.batch_per_gpu, 100.0 * beyond.support);
}

std::string unfitted_network_note(const UnfittedNetwork& u) {
  std::string note = fmt::format("{} is not among the networks the calibration was fitted on for {} ({})", u.network,
                                 u.device, fmt::join(u.fitted, ", "));
  if (u.left_out_folds > 0)
    note += fmt::format(": the {} network{} its cross-validation left out {} predicted {:.1f}-{:.1f}% off",
                        u.left_out_folds, u.left_out_folds == 1 ? "" : "s", u.left_out_folds == 1 ? "was" : "were",
                        u.left_out_mape_low, u.left_out_mape_high);
  if (u.interval_log_sd > 0.0)
    note += fmt::format(", and its interval is drawn from theirs (x{:.3f}^-+1)", interval_factor(u.interval_log_sd));
  return note + "; a factor of its own from its one-GPU runs narrows that (calibrate --model-factors-only, "
                "docs/results/k80-calibration.md)";
}

std::string unfitted_device_note(const UnfittedDevice& u) {
  std::string note = fmt::format("{} ({}) is not a device the calibration was fitted on", u.device,
                                 u.family.empty() ? "no family" : u.family);
  if (!u.fitted.empty()) note += fmt::format(" (it fitted {})", fmt::join(u.fitted, ", "));
  note += fmt::format(": its efficiencies are the entry \"{}\"'s and its peaks and bandwidths its datasheet's", u.entry);
  if (u.transfer_runs > 0)
    note += fmt::format("; the {} runs of families that {}'s cross-validation left out were predicted {:.1f}% off (MAPE)",
                        u.transfer_runs, u.transfer_source, u.transfer_mape);
  if (u.interval_log_sd > 0.0)
    return note + fmt::format(", and its interval is drawn from theirs (x{:.3f}^-+1)", interval_factor(u.interval_log_sd));
  return note + (u.transfer_runs > 0 ? "; the calibration has no interval of its own, and none is drawn"
                                      : "; no cross-device error is known to draw an interval from");
}

Json unfitted_device_to_json(const UnfittedDevice& u) {
  Json j = {{"device", u.device}, {"family", u.family}, {"entry", u.entry}, {"fitted", u.fitted}};
  if (u.transfer_runs > 0)
    j["left_out_families"] = {{"calibration", u.transfer_source}, {"runs", u.transfer_runs}, {"mape", u.transfer_mape}};
  if (u.interval_log_sd > 0.0) j["interval_log_sd"] = u.interval_log_sd;
  return j;
}

Json unfitted_network_to_json(const UnfittedNetwork& u) {
  Json j = {{"network", u.network}, {"device", u.device}, {"fitted", u.fitted}};
  if (u.left_out_folds > 0)
    j["left_out_networks"] = {{"folds", u.left_out_folds}, {"mape", {u.left_out_mape_low, u.left_out_mape_high}}};
  if (u.interval_log_sd > 0.0) j["interval_log_sd"] = u.interval_log_sd;
  return j;
}

std::string beyond_fitted_scale_note(const BeyondFittedScale& b) {
  const auto count = [](int n, const char* what) { return fmt::format("{} {}{}", n, what, n == 1 ? "" : "s"); };
  const std::string sweep = fmt::format("the sweep goes to {} ({})", count(b.nodes, "node"), count(b.gpus, "GPU"));
  const std::string growth =
      b.growth_per_doubling > 0.0
          ? fmt::format("; the interval widens by x{:.3f} per doubling of nodes or GPUs beyond it (in quadrature: the "
                        "error per doubling of the cross-validation fold {})",
                        interval_factor(b.growth_per_doubling), b.growth_fold)
          : std::string();
  if (b.fitted_gpus == 0)
    return fmt::format("no run of {} is among those the calibration was fitted on, and {}: its costs are its stack "
                       "file's (stacks/{}.json), not fitted",
                       b.stack, sweep, b.stack) +
           growth;
  std::string note = fmt::format("{}'s runs in the calibration reach {} ({}); {}: beyond that scale the prediction "
                                 "extrapolates",
                                 b.stack, count(b.fitted_nodes, "node"), count(b.fitted_gpus, "GPU"), sweep);
  if (b.fitted_gpus == 1)
    note += fmt::format(", and {}'s costs between GPUs{} are its stack file's (stacks/{}.json), fitted on no run",
                        b.stack, b.nodes > 1 ? " and nodes" : "", b.stack);
  else if (b.fitted_nodes == 1 && b.nodes > 1)
    note += fmt::format(", and {}'s costs across nodes are its stack file's (stacks/{}.json), fitted on no run",
                        b.stack, b.stack);
  return note + growth;
}

Json beyond_fitted_scale_to_json(const BeyondFittedScale& b) {
  Json j = {{"stack", b.stack}, {"fitted_nodes", b.fitted_nodes}, {"fitted_gpus", b.fitted_gpus}, {"nodes", b.nodes},
            {"gpus", b.gpus}};
  if (b.growth_per_doubling > 0.0) j["growth_per_doubling"] = {{"log_sd", b.growth_per_doubling}, {"fold", b.growth_fold}};
  return j;
}

std::string error_label(double error) { return fmt::format("{:+.1f}%", 100.0 * error); }

Json report_to_json(const Report& r) {
  Json preds = Json::array();
  for (const PointResult& p : r.predictions) {
    Json j = point_to_json(p, false);
    if (has_interval(r, p)) {  // times are the inverse of the rate: their interval is the rate's, inverted
      const auto [lo, hi] = interval_ratios(r.interval_log_sd, p);
      j["images_per_sec_interval"] = Json::array({p.images_per_sec * lo, p.images_per_sec * hi});
      j["iteration_s_interval"] = Json::array({p.iteration_s / hi, p.iteration_s / lo});
      j["speedup_interval"] = Json::array({p.speedup * lo, p.speedup * hi});
    }
    if (p.time_to_target_s > 0.0 && (r.time_log_sd > 0.0 || has_alternatives(p))) {
      const auto [lo, hi] = interval_ratios(std::hypot(r.time_log_sd, p.convergence_extrapolation_log_sd), p);
      j["time_to_target_s_interval"] = Json::array({p.time_to_target_s / hi, p.time_to_target_s / lo});
    }
    preds.push_back(std::move(j));
  }
  Json out = {{"scenario", r.scenario}, {"scheme", r.scheme}, {"cluster", r.cluster}, {"model", r.model},
              {"stack", r.stack}, {"calibration", r.calibration_source}, {"predictions", preds}};
  if (r.batch_per_gpu > 0) out["batch_per_gpu"] = r.batch_per_gpu;
  if (!r.precision.empty()) out["precision"] = r.precision;
  if (r.interval_log_sd > 0.0) out["interval"] = {{"level", 0.9}, {"log_sd", r.interval_log_sd}};
  if (!r.time_basis.empty()) out["time_to_target"] = {{"basis", r.time_basis}, {"log_sd", r.time_log_sd}};
  if (r.network_assumption)
    out["network_assumption"] = {{"cluster", r.network_assumption->cluster}, {"file", r.network_assumption->file},
                                 {"text", r.network_assumption->text}};
  if (r.assumed_rate)
    out["assumed_nic_rate"] = {{"cluster", r.assumed_rate->cluster}, {"stated_Bps", r.assumed_rate->stated_Bps},
                               {"range_Bps", {r.assumed_rate->low_Bps, r.assumed_rate->high_Bps}}};
  if (r.dispatch_beyond)
    out["dispatch_beyond_support"] = {{"stack", r.dispatch_beyond->stack}, {"share", r.dispatch_beyond->share},
                                      {"support", r.dispatch_beyond->support}};
  for (const auto& [what, note] : r.alternative_notes) out["alternatives"][what] = note;
  if (r.unfitted_network) out["unfitted_network"] = unfitted_network_to_json(*r.unfitted_network);
  if (r.unfitted_device) out["unfitted_device"] = unfitted_device_to_json(*r.unfitted_device);
  if (r.beyond_fitted_scale) out["beyond_fitted_scale"] = beyond_fitted_scale_to_json(*r.beyond_fitted_scale);
  return out;
}

std::string report_table(const Report& r) {
  std::ostringstream out;
  out << fmt::format("scenario {}: {} on {}, {}\n", r.scenario, r.model, r.cluster, r.scheme);
  if (!r.calibration_source.empty() || !r.stack.empty())
    out << fmt::format("calibration {}, stack {}{}\n", r.calibration_source.empty() ? "-" : r.calibration_source,
                       r.stack.empty() ? "-" : r.stack,
                       r.interval_log_sd > 0.0
                           ? fmt::format("; 90% interval of images/s from its cross-validated error (x{:.3f}^-+1)",
                                         interval_factor(r.interval_log_sd))
                           : std::string());
  if (r.unfitted_network) out << unfitted_network_note(*r.unfitted_network) << "\n";
  if (r.unfitted_device) out << unfitted_device_note(*r.unfitted_device) << "\n";
  if (r.beyond_fitted_scale) out << beyond_fitted_scale_note(*r.beyond_fitted_scale) << "\n";
  if (std::any_of(r.predictions.begin(), r.predictions.end(),
                  [&](const PointResult& p) { return p.batch_per_gpu > 0 && p.batch_per_gpu != r.batch_per_gpu; })) {
    std::string batches;
    for (const PointResult& p : r.predictions)
      batches += fmt::format("{}{}: {} x {} = {}", batches.empty() ? "" : ", ", p.gpus, p.gpus,
                             p.batch_per_gpu > 0 ? p.batch_per_gpu : r.batch_per_gpu,
                             p.gpus * (p.batch_per_gpu > 0 ? p.batch_per_gpu : r.batch_per_gpu));
    out << "global batch per point (the sweep's): " << batches << "\n";
  }
  if (r.assumed_rate) out << assumed_rate_note(*r.assumed_rate) << "\n";
  if (r.network_assumption) out << network_assumption_note(*r.network_assumption) << "\n";
  for (const auto& [what, note] : r.alternative_notes) out << note << "\n";
  out << fmt::format("{:>5} {:>5} {:>12} {:>12} {:>19} {:>8} {:>7} {:>9} {:>11} {:>12} {:>10}\n", "gpus", "nodes",
                     "iteration", "images/s", "90% interval", "speedup", "effic.", "vs 1 node", "compute",
                     "exposed comm", "staleness");
  for (const PointResult& p : r.predictions) {
    const std::string stale = p.sync == "sync" ? "-" : fmt::format("{:.2f}", p.staleness_mean);
    const std::string node = p.speedup_over_one_node > 0.0 ? fmt::format("{:.2f}", p.speedup_over_one_node) : "-";
    const auto [lo, hi] = interval_ratios(r.interval_log_sd, p);
    const std::string range =
        has_interval(r, p) ? fmt::format("{:.1f}-{:.1f}", p.images_per_sec * lo, p.images_per_sec * hi) : "-";
    out << fmt::format("{:>5} {:>5} {:>12} {:>12.1f} {:>19} {:>8.2f} {:>6.1f}% {:>9} {:>11} {:>12} {:>10}\n", p.gpus,
                       p.nodes, format_seconds(p.iteration_s), p.images_per_sec, range, p.speedup,
                       100.0 * p.efficiency, node, format_seconds(p.compute_s), format_seconds(p.exposed_comm_s), stale);
  }
  if (!r.time_basis.empty()) {
    out << fmt::format("\ntime to target: {}{}\n", r.time_basis,
                       r.time_log_sd > 0.0 ? fmt::format("; 90% interval x/{:.2f}", interval_factor(r.time_log_sd))
                                           : std::string());
    const double first = r.predictions.front().time_to_target_s;
    const bool epochs = std::any_of(r.predictions.begin(), r.predictions.end(),
                                    [](const PointResult& p) { return p.epochs_to_target > 0.0; });
    // The evaluations' column only where the time counts them (epochs of a training set).
    const std::string evals_head = epochs ? fmt::format(" {:>12}", "of it evals") : std::string();
    out << fmt::format("{:>5} {:>12} {:>10} {:>14} {:>12}{} {:>23} {:>11}\n", "gpus", "update batch", "staleness",
                       epochs ? "epochs" : "images", "time", evals_head, "90% interval",
                       fmt::format("vs {} GPU{}", r.predictions.front().gpus, r.predictions.front().gpus > 1 ? "s" : ""));
    for (const PointResult& p : r.predictions) {
      const double log_sd = std::hypot(r.time_log_sd, p.convergence_extrapolation_log_sd);
      const auto [lo, hi] = interval_ratios(log_sd, p);
      const std::string range = log_sd > 0.0 || has_alternatives(p)
                                    ? fmt::format("{}-{}", format_duration(p.time_to_target_s / hi),
                                                  format_duration(p.time_to_target_s / lo))
                                    : std::string("-");
      const std::string evals =
          epochs ? fmt::format(" {:>12}", p.eval_s > 0.0 ? format_duration(p.eval_s) : std::string("-")) : std::string();
      out << fmt::format("{:>5} {:>12.0f} {:>10} {:>14} {:>12}{} {:>23} {:>10.2f}x\n", p.gpus, p.update_batch,
                         p.sync == "sync" ? std::string("-") : fmt::format("{:.2f}", p.staleness_mean),
                         epochs ? fmt::format("{:.4g}", p.epochs_to_target) : fmt::format("{:.4g}", p.images_to_target),
                         format_duration(p.time_to_target_s), evals, range, first / p.time_to_target_s);
    }
  }
  if (!r.predictions.empty()) {
    const PointResult& p = r.predictions.back();
    out << fmt::format("\nbreakdown at {} GPUs (critical worker w{}, plan {}, {} fidelity):\n", p.gpus,
                       p.critical_worker, p.plan_hash, p.fidelity);
    for (const auto& [phase, s] : p.phase_s) out << fmt::format("  {:<24} {:>12}\n", phase, format_seconds(s));
    if (p.jitter_wait_s > 0.0)
      out << fmt::format("  {:<24} {:>12}  waiting for the slowest synchronous worker (compute jitter)\n",
                         "jitter wait", format_seconds(p.jitter_wait_s));
    for (const CollectiveTime& c : p.collectives)
      out << fmt::format("  {:<24} {:>12}  {} {}\n", c.label, format_seconds(c.seconds), format_bytes(c.bytes), c.purpose);
  }
  return out.str();
}

Json chrome_trace(const Report& r) {
  Json events = Json::array();
  for (const PointResult& p : r.predictions) {
    events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", p.gpus},
                      {"args", {{"name", fmt::format("{} GPUs", p.gpus)}}}});
    for (size_t t = 0; t < p.tracks.size(); ++t)
      events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", p.gpus}, {"tid", t},
                        {"args", {{"name", p.tracks[t]}}}});
    for (const TraceEvent& e : p.trace) {
      Json event = {{"ph", "X"}, {"name", e.name}, {"cat", e.category}, {"pid", p.gpus}, {"tid", e.track},
                    {"ts", e.start_s * 1e6}, {"dur", (e.end_s - e.start_s) * 1e6}};
      if (e.layer >= 0 && static_cast<size_t>(e.layer) < r.layers.size())
        event["args"] = {{"layer", r.layers[static_cast<size_t>(e.layer)]}};
      events.push_back(std::move(event));
    }
  }
  return {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
}

}  // namespace scaletwin::report
