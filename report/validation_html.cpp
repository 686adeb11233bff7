// The validation page (see validation.hpp). Pure string building over the validation rows: the same input gives
// the same page.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "core/units.hpp"
#include "report/html.hpp"
#include "report/report.hpp"
#include "report/svg_chart.hpp"
#include "report/validation.hpp"

namespace scaletwin::report {

namespace {

using svg::escape;

struct Point {
  const RunLabels* run;
  const ValidationRow* row;
};

// Runs that differ only in GPU count and scheme share a chart.
std::string configuration_of(const RunLabels& r) {
  return fmt::format("{} · {} · batch {} per GPU · {} data", r.model, r.cluster, r.batch_per_gpu, r.data);
}

// Keys in order of first appearance, each with its points.
template <typename Key>
std::vector<std::pair<std::string, std::vector<Point>>> group_by(const std::vector<Point>& points, Key key) {
  std::vector<std::pair<std::string, std::vector<Point>>> out;
  std::map<std::string, size_t> index;
  for (const Point& p : points) {
    const std::string k = key(*p.run);
    auto [it, added] = index.emplace(k, out.size());
    if (added) out.push_back({k, {}});
    out[it->second].second.push_back(p);
  }
  return out;
}

double iteration_s(const RunLabels& r, double images_per_sec) {
  return static_cast<double>(r.batch_per_gpu) * r.gpus / images_per_sec;
}

std::string parity_chart(const std::vector<Point>& points) {
  double max_rate = 0.0, min_rate = std::numeric_limits<double>::infinity();
  for (const Point& p : points) {
    max_rate = std::max({max_rate, p.row->measured_images_per_sec, p.row->predicted_images_per_sec});
    min_rate = std::min({min_rate, p.row->measured_images_per_sec, p.row->predicted_images_per_sec});
  }
  // Log axes where the runs span decades (116 runs from 20 to 5,000 images/s would sit in the bottom tenth).
  const svg::Axis x = svg::value_axis("measured images/s", min_rate, max_rate);
  svg::Axis y = svg::value_axis("predicted images/s", min_rate, max_rate);
  std::vector<svg::Series> series;
  const auto by_scheme = group_by(points, [](const RunLabels& r) { return r.scheme_family; });
  for (size_t k = 0; k < by_scheme.size(); ++k) {
    svg::Series s{by_scheme[k].first, series_color(k), {}, {}, false, true, {}};
    for (const Point& p : by_scheme[k].second) {
      s.x.push_back(p.row->measured_images_per_sec);
      s.y.push_back(p.row->predicted_images_per_sec);
    }
    series.push_back(std::move(s));
  }
  series.push_back({"predicted = measured", "#7f7f7f", {x.min, x.max}, {x.min, x.max}, true, false, {}});
  svg::Frame frame;
  frame.width = frame.height = 420.0;
  return svg::line_chart("parity", "Predicted against measured", x, y, series, frame);
}

svg::Axis gpu_axis(const std::vector<Point>& points) {
  std::set<int> counts;
  for (const Point& p : points) counts.insert(p.run->gpus);
  svg::Axis a;
  a.label = "GPUs";
  a.log2 = true;
  a.min = *counts.begin();
  a.max = *counts.rbegin();
  if (a.min == a.max) a.min /= 2.0, a.max *= 2.0;
  for (int g : counts) a.ticks.push_back({static_cast<double>(g), std::to_string(g)});
  return a;
}

// One configuration: measured (solid) and predicted (dashed, labelled with errors) images/s per scheme.
std::string configuration_chart(size_t index, const std::string& title, const std::vector<Point>& points) {
  const auto by_scheme = group_by(points, [](const RunLabels& r) { return r.scheme; });
  std::vector<svg::Series> series;
  double max_rate = 0.0;
  std::string caption;
  for (size_t k = 0; k < by_scheme.size(); ++k) {
    std::vector<Point> sorted = by_scheme[k].second;
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const Point& a, const Point& b) { return a.run->gpus < b.run->gpus; });
    const std::string tag = by_scheme.size() == 1 ? "" : fmt::format("({}) ", k + 1);
    svg::Series measured{tag + "measured", series_color(k), {}, {}, false, false, {}};
    svg::Series predicted{tag + "predicted", series_color(k), {}, {}, true, false, {}};
    for (const Point& p : sorted) {
      measured.x.push_back(p.run->gpus), measured.y.push_back(p.row->measured_images_per_sec);
      predicted.x.push_back(p.run->gpus), predicted.y.push_back(p.row->predicted_images_per_sec);
      predicted.labels.push_back(tag + error_label(p.row->error));  // "(3) +1.2%": the scheme and its error
      max_rate = std::max({max_rate, p.row->measured_images_per_sec, p.row->predicted_images_per_sec});
      if (p.row->interval_high > 0.0) {  // the prediction's 90% interval as a band
        predicted.low.push_back(p.row->interval_low);
        predicted.high.push_back(p.row->interval_high);
        max_rate = std::max(max_rate, p.row->interval_high);
      }
    }
    if (predicted.low.size() != predicted.x.size()) predicted.low.clear(), predicted.high.clear();
    series.push_back(std::move(measured));
    series.push_back(std::move(predicted));
    caption += fmt::format("<li>{}{}</li>", escape(tag), escape(by_scheme[k].first));
  }
  const std::string chart = svg::line_chart(fmt::format("config-{}", index + 1), title, gpu_axis(points),
                                            svg::linear_axis("images/s", max_rate * 1.1), series);
  return "<figure>\n" + chart + "<figcaption><ul>" + caption + "</ul></figcaption>\n</figure>\n";
}

std::string runs_table(const std::vector<Point>& points) {
  std::string out =
      "<table class=\"num runs\"><tr><th>run</th><th>GPUs</th><th>nodes</th><th>model</th><th>cluster</th>"
      "<th>batch</th><th>data</th><th>scheme</th><th>measured images/s</th><th>predicted images/s</th>"
      "<th>measured iteration</th><th>predicted iteration</th><th>error</th></tr>\n";
  for (const Point& p : points) {
    const RunLabels& r = *p.run;
    out += "<tr data-run=\"" + escape(p.row->id) + "\">" + td(p.row->id) + td(std::to_string(r.gpus)) +
           td(std::to_string(r.nodes)) + td(r.model) + td(r.cluster) + td(std::to_string(r.batch_per_gpu)) +
           td(r.data) + td(r.scheme) + td(fmt::format("{:.1f}", p.row->measured_images_per_sec)) +
           td(fmt::format("{:.1f}", p.row->predicted_images_per_sec)) +
           td(format_seconds(iteration_s(r, p.row->measured_images_per_sec))) +
           td(format_seconds(iteration_s(r, p.row->predicted_images_per_sec))) + td(error_label(p.row->error)) +
           "</tr>\n";
  }
  return out + "</table>\n";
}

// validate --by: one row per group of runs (set_groups), as the table output lists them.
std::string groups_table(const Validation& v) {
  std::string out = "<h2>By " + escape(fmt::format("{}", fmt::join(v.group_fields, ", "))) +
                    "</h2>\n<table class=\"num groups\"><tr>";
  for (const std::string& f : v.group_fields) out += "<th>" + escape(f) + "</th>";
  out += "<th>runs</th><th>MAPE</th><th>largest |error|</th><th>inside the 90% interval</th></tr>\n";
  for (const ValidationGroup& g : v.groups) {
    out += "<tr>";
    for (const std::string& value : g.values) out += td(value.empty() ? "-" : value);
    out += td(std::to_string(g.runs)) + td(fmt::format("{:.2f}%", g.mape)) +
           td(fmt::format("{:.1f}%", 100.0 * g.max_abs_error)) +
           td(g.with_interval > 0 ? fmt::format("{} of {}", g.inside_interval, g.with_interval) : "-") + "</tr>\n";
  }
  return out + "</table>\n";
}

std::string header(const Validation& v, const ValidationReportContext& c) {
  std::string out =
      fmt::format("<h1>Validation: {} runs, MAPE {:.2f}%</h1>\n<table class=\"kv\">\n", v.rows.size(), v.mape);
  for (const std::string& f : c.measurement_files) out += "<tr><th>measurements</th>" + td(f) + "</tr>\n";
  out += "<tr><th>calibration</th>" + td(c.calibration_source) + "</tr>\n";
  out += "<tr><th>MAPE</th><td class=\"mape\">" + fmt::format("{:.2f}%", v.mape) + "</td></tr>\n";
  out += "<tr><th>error</th>" + td("(predicted - measured) / measured, images/s") + "</tr>\n</table>\n";
  return out;
}

}  // namespace

std::string validation_html(const Validation& v, const ValidationReportContext& context) {
  std::vector<Point> points;
  for (const ValidationRow& row : v.rows) points.push_back({&row.run, &row});
  std::string body = header(v, context);
  if (!points.empty()) {
    body += "<h2>Predicted against measured</h2>\n<div class=\"charts\">\n" + parity_chart(points) + "</div>\n";
    body += "<h2>Runs by configuration</h2>\n<div class=\"charts\">\n";
    const auto configurations = group_by(points, configuration_of);
    for (size_t i = 0; i < configurations.size(); ++i)
      body += configuration_chart(i, configurations[i].first, configurations[i].second);
    body += "</div>\n";
  }
  if (!v.group_fields.empty()) body += groups_table(v);
  body += "<h2>Runs</h2>\n" + runs_table(points);
  body += fmt::format("<p class=\"mape\">MAPE {:.2f}% over {} runs</p>\n", v.mape, v.rows.size());
  if (!context.calibration.is_null()) body += calibration_details(context.calibration_source, context.calibration);
  return html_page(fmt::format("scaletwin validate: MAPE {:.2f}%", v.mape), body);
}

}  // namespace scaletwin::report
