// The HTML report page: scenario header, calibration table, the four SVG charts (svg_chart.hpp) and the prediction
// table, with inline CSS only. Pure string building: no files, no clock, so the same report gives the same page.
#include "report/html.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <set>

#include "core/units.hpp"
#include "report/svg_chart.hpp"

namespace scaletwin::report {

namespace {

using svg::escape;

constexpr const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"};
constexpr const char* kIdealColor = "#7f7f7f";

std::string series_name(const std::vector<Report>& reports, size_t i) {
  return reports.size() == 1 ? std::string("predicted") : fmt::format("({}) {}", i + 1, reports[i].scheme);
}

// log2 axis over the GPU counts of every report, one tick per count.
svg::Axis gpu_axis(const std::vector<Report>& reports) {
  std::set<int> counts;
  for (const Report& r : reports)
    for (const PointResult& p : r.predictions)
      if (p.gpus > 0) counts.insert(p.gpus);
  svg::Axis a;
  a.label = "GPUs";
  a.log2 = true;
  if (counts.empty()) counts.insert(1);
  a.min = *counts.begin();
  a.max = *counts.rbegin();
  if (a.min == a.max) a.min /= 2.0, a.max *= 2.0;
  for (int g : counts) a.ticks.push_back({static_cast<double>(g), std::to_string(g)});
  return a;
}

// Images/s of one GPU, from any point (speedup is against the 1-GPU point); 0 when unknown.
double one_gpu_rate(const Report& r) {
  for (const PointResult& p : r.predictions)
    if (p.speedup > 0.0) return p.images_per_sec / p.speedup;
  return 0.0;
}

// The measured value `field` of each report as a solid series, and field_ideal(report, gpus) as a dashed one.
template <typename Value, typename Ideal>
std::vector<svg::Series> scaling_series(const std::vector<Report>& reports, Value value, Ideal ideal, double* max_y) {
  std::vector<svg::Series> out, ideals;
  for (size_t i = 0; i < reports.size(); ++i) {
    svg::Series s{series_name(reports, i), series_color(i), {}, {}, false, false, {}};
    svg::Series id{i == 0 ? std::string("ideal linear") : fmt::format("ideal ({})", i + 1),
                   reports.size() == 1 ? std::string(kIdealColor) : series_color(i), {}, {}, true, false, {}};
    for (const PointResult& p : reports[i].predictions) {
      if (p.gpus <= 0) continue;
      s.x.push_back(p.gpus), s.y.push_back(value(p));
      id.x.push_back(p.gpus), id.y.push_back(ideal(reports[i], p));
      *max_y = std::max({*max_y, s.y.back(), id.y.back()});
    }
    out.push_back(std::move(s));
    if (reports.size() == 1 || i == 0 || one_gpu_rate(reports[i]) != one_gpu_rate(reports[0]))
      ideals.push_back(std::move(id));
  }
  out.insert(out.end(), ideals.begin(), ideals.end());  // reference lines last: drawn on top, legend after
  return out;
}

// 0..120 % in steps of 20 (room above the ideal 100 % line), wider when some point exceeds it.
svg::Axis efficiency_axis(double max_percent) {
  if (max_percent > 120.0) return svg::linear_axis("efficiency (%)", max_percent);
  svg::Axis a;
  a.label = "efficiency (%)";
  a.max = 120.0;
  for (int v = 0; v <= 120; v += 20) a.ticks.push_back({static_cast<double>(v), std::to_string(v)});
  return a;
}

std::string scaling_charts(const std::vector<Report>& reports) {
  const svg::Axis x = gpu_axis(reports);
  double max_rate = 0.0, max_speedup = 0.0, max_eff = 0.0;
  auto rate = scaling_series(
      reports, [](const PointResult& p) { return p.images_per_sec; },
      [](const Report& r, const PointResult& p) { return one_gpu_rate(r) * p.gpus; }, &max_rate);
  auto speedup = scaling_series(
      reports, [](const PointResult& p) { return p.speedup; },
      [](const Report&, const PointResult& p) { return static_cast<double>(p.gpus); }, &max_speedup);
  auto eff = scaling_series(
      reports, [](const PointResult& p) { return 100.0 * p.efficiency; },
      [](const Report&, const PointResult&) { return 100.0; }, &max_eff);
  // The predicted rates with their 90% intervals as bands; a log axis where they span decades.
  double min_rate = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < reports.size(); ++i) {
    svg::Series& s = rate[i];
    for (const PointResult& p : reports[i].predictions) {
      if (p.gpus <= 0) continue;
      const auto [lo, hi] = interval_ratios(reports[i].interval_log_sd, p);
      if (has_interval(reports[i], p)) s.low.push_back(p.images_per_sec * lo), s.high.push_back(p.images_per_sec * hi);
      max_rate = std::max(max_rate, p.images_per_sec * hi);
      min_rate = std::min(min_rate, p.images_per_sec * (has_interval(reports[i], p) ? lo : 1.0));
    }
    if (s.low.size() != s.x.size()) s.low.clear(), s.high.clear();
  }
  return svg::line_chart("images_per_sec", "Throughput (band: 90% interval)", x,
                         svg::value_axis("images/s", min_rate, max_rate), rate) +
         svg::line_chart("speedup", "Speedup over 1 GPU", x, svg::linear_axis("speedup", max_speedup), speedup) +
         svg::line_chart("efficiency", "Scaling efficiency", x, efficiency_axis(max_eff), eff);
}

// Seconds axis with tick labels in ms below one second.
svg::Axis seconds_axis(double max_s) {
  svg::Axis a = svg::linear_axis("time per iteration", max_s);
  const bool ms = a.max < 1.0;
  a.label += ms ? " (ms)" : " (s)";
  for (svg::Tick& t : a.ticks) t.label = fmt::format("{:g}", ms ? t.value * 1e3 : t.value);
  return a;
}

std::string breakdown_chart(const std::vector<Report>& reports) {
  const std::vector<svg::Segment> segments = {
      {"data", "#f2a93b"}, {"compute", "#4c78a8"}, {"exposed comm", "#e45756"}, {"idle", "#bab0ac"}};
  std::vector<svg::Bar> bars;
  double max_s = 0.0;
  struct Entry {
    int gpus;
    size_t report, point;
  };
  std::vector<Entry> order;  // bars grouped by GPU count, schemes side by side
  for (size_t i = 0; i < reports.size(); ++i)
    for (size_t k = 0; k < reports[i].predictions.size(); ++k) order.push_back({reports[i].predictions[k].gpus, i, k});
  std::stable_sort(order.begin(), order.end(), [](const Entry& a, const Entry& b) { return a.gpus < b.gpus; });
  for (const Entry& e : order) {
    const size_t i = e.report;
    const PointResult& p = reports[i].predictions[e.point];
    const TimeBreakdown b = time_breakdown(p);
    const std::string label = reports.size() == 1 ? std::to_string(p.gpus) : fmt::format("{} ({})", p.gpus, i + 1);
    bars.push_back({label, {b.data_s, b.compute_s, b.exposed_comm_s, b.idle_s}});
    max_s = std::max(max_s, p.iteration_s);
  }
  svg::Frame frame;
  frame.width = std::max(560.0, 90.0 + 46.0 * static_cast<double>(bars.size()));
  return svg::stacked_bar_chart("breakdown", "Iteration time on the critical worker", "GPUs", seconds_axis(max_s),
                                segments, bars, frame);
}

// The sweep's figures; the 90% interval of images/s (report.hpp: the calibration's error, widened over both ends of
// an assumed NIC rate) where the report has one, with a line that says where it comes from.
std::string prediction_table(const Report& r) {
  std::string out;
  if (r.interval_log_sd > 0.0)
    out += fmt::format("<p class=\"interval\">90% interval of images/s from the calibration's cross-validated error "
                       "(×/÷ {:.3f})</p>\n", interval_factor(r.interval_log_sd));
  if (r.unfitted_network)
    out += "<p class=\"interval\">" + escape(unfitted_network_note(*r.unfitted_network)) + "</p>\n";
  if (r.unfitted_device)
    out += "<p class=\"interval\">" + escape(unfitted_device_note(*r.unfitted_device)) + "</p>\n";
  if (r.beyond_fitted_scale)
    out += "<p class=\"interval\">" + escape(beyond_fitted_scale_note(*r.beyond_fitted_scale)) + "</p>\n";
  if (r.assumed_rate) out += "<p class=\"interval\">" + escape(assumed_rate_note(*r.assumed_rate)) + "</p>\n";
  if (r.network_assumption)
    out += "<p class=\"interval\">" + escape(network_assumption_note(*r.network_assumption)) + "</p>\n";
  for (const auto& [what, note] : r.alternative_notes) out += "<p class=\"interval\">" + escape(note) + "</p>\n";
  out += "<table class=\"num\"><tr><th>GPUs</th><th>nodes</th><th>iteration</th><th>images/s</th>"
         "<th>90% interval</th><th>speedup</th><th>efficiency</th><th>vs 1 node</th><th>data</th><th>compute</th>"
         "<th>exposed comm</th><th>idle</th><th>staleness</th><th>fidelity</th></tr>\n";
  for (const PointResult& p : r.predictions) {
    const TimeBreakdown b = time_breakdown(p);
    const auto [lo, hi] = interval_ratios(r.interval_log_sd, p);
    const std::string interval =
        has_interval(r, p) ? fmt::format("{:.1f}–{:.1f}", p.images_per_sec * lo, p.images_per_sec * hi) : "-";
    out += "<tr>" + td(std::to_string(p.gpus)) + td(std::to_string(p.nodes)) + td(format_seconds(p.iteration_s)) +
           td(fmt::format("{:.1f}", p.images_per_sec)) + td(interval) + td(fmt::format("{:.2f}", p.speedup)) +
           td(fmt::format("{:.1f}%", 100.0 * p.efficiency)) +
           td(p.speedup_over_one_node > 0.0 ? fmt::format("{:.2f}", p.speedup_over_one_node) : "-") +
           td(format_seconds(b.data_s)) + td(format_seconds(b.compute_s)) +
           td(format_seconds(b.exposed_comm_s)) + td(format_seconds(b.idle_s)) +
           td(p.sync == "sync" ? "-" : fmt::format("{:.2f}", p.staleness_mean)) + td(p.fidelity) + "</tr>\n";
  }
  return out + "</table>\n";
}

// Flattens the calibration JSON into "path = value" rows; rows under devices / APPLIED are marked, those under
// another device entry dimmed.
void calibration_rows(const Json& j, const std::string& path, const std::string& applied, std::string* out) {
  if (j.is_object()) {
    for (const auto& [key, value] : j.items())
      calibration_rows(value, path.empty() ? key : path + " / " + key, applied, out);
    return;
  }
  const std::string value = j.is_number_float() ? fmt::format("{:g}", j.get<double>()) : j.dump();
  const bool device_row = path.rfind("devices / ", 0) == 0;
  const bool applied_row = !applied.empty() && path.rfind("devices / " + applied + " / ", 0) == 0;
  const std::string cls = applied_row ? " class=\"applied\"" : device_row && !applied.empty() ? " class=\"unused\"" : "";
  *out += "<tr" + cls + "><td>" + escape(path) + (applied_row ? " (applied)" : "") + "</td><td>" + escape(value) +
          "</td></tr>\n";
}

std::string header(const std::vector<Report>& reports, const ReportContext& c) {
  const Report& first = reports.front();
  std::string out = fmt::format("<h1>{}</h1>\n<table class=\"kv\">\n", escape(first.scenario));
  out += "<tr><th>model</th>" + td(first.model) + "</tr>\n<tr><th>cluster</th>" + td(first.cluster) + "</tr>\n";
  for (size_t i = 0; i < reports.size(); ++i)
    out += "<tr><th>scheme</th>" + td(reports.size() == 1 ? reports[i].scheme : series_name(reports, i)) + "</tr>\n";
  if (c.batch_per_gpu > 0) out += "<tr><th>batch</th>" + td(fmt::format("{} per GPU", c.batch_per_gpu)) + "</tr>\n";
  out += "<tr><th>calibration</th>" + td(c.calibration_source) + "</tr>\n</table>\n";
  return out;
}

constexpr const char* kStyle = R"(<style>
body { font-family: sans-serif; margin: 24px; color: #222; max-width: 1160px; }
h1 { font-size: 22px; margin: 0 0 12px; } h2 { font-size: 17px; margin: 24px 0 8px; }
table { border-collapse: collapse; font-size: 13px; }
td, th { padding: 3px 10px; border-bottom: 1px solid #ddd; text-align: left; }
table.num td, table.num th { text-align: right; } table.kv th { color: #555; font-weight: normal; }
.charts { display: flex; flex-wrap: wrap; gap: 12px; } svg.chart { background: #fff; border: 1px solid #eee; }
details { margin-top: 16px; font-size: 13px; }
tr.applied td { font-weight: bold; background: #eef5ff; } tr.unused td { color: #999; }
</style>
)";

}  // namespace

TimeBreakdown time_breakdown(const PointResult& p) {
  TimeBreakdown b;
  double left = std::max(0.0, p.iteration_s);
  auto take = [&left](double want) {
    const double got = std::clamp(want, 0.0, left);
    left -= got;
    return got;
  };
  const auto data = p.phase_s.find("data");
  b.data_s = take(data == p.phase_s.end() ? 0.0 : data->second);
  b.compute_s = take(p.compute_s - b.data_s);
  b.exposed_comm_s = take(p.exposed_comm_s);
  b.idle_s = left;
  return b;
}

std::string report_html(const Report& report) { return report_html(std::vector<Report>{report}, ReportContext{}); }

std::string report_html(const Report& report, const ReportContext& context) {
  return report_html(std::vector<Report>{report}, context);
}

std::string series_color(size_t i) { return kPalette[i % std::size(kPalette)]; }

std::string td(const std::string& text) { return "<td>" + escape(text) + "</td>"; }

std::string html_page(const std::string& title, const std::string& body) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += fmt::format("<title>{}</title>\n", escape(title)) + kStyle + "</head>\n<body>\n";
  return out + body + "</body>\n</html>\n";
}

std::string calibration_details(const std::string& source, const Json& calibration,
                                const std::string& applied_device_entry) {
  std::string out = "<details open><summary>Calibration: " + escape(source) +
                    (applied_device_entry.empty() ? std::string()
                                                  : "; the GPU's entry: devices / " + escape(applied_device_entry)) +
                    "</summary>\n<table>\n";
  calibration_rows(calibration, "", applied_device_entry, &out);
  return out + "</table>\n</details>\n";
}

// Time to the training target against GPUs (with the ideal: the first point's time over the GPU ratio), for the
// reports whose scenario sets one; "" when none does.
std::string time_to_target_chart(const std::vector<Report>& reports) {
  double max_s = 0.0;
  for (const Report& r : reports)
    for (const PointResult& p : r.predictions) max_s = std::max(max_s, p.time_to_target_s);
  if (max_s <= 0.0) return "";
  const double unit = max_s > 3 * 3600.0 ? 3600.0 : max_s > 180.0 ? 60.0 : 1.0;
  const char* name = unit == 3600.0 ? "hours" : unit == 60.0 ? "minutes" : "seconds";
  std::vector<svg::Series> series;
  for (size_t i = 0; i < reports.size(); ++i) {
    svg::Series s{series_name(reports, i), series_color(i), {}, {}, false, false, {}};
    for (const PointResult& p : reports[i].predictions)
      if (p.gpus > 0 && p.time_to_target_s > 0.0) s.x.push_back(p.gpus), s.y.push_back(p.time_to_target_s / unit);
    if (!s.x.empty()) series.push_back(std::move(s));
  }
  return svg::line_chart("time_to_target", "Time to the training target", gpu_axis(reports),
                         svg::linear_axis(name, max_s / unit), series);
}

std::string report_html(const std::vector<Report>& reports, const ReportContext& context) {
  const std::vector<Report> shown = reports.empty() ? std::vector<Report>{Report{}} : reports;
  std::string out = header(shown, context);
  out += "<h2>Scaling</h2>\n<div class=\"charts\">\n" + scaling_charts(shown) + time_to_target_chart(shown) +
         breakdown_chart(shown) + "</div>\n";
  for (size_t i = 0; i < shown.size(); ++i) {
    out += shown.size() == 1 ? std::string("<h2>Predictions</h2>\n")
                             : fmt::format("<h2>Predictions: {}</h2>\n", escape(series_name(shown, i)));
    out += prediction_table(shown[i]);
  }
  if (!context.calibration.is_null())
    out += calibration_details(context.calibration_source, context.calibration, context.applied_device_entry);
  return html_page("scaletwin: " + shown.front().scenario, out);
}

}  // namespace scaletwin::report
