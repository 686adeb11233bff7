// The HTML report (report/html.hpp): well-formed enough, one <svg> per chart, series points where the axis
// range puts them (hand-computed from the default frame: plot x 70..540, y 52..302), the ideal line, stacked bars
// that add up to the iteration time, and escaped text.
#include <catch2/catch.hpp>

#include "html_helpers.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "report/html.hpp"
#include "report/svg_chart.hpp"

namespace {

using scaletwin::report::PointResult;
using scaletwin::report::Report;


// Four points, 1..8 GPUs, 100 images/s on one GPU; the 8-GPU point waits 10 ms on others and loads data for 5 ms.
Report sample_report() {
  Report r;
  r.scenario = "a<b & c";
  r.model = "resnet50";
  r.cluster = "bsc-k80";
  r.scheme = "ps(sync)";
  const int gpus[] = {1, 2, 4, 8};
  const double rate[] = {100.0, 190.0, 360.0, 680.0};
  for (int i = 0; i < 4; ++i) {
    PointResult p;
    p.gpus = gpus[i];
    p.nodes = 1;
    p.images_per_sec = rate[i];
    p.speedup = rate[i] / 100.0;
    p.efficiency = p.speedup / gpus[i];
    p.iteration_s = 32.0 * gpus[i] / rate[i];
    p.compute_s = 0.3;
    p.phase_s = {{"forward", 0.1}, {"backward_input", 0.1}, {"backward_weight", 0.1}};
    p.exposed_comm_s = p.iteration_s - p.compute_s;
    p.sync = "sync";
    if (i == 3) {
      p.phase_s["data"] = 0.005;
      p.compute_s += 0.005;
      p.exposed_comm_s = p.iteration_s - p.compute_s - 0.010;
    }
    r.predictions.push_back(p);
  }
  return r;
}

using scaletwin::test::chart;
using scaletwin::test::count;

std::vector<std::pair<double, double>> points(const std::string& svg, const std::string& series) {
  const std::regex re("data-series=\"" + series + "\"[^>]*points=\"([^\"]*)\"");
  std::smatch m;
  REQUIRE(std::regex_search(svg, m, re));
  std::vector<std::pair<double, double>> out;
  const std::string list = m[1];
  const std::regex pt("([-0-9.]+),([-0-9.]+)");
  for (auto it = std::sregex_iterator(list.begin(), list.end(), pt); it != std::sregex_iterator(); ++it)
    out.emplace_back(std::stod((*it)[1]), std::stod((*it)[2]));
  return out;
}

}  // namespace

TEST_CASE("report_html is one page with one svg per chart", "[report_html]") {
  const std::string html = scaletwin::report::report_html(sample_report());
  CHECK(count(html, "<html") == 1);
  CHECK(count(html, "</html>") == 1);
  CHECK(count(html, "<body>") == 1);
  CHECK(count(html, "</body>") == 1);
  CHECK(count(html, "<svg") == 4);
  CHECK(count(html, "</svg>") == 4);
  CHECK(count(html, "<table") == count(html, "</table>"));
  for (const char* id : {"images_per_sec", "speedup", "efficiency", "breakdown"})
    CHECK(count(html, std::string("data-chart=\"") + id + "\"") == 1);
  // Self-contained: no scripts, no external resources.
  CHECK(count(html, "<script") == 0);
  CHECK(count(html, "http://") == count(html, "xmlns=\"http://www.w3.org/2000/svg\""));
  CHECK(count(html, "https://") == 0);
  CHECK(count(html, "<link") == 0);
}

TEST_CASE("report_html's table gives each point's 90% interval where the report has one", "[report_html]") {
  Report r = sample_report();
  CHECK_THAT(scaletwin::report::report_html(r), Catch::Contains("<td>100.0</td><td>-</td>"));  // no interval
  r.interval_log_sd = 0.1;  // x/÷ 1.179
  r.assumed_rate = scaletwin::report::AssumedRate{"bsc-k80", 1.25e8, 1.25e8, 1.25e9};
  r.predictions[3].range_low_images_per_sec = 680.0;
  r.predictions[3].range_high_images_per_sec = 900.0;
  const std::string html = scaletwin::report::report_html(r);
  CHECK_THAT(html, Catch::Contains("(×/÷ 1.179)"));
  CHECK_THAT(html, Catch::Contains("bsc-k80&#39;s NIC rate is an assumption"));
  const double f = std::exp(scaletwin::report::kZ90 * 0.1);
  CHECK_THAT(html, Catch::Contains(fmt::format("<td>100.0</td><td>{:.1f}–{:.1f}</td>", 100.0 / f, 100.0 * f)));
  CHECK_THAT(html, Catch::Contains(fmt::format("<td>680.0</td><td>{:.1f}–{:.1f}</td>", 680.0 / f, 900.0 * f)));
  // A dispatch beyond the calibration's support: said once, and each point's interval covers the figure without it.
  r.alternative_notes["without_dispatch"] =
      dispatch_beyond_note(scaletwin::report::DispatchBeyondSupport{"tensorflow", 8, 0.47, 0.21});
  r.predictions[0].alternatives["without_dispatch"] = 150.0;
  const std::string dispatched = scaletwin::report::report_html(r);
  CHECK_THAT(dispatched, Catch::Contains("tensorflow&#39;s dispatch adds 47% of the step&#39;s compute at batch 8"));
  CHECK_THAT(dispatched, Catch::Contains(fmt::format("<td>100.0</td><td>{:.1f}–{:.1f}</td>", 100.0 / f, 150.0 * f)));
}

TEST_CASE("report_html places the images/s points by the axis range", "[report_html]") {
  const std::string svg = chart(scaletwin::report::report_html(sample_report()), "images_per_sec");
  // y axis 0..nice_max(800) = 0..800 (ideal at 8 GPUs is 800 images/s); x axis log2 1..8.
  const auto p = points(svg, "predicted");
  REQUIRE(p.size() == 4);
  CHECK(p[0].first == Approx(70.0).margin(0.006));
  CHECK(p[0].second == Approx(52.0 + 250.0 * (1.0 - 100.0 / 800.0)).margin(0.006));  // 270.75
  CHECK(p[1].first == Approx(70.0 + 470.0 / 3.0).margin(0.006));                      // log2(2)/log2(8)
  CHECK(p[3].first == Approx(540.0).margin(0.006));
  CHECK(p[3].second == Approx(52.0 + 250.0 * (1.0 - 680.0 / 800.0)).margin(0.006));  // 89.5
  const auto ideal = points(svg, "ideal linear");
  REQUIRE(ideal.size() == 4);
  CHECK(ideal[0].second == Approx(270.75).margin(0.006));
  CHECK(ideal[2].second == Approx(52.0 + 250.0 * (1.0 - 400.0 / 800.0)).margin(0.006));
  CHECK(ideal[3].second == Approx(52.0).margin(0.006));
  CHECK(svg.find(">800</text>") != std::string::npos);  // the top tick label

  const std::string speedup = chart(scaletwin::report::report_html(sample_report()), "speedup");
  CHECK(points(speedup, "ideal linear")[3].second == Approx(52.0).margin(0.006));  // 8 of 0..8
  CHECK(points(speedup, "predicted")[3].second == Approx(52.0 + 250.0 * (1.0 - 6.8 / 8.0)).margin(0.006));
  const std::string eff = chart(scaletwin::report::report_html(sample_report()), "efficiency");
  CHECK(points(eff, "ideal linear")[0].second == Approx(52.0 + 250.0 * (1.0 - 100.0 / 120.0)).margin(0.006));
}

TEST_CASE("report_html stacks the time breakdown to the iteration time", "[report_html]") {
  const Report r = sample_report();
  const std::string svg = chart(scaletwin::report::report_html(r), "breakdown");
  const std::regex bar_re("<g class=\"bar\" data-bar=\"([0-9]+)\">([^]*?)</g>");
  const std::regex seg_re("data-segment=\"([a-z ]+)\" data-value=\"([-0-9.e+]+)\" x=\"[-0-9.]+\" y=\"([-0-9.]+)\""
                          " width=\"[-0-9.]+\" height=\"([-0-9.]+)\"");
  // y axis 0..nice_max(0.376 s at 8 GPUs, the longest iteration) = 0.4 s over 250 px.
  double longest_s = 0.0;
  for (const PointResult& p : r.predictions) longest_s = std::max(longest_s, p.iteration_s);
  const double axis_max = scaletwin::report::svg::nice_max(longest_s);
  CHECK(axis_max == 0.4);
  size_t bars = 0;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), bar_re); it != std::sregex_iterator(); ++it, ++bars) {
    const PointResult& p = r.predictions.at(bars);
    CHECK(std::stoi((*it)[1]) == p.gpus);
    const std::string body = (*it)[2];
    double value_sum = 0.0, height_sum = 0.0, top = 1e9;
    int segments = 0;
    const auto end = std::sregex_iterator();
    for (auto s = std::sregex_iterator(body.begin(), body.end(), seg_re); s != end; ++s, ++segments) {
      value_sum += std::stod((*s)[2]);
      height_sum += std::stod((*s)[4]);
      top = std::min(top, std::stod((*s)[3]));
    }
    CHECK(segments == 4);
    CHECK(value_sum == Approx(p.iteration_s).epsilon(1e-8));
    CHECK(height_sum == Approx(250.0 * p.iteration_s / axis_max).margin(0.02));
    CHECK(top == Approx(52.0 + 250.0 * (1.0 - p.iteration_s / axis_max)).margin(0.006));
  }
  CHECK(bars == 4);
  const auto b = scaletwin::report::time_breakdown(r.predictions[3]);
  CHECK(b.data_s == 0.005);
  CHECK(b.compute_s == Approx(0.3));
  CHECK(b.idle_s == Approx(0.010));
  CHECK(b.data_s + b.compute_s + b.exposed_comm_s + b.idle_s == Approx(r.predictions[3].iteration_s));
}

TEST_CASE("report_html escapes text and draws one series per scheme", "[report_html]") {
  const Report r = sample_report();
  const std::string html = scaletwin::report::report_html(r);
  CHECK(html.find("a<b & c") == std::string::npos);
  CHECK(count(html, "a&lt;b &amp; c") == 2);  // <title> and <h1>
  CHECK(scaletwin::report::svg::escape("\"'<>&") == "&quot;&#39;&lt;&gt;&amp;");

  Report other = r;
  other.scheme = "allreduce(ring)";
  for (PointResult& p : other.predictions) p.images_per_sec *= 1.1, p.speedup *= 1.1;
  scaletwin::report::ReportContext context;
  context.batch_per_gpu = 32;
  context.calibration_source = "cal.json";
  context.calibration = {{"message_overhead_s", 5e-6}, {"links", {{"pcie", {{"bandwidth_factor", 0.85}}}}}};
  const std::string two = scaletwin::report::report_html({r, other}, context);
  const std::string svg = chart(two, "images_per_sec");
  CHECK(points(svg, "\\(1\\) ps\\(sync\\)").size() == 4);
  CHECK(points(svg, "\\(2\\) allreduce\\(ring\\)").size() == 4);
  CHECK(points(svg, "ideal linear").size() == 4);  // one ideal: both schemes have the same 1-GPU rate
  CHECK(count(svg, "data-series=\"ideal") == 1);
  CHECK(count(two, "<svg") == 4);
  CHECK(count(chart(two, "breakdown"), "class=\"bar\"") == 8);
  CHECK(two.find("32 per GPU") != std::string::npos);
  CHECK(two.find("links / pcie / bandwidth_factor</td><td>0.85") != std::string::npos);
}

TEST_CASE("nice_max rounds up to a round mantissa times a power of ten", "[report_html]") {
  using scaletwin::report::svg::nice_max;
  CHECK(nice_max(800.0) == 800.0);
  CHECK(nice_max(801.0) == 1000.0);
  CHECK(nice_max(3238.0) == 4000.0);
  CHECK(nice_max(1.265) == 1.5);
  CHECK(nice_max(500.0) == 500.0);
  CHECK(nice_max(680.0) == 800.0);
  CHECK(nice_max(0.32) == 0.4);
  CHECK(nice_max(0.2501) == Approx(0.3));
  CHECK(nice_max(8.0) == 8.0);
  CHECK(nice_max(9.0) == 10.0);
  CHECK(nice_max(2.2) == 2.5);
  CHECK(nice_max(0.0) == 1.0);
}

TEST_CASE("line_chart labels points beside their markers and draws marker-only series without a line",
          "[report_html]") {
  namespace svg = scaletwin::report::svg;
  svg::Axis x = svg::linear_axis("x", 4.0);  // 0..4 over 70..540
  svg::Axis y = svg::linear_axis("y", 8.0);  // 0..8 over 302..52
  svg::Series labelled{"pred", "#d62728", {1.0, 2.0}, {2.0, 4.0}, true, false, {"+1.0%", "a<b"}};
  svg::Series scatter{"runs", "#1f77b4", {3.0}, {6.0}, false, true, {}};
  const std::string out = svg::line_chart("t", "T", x, y, {labelled, scatter});
  // Labelled dashed series: a dashed line and hollow markers, each label 6 px right of and above its marker.
  CHECK(count(out, "<polyline class=\"series\" data-series=\"pred\"") == 1);
  CHECK(out.find("<circle class=\"marker\" data-series=\"pred\" cx=\"187.50\" cy=\"239.50\" r=\"3.5\" fill=\"#fff\" "
                 "stroke=\"#d62728\"") != std::string::npos);
  CHECK(out.find("<text class=\"point-label\" data-series=\"pred\" x=\"193.50\" y=\"233.50\" font-size=\"11\" "
                 "fill=\"#d62728\">+1.0%</text>") != std::string::npos);
  CHECK(out.find(">a&lt;b</text>") != std::string::npos);
  // Marker-only series: no polyline, one filled marker at (3, 6) = (422.5, 114.5), a round legend key.
  CHECK(count(out, "data-series=\"runs\" fill=\"none\"") == 0);
  CHECK(out.find("<circle class=\"marker\" data-series=\"runs\" cx=\"422.50\" cy=\"114.50\" r=\"3.5\" fill=\"#1f77b4\">")
        != std::string::npos);
  CHECK(count(out, "class=\"point-label\"") == 2);
}

TEST_CASE("report_html: a time-to-target chart when the report has times, in hours past 3 hours", "[unit]") {
  Report r = sample_report();
  CHECK(count(scaletwin::report::report_html(r), "data-chart=\"time_to_target\"") == 0);
  const double hours[] = {40.0, 21.0, 11.0, 6.0};
  for (size_t i = 0; i < r.predictions.size(); ++i) r.predictions[i].time_to_target_s = hours[i] * 3600.0;
  r.time_basis = "test accuracy 0.76";
  const std::string html = scaletwin::report::report_html(r);
  CHECK(count(html, "data-chart=\"time_to_target\"") == 1);
  const std::string svg = chart(html, "time_to_target");
  CHECK(count(svg, ">hours<") == 1);
  const auto p = points(svg, "predicted");
  REQUIRE(p.size() == 4);
  CHECK(p[0].second < p[3].second);  // 40 h is higher on the chart (smaller y) than 6 h
}

TEST_CASE("report_html shades each point's 90% interval and takes a log axis where the rates span decades",
          "[report_html]") {
  Report r = sample_report();
  r.interval_log_sd = 0.1;
  std::string svg = chart(scaletwin::report::report_html(r), "images_per_sec");
  // One band for the predicted series: its high ends left to right, then its low ends back.
  REQUIRE(count(svg, "<polygon class=\"band\" data-series=\"predicted\"") == 1);
  const std::regex band("<polygon class=\"band\"[^>]*points=\"([^\"]*)\"");
  std::smatch m;
  REQUIRE(std::regex_search(svg, m, band));
  const std::string list = m[1];
  const std::regex pt("([-0-9.]+),([-0-9.]+)");
  std::vector<std::pair<double, double>> corners;
  for (auto it = std::sregex_iterator(list.begin(), list.end(), pt); it != std::sregex_iterator(); ++it)
    corners.emplace_back(std::stod((*it)[1]), std::stod((*it)[2]));
  REQUIRE(corners.size() == 8);
  CHECK(corners[0].second < corners[7].second);  // at 1 GPU the high end is above (smaller y) the low end
  CHECK(svg.find("(log scale)") == std::string::npos);  // 1..8 GPUs: 86 to 800 images/s, linear
  // From 1 to 4,096 GPUs the rates span more than a decade and a half: a log axis, ticks at powers of ten.
  for (int g = 16; g <= 4096; g *= 4) {
    PointResult p = r.predictions.back();
    p.gpus = g;
    p.images_per_sec = 85.0 * g;
    p.speedup = 0.85 * g;
    r.predictions.push_back(p);
  }
  svg = chart(scaletwin::report::report_html(r), "images_per_sec");
  CHECK(svg.find("images/s (log scale)") != std::string::npos);
  CHECK(svg.find(">10000</text>") != std::string::npos);
  CHECK(svg.find(">1e+06</text>") != std::string::npos);
}

TEST_CASE("calibration_details marks the device entry that applied and dims the others", "[report_html]") {
  const scaletwin::Json calibration = {
      {"devices", {{"default", {{"conv", 0.5}}}, {"family:hopper", {{"conv", 0.7}, {"memory", 0.9}}}}},
      {"message_overhead_s", 1e-5}};
  const std::string html = scaletwin::report::calibration_details("modern.json", calibration, "family:hopper");
  CHECK_THAT(html, Catch::Contains("the GPU's entry: devices / family:hopper"));
  CHECK(count(html, "<tr class=\"applied\">") == 2);
  CHECK_THAT(html, Catch::Contains("devices / family:hopper / conv (applied)"));
  CHECK(count(html, "<tr class=\"unused\">") == 1);  // default's one row
  CHECK_THAT(html, Catch::Contains("<tr><td>message_overhead_s</td>"));  // not a device row: neither
  // Without the entry: no marks.
  CHECK(count(scaletwin::report::calibration_details("modern.json", calibration), "class=\"applied\"") == 0);
}
