// A prediction against measured runs, figure by figure (see compare.hpp).
#include "report/compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "core/error.hpp"
#include "core/units.hpp"

namespace scaletwin::report {

namespace {

void add_row(Comparison& c, const RunRecord& m, const std::string& figure, double predicted, double measured) {
  ComparedFigure row{m.gpus, m.id, figure, predicted, measured, std::nullopt};
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

std::vector<RunRecord> load_predicted_records(const std::string& path, std::string* scenario) {
  const Json json = load_json_file(path);
  const JsonObject root = JsonObject::root(json, path);
  if (scenario != nullptr) *scenario = root.has("scenario") ? root.get_string("scenario") : "";
  const Json& points = root.get_array("predictions");
  if (points.empty()) throw InputError(path, "/predictions", "at least one predicted point (predict --json)");
  std::vector<RunRecord> out;
  for (size_t i = 0; i < points.size(); ++i)
    out.push_back(predicted_record(JsonObject(points[i], path, fmt::format("/predictions/{}", i))));
  return out;
}

Comparison compare_records(const std::vector<RunRecord>& predicted,
                           const std::vector<RunRecord>& measured) {
  Comparison c;
  std::set<int> matched;
  for (const RunRecord& m : measured) {
    const auto p = std::find_if(predicted.begin(), predicted.end(), [&](const auto& x) { return x.gpus == m.gpus; });
    if (p == predicted.end()) {
      c.measured_only_runs.push_back(m.id);
      continue;
    }
    matched.insert(m.gpus);
    add_row(c, m, "iteration_s", p->iteration_s, m.iteration_s);
    add_row(c, m, "images_per_sec", p->images_per_sec, m.images_per_sec);
    for (const char* phase : kRecordPhases) {
      const auto mp = m.phases_s.find(phase), pp = p->phases_s.find(phase);
      if (mp != m.phases_s.end() && pp != p->phases_s.end())
        add_row(c, m, std::string(phase) + "_s", pp->second, mp->second);
    }
    for (const auto& [label, seconds] : m.collectives_s) {
      const auto pb = p->collectives_s.find(label);
      if (pb != p->collectives_s.end()) add_row(c, m, "bucket:" + label, pb->second, seconds);
    }
    if (m.time_to_target_s > 0.0 && p->time_to_target_s > 0.0) {
      add_row(c, m, "time_to_target_s", p->time_to_target_s, m.time_to_target_s);
      if (p->images_to_target > 0.0) add_row(c, m, "images_to_target", p->images_to_target, m.images_to_target);
    }
  }
  for (const RunRecord& p : predicted)
    if (!matched.count(p.gpus)) c.predicted_only_gpus.push_back(p.gpus);
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

}  // namespace scaletwin::report
