// explore --html: the Pareto chart of time to target against cost (both on log axes: candidates span decades),
// every simulated candidate as a point per cluster, the frontier as a line, the best labelled, then the frontier's
// table with 90% intervals and the counts of what was pruned. Without prices the chart plots time against GPUs.
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "cli/explore_space.hpp"
#include "core/progress.hpp"
#include "report/html.hpp"
#include "report/svg_chart.hpp"

namespace scaletwin::cli {

namespace {

namespace svg = report::svg;
using report::td;

}  // namespace

std::string explore_html(const Space& s, const std::vector<Candidate>& all, const Candidate* best, const Json& counts) {
  const bool priced = std::all_of(s.clusters.begin(), s.clusters.end(),
                                  [](const ClusterChoice& c) { return c.price_per_gpu_hour > 0.0; });
  std::vector<const Candidate*> simulated, frontier;
  double x_lo = std::numeric_limits<double>::infinity(), x_hi = 0.0;
  double y_lo = std::numeric_limits<double>::infinity(), y_hi = 0.0;
  const auto x_of = [&](const Candidate& c) { return priced ? c.cost : static_cast<double>(c.gpus); };
  for (const Candidate& c : all) {
    if (!c.simulated() || c.time_s <= 0.0 || x_of(c) <= 0.0) continue;
    simulated.push_back(&c);
    if (c.frontier) frontier.push_back(&c);
    x_lo = std::min(x_lo, x_of(c)), x_hi = std::max(x_hi, x_of(c));
    y_lo = std::min(y_lo, c.time_s / 3600.0), y_hi = std::max(y_hi, c.time_s / 3600.0);
  }
  std::string body = fmt::format("<h1>explore: {}</h1>\n<p>{} candidates on {} rank(s): {} simulated ({} from the "
                                 "checkpoint), {} pruned as unable to fit, {} as dominated before simulation, {} "
                                 "that cannot run. Objective: {}{}.</p>\n",
                                 svg::escape(s.name), counts["candidates"].get<size_t>(), counts["ranks"].get<int>(),
                                 counts["simulated"].get<size_t>(), counts["from_checkpoint"].get<size_t>(),
                                 counts["pruned_cannot_fit"].get<size_t>(), counts["pruned_dominated"].get<size_t>(),
                                 counts["cannot_run"].get<size_t>(), svg::escape(s.objective),
                                 best ? ", best " + svg::escape(best->label) : std::string(", no candidate within the caps"));
  if (!simulated.empty()) {
    std::vector<svg::Series> series;
    for (size_t k = 0; k < s.clusters.size(); ++k) {
      svg::Series one{s.clusters[k].cluster, report::series_color(k + 1), {}, {}, false, true, {}};
      for (const Candidate* c : simulated)
        if (c->cluster_index == k) one.x.push_back(x_of(*c)), one.y.push_back(c->time_s / 3600.0);
      if (!one.x.empty()) series.push_back(std::move(one));
    }
    std::sort(frontier.begin(), frontier.end(), [&](const Candidate* a, const Candidate* b) { return x_of(*a) < x_of(*b); });
    svg::Series line{"frontier", report::series_color(0), {}, {}, false, false, {}};
    for (const Candidate* c : frontier) {
      line.x.push_back(x_of(*c));
      line.y.push_back(c->time_s / 3600.0);
      line.labels.push_back(c == best ? "best" : "");
    }
    series.push_back(std::move(line));
    const svg::Axis x = priced ? svg::log_axis("cost to target ($, log scale)", x_lo, x_hi, "$")
                               : svg::log_axis("GPUs (log scale)", x_lo, x_hi, "");
    const svg::Axis y = svg::log_axis("time to target (hours, log scale)", y_lo, y_hi, "");
    svg::Frame frame;
    frame.width = 760.0;
    frame.height = 460.0;
    body += svg::line_chart("pareto", priced ? "Time against cost: the Pareto frontier" : "Time against GPUs", x, y,
                            series, frame);
  }
  body += "<h2>Frontier</h2>\n<table>\n<tr><th>candidate</th><th>images/s</th><th>time to target</th><th>90% "
          "interval</th><th>cost $</th><th>90% interval</th><th>epochs</th></tr>\n";
  std::sort(frontier.begin(), frontier.end(), [](const Candidate* a, const Candidate* b) { return a->time_s < b->time_s; });
  for (const Candidate* c : frontier)
    body += "<tr>" + td(c->label + (c == best ? " (best)" : "")) + td(fmt::format("{:.1f}", c->images_per_sec)) +
            td(format_duration(c->time_s)) +
            td(format_duration(c->time_low_s) + " – " + format_duration(c->time_high_s)) +
            td(c->price_per_gpu_hour > 0.0 ? fmt::format("{:.2f}", c->cost) : "-") +
            td(c->price_per_gpu_hour > 0.0 ? fmt::format("{:.2f} – {:.2f}", c->cost_low, c->cost_high) : "-") +
            td(c->epochs > 0.0 ? fmt::format("{:.1f}", c->epochs) : "-") + "</tr>\n";
  body += "</table>\n<h2>Prices</h2>\n<ul>\n";
  for (const ClusterChoice& c : s.clusters)
    body += "<li>" + svg::escape(c.cluster) + ": " +
            (c.price_per_gpu_hour > 0.0
                 ? fmt::format("${}/GPU-hour ({})", c.price_per_gpu_hour,
                               svg::escape(c.price_source.empty() ? "no source given" : c.price_source))
                 : std::string("not priced")) +
            "</li>\n";
  body += "</ul>\n<p>Each frontier candidate is a scenario file: <code>scaletwin explore SPACE --write-frontier "
          "DIR</code> writes them for <code>predict</code> and <code>run</code>.</p>\n";
  return report::html_page("explore: " + s.name, body);
}

}  // namespace scaletwin::cli
