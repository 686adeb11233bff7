// A prediction against measured runs, figure by figure (see compare.hpp).
#include "calibrate/compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "calibrate/measurements.hpp"
#include "calibrate/validate_report.hpp"
#include "core/error.hpp"
#include "core/units.hpp"
#include "sim/report.hpp"
#include "sim/report_html.hpp"

namespace scaletwin::calibrate {

namespace {

// The phases in the order they are compared and printed.
constexpr const char* kPhases[] = {"compute", "exposed_comm", "data", "idle"};

double positive_number(const JsonObject& o, const std::string& key) {
  const double v = o.get_number(key);
  if (!(v > 0.0)) o.fail(key, "a number > 0");
  return v;
}

// "collectives": [{"label", "seconds"}] into label -> seconds (repeated labels add up).
std::map<std::string, double> read_buckets(const JsonObject& parent) {
  std::map<std::string, double> out;
  if (!parent.has("collectives")) return out;
  const Json& list = parent.get_array("collectives");
  for (size_t i = 0; i < list.size(); ++i) {
    const JsonObject c(list[i], parent.file(), fmt::format("{}/{}", parent.path_of("collectives"), i));
    out[c.get_string("label")] += c.get_number("seconds", std::nullopt, 0.0);
  }
  return out;
}

PointFigures read_predicted_point(const JsonObject& p) {
  sim::PointResult r;
  r.gpus = static_cast<int>(p.get_int("gpus", std::nullopt, 1, 1 << 24));
  r.iteration_s = positive_number(p, "iteration_s");
  r.images_per_sec = positive_number(p, "images_per_sec");
  r.compute_s = p.get_number("compute_s", std::nullopt, 0.0);
  r.exposed_comm_s = p.get_number("exposed_comm_s", std::nullopt, 0.0);
  if (p.has("phases_s")) {
    const JsonObject phases = p.get_object("phases_s");
    for (const auto& item : phases.raw().items()) r.phase_s[item.key()] = phases.get_number(item.key(), std::nullopt, 0.0);
  }
  const sim::TimeBreakdown b = sim::time_breakdown(r);  // the split predict's report draws
  PointFigures f;
  f.gpus = r.gpus;
  f.iteration_s = r.iteration_s;
  f.images_per_sec = r.images_per_sec;
  f.phases_s = {{"compute", b.compute_s}, {"exposed_comm", b.exposed_comm_s}, {"data", b.data_s}, {"idle", b.idle_s}};
  f.buckets_s = read_buckets(p);
  if (p.has("time_to_target_s")) {
    f.time_to_target_s = p.get_number("time_to_target_s", std::nullopt, 0.0);
    f.images_to_target = p.get_number("images_to_target", 0.0, 0.0);
  }
  return f;
}

void add_row(Comparison& c, const PointFigures& m, const std::string& figure, double predicted, double measured) {
  ComparedFigure row{m.gpus, m.run, figure, predicted, measured, std::nullopt};
  if (measured != 0.0) row.error = (predicted - measured) / measured;
  c.rows.push_back(std::move(row));
}

std::string figure_name(const std::string& figure) {
  if (figure == "iteration_s") return "iteration";
  if (figure == "images_per_sec") return "images/s";
  if (figure == "images_to_target") return "images to target";
  if (figure.rfind("bucket:", 0) == 0) return figure.substr(7);  // the plan label ("bucket 0 push")
  std::string name = figure.substr(0, figure.size() - 2);  // compute_s -> compute
  std::replace(name.begin(), name.end(), '_', ' ');
  return name;
}

std::string value_text(const std::string& figure, double v) {
  if (figure == "images_to_target") return fmt::format("{:.0f}", v);
  return figure == "images_per_sec" ? fmt::format("{:.1f}", v) : format_seconds(v);
}

}  // namespace

std::vector<PointFigures> load_predicted_figures(const std::string& path, std::string* scenario) {
  const Json json = load_json_file(path);
  const JsonObject root = JsonObject::root(json, path);
  if (scenario != nullptr) *scenario = root.has("scenario") ? root.get_string("scenario") : "";
  const Json& points = root.get_array("predictions");
  if (points.empty()) throw InputError(path, "/predictions", "at least one predicted point (predict --json)");
  std::vector<PointFigures> out;
  for (size_t i = 0; i < points.size(); ++i)
    out.push_back(read_predicted_point(JsonObject(points[i], path, fmt::format("/predictions/{}", i))));
  return out;
}

std::vector<PointFigures> load_measured_figures(const std::string& path) {
  std::vector<PointFigures> out;
  for (const MeasuredRun& run : load_measurements(path)) {
    const JsonObject raw(run.raw, path, run.json_path);
    PointFigures f;
    f.run = run.id;
    f.gpus = run.gpus();
    f.images_per_sec = run.images_per_sec;
    f.iteration_s = static_cast<double>(run.batch_per_gpu) * run.gpus() / run.images_per_sec;
    if (raw.has("phases_per_iteration_s")) {
      const JsonObject phases = raw.get_object("phases_per_iteration_s");
      for (const char* phase : kPhases)
        if (phases.has(phase)) f.phases_s[phase] = phases.get_number(phase, std::nullopt, 0.0);
    }
    f.buckets_s = read_buckets(raw);
    const Json& t = run.raw.contains("time_to_target") ? run.raw["time_to_target"] : Json();
    if (t.is_object() && t.value("reached", false) && t["seconds"].is_number() && t["images"].is_number()) {
      f.time_to_target_s = t["seconds"].get<double>();
      f.images_to_target = t["images"].get<double>();
    }
    out.push_back(std::move(f));
  }
  return out;
}

Comparison compare_figures(const std::vector<PointFigures>& predicted, const std::vector<PointFigures>& measured) {
  Comparison c;
  std::set<int> matched;
  for (const PointFigures& m : measured) {
    const auto p = std::find_if(predicted.begin(), predicted.end(), [&](const auto& x) { return x.gpus == m.gpus; });
    if (p == predicted.end()) {
      c.measured_only_runs.push_back(m.run);
      continue;
    }
    matched.insert(m.gpus);
    add_row(c, m, "iteration_s", p->iteration_s, m.iteration_s);
    add_row(c, m, "images_per_sec", p->images_per_sec, m.images_per_sec);
    for (const char* phase : kPhases) {
      const auto mp = m.phases_s.find(phase), pp = p->phases_s.find(phase);
      if (mp != m.phases_s.end() && pp != p->phases_s.end())
        add_row(c, m, std::string(phase) + "_s", pp->second, mp->second);
    }
    for (const auto& [label, seconds] : m.buckets_s) {
      const auto pb = p->buckets_s.find(label);
      if (pb != p->buckets_s.end()) add_row(c, m, "bucket:" + label, pb->second, seconds);
    }
    if (m.time_to_target_s > 0.0 && p->time_to_target_s > 0.0) {
      add_row(c, m, "time_to_target_s", p->time_to_target_s, m.time_to_target_s);
      if (p->images_to_target > 0.0) add_row(c, m, "images_to_target", p->images_to_target, m.images_to_target);
    }
  }
  for (const PointFigures& p : predicted)
    if (!matched.count(p.gpus)) c.predicted_only_gpus.push_back(p.gpus);
  return c;
}

Comparison compare_files(const std::string& prediction_path, const std::string& measurements_path) {
  std::string scenario;
  const std::vector<PointFigures> predicted = load_predicted_figures(prediction_path, &scenario);
  const std::vector<PointFigures> measured = load_measured_figures(measurements_path);
  Comparison c = compare_figures(predicted, measured);
  if (c.rows.empty()) {
    std::string have;
    for (const PointFigures& p : predicted) have += (have.empty() ? "" : ",") + std::to_string(p.gpus);
    throw InputError(measurements_path, "/runs",
                     fmt::format("a run at a GPU count {} predicts ({})", prediction_path, have));
  }
  c.prediction_file = prediction_path;
  c.measurements_file = measurements_path;
  c.scenario = scenario;
  return c;
}

Json comparison_to_json(const Comparison& c) {
  Json rows = Json::array();
  for (const ComparedFigure& r : c.rows)
    rows.push_back({{"gpus", r.gpus}, {"run", r.run}, {"figure", r.figure}, {"predicted", r.predicted},
                    {"measured", r.measured}, {"error", r.error ? Json(*r.error) : Json(nullptr)}});
  return {{"prediction", c.prediction_file}, {"measurements", c.measurements_file}, {"scenario", c.scenario},
          {"rows", rows}, {"predicted_only_gpus", c.predicted_only_gpus}, {"measured_only_runs", c.measured_only_runs}};
}

std::string comparison_table(const Comparison& c) {
  size_t width = 3, figure_width = 6;
  for (const ComparedFigure& r : c.rows) {
    width = std::max(width, r.run.size());
    figure_width = std::max(figure_width, figure_name(r.figure).size());
  }
  std::string out = fmt::format("prediction {}{} against {}\n", c.prediction_file,
                                c.scenario.empty() ? "" : " (" + c.scenario + ")", c.measurements_file);
  out += fmt::format("{:>5}  {:<{}}  {:<{}} {:>12} {:>12} {:>8}\n", "gpus", "run", width, "figure", figure_width,
                     "predicted", "measured", "error");
  for (const ComparedFigure& r : c.rows)
    out += fmt::format("{:>5}  {:<{}}  {:<{}} {:>12} {:>12} {:>8}\n", r.gpus, r.run, width, figure_name(r.figure),
                       figure_width, value_text(r.figure, r.predicted), value_text(r.figure, r.measured),
                       r.error ? error_label(*r.error) : "-");
  for (int g : c.predicted_only_gpus) out += fmt::format("predicted only: {} GPUs (no measured run)\n", g);
  for (const std::string& id : c.measured_only_runs) out += fmt::format("measured only: {} (no predicted point)\n", id);
  out += "error = (predicted - measured) / measured; phases are seconds per iteration of the critical worker\n";
  return out;
}

}  // namespace scaletwin::calibrate
