// validate's error and MAPE formulas on a hand-computed case, its JSON shape (../shared/spec.md), and the HTML
// report of validate --report.
#include <catch2/catch.hpp>

#include "../report/html_helpers.hpp"

#include <algorithm>
#include <cmath>
#include <regex>
#include <string>
#include <vector>

#include "calibrate/validate.hpp"
#include "report/report.hpp"
#include "report/validation.hpp"

using namespace scaletwin::calibrate;
using namespace scaletwin::report;

TEST_CASE("error = (predicted - measured) / measured, MAPE = mean |error| in percent", "[unit]") {
  // errors: (110-100)/100 = +0.10, (150-200)/200 = -0.25, (40-40)/40 = 0  ->  MAPE = 100 * 0.35 / 3
  const Validation v = make_validation({"a", "b", "c"}, {100, 200, 40}, {110, 150, 40});
  REQUIRE(v.rows.size() == 3);
  CHECK(v.rows[0].error == Approx(0.10).epsilon(1e-12));
  CHECK(v.rows[1].error == Approx(-0.25).epsilon(1e-12));
  CHECK(v.rows[2].error == 0.0);
  CHECK(v.mape == Approx(35.0 / 3.0).epsilon(1e-12));
  const auto j = validation_to_json(v);
  CHECK(j.at("mape") == Approx(35.0 / 3.0));
  CHECK(j.at("runs").size() == 3);
  CHECK(j.at("runs")[1].at("id") == "b");
  CHECK(j.at("runs")[1].at("measured_images_per_sec") == 200.0);
  CHECK(j.at("runs")[1].at("predicted_images_per_sec") == 150.0);
  CHECK(j.at("runs")[1].at("error") == Approx(-0.25));
  const std::string table = validation_table(v);
  CHECK(table.find("-25.0%") != std::string::npos);
  CHECK(table.find("MAPE 11.67%") != std::string::npos);
}

// The validation report page (report/validation.hpp): runs with hand-picked predictions, so every error
// label and every pixel position below is computed by hand.
namespace {

using scaletwin::Json;
using scaletwin::test::chart;
using scaletwin::test::count;

struct Label {
  double x, y;
  std::string text;
};

// The point labels of a series, in order.
std::vector<Label> labels(const std::string& svg, const std::string& series) {
  const std::regex re("class=\"point-label\" data-series=\"" + series +
                      "\" x=\"([-0-9.]+)\" y=\"([-0-9.]+)\"[^>]*>([^<]*)</text>");
  std::vector<Label> out;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator(); ++it)
    out.push_back({std::stod((*it)[1]), std::stod((*it)[2]), (*it)[3].str()});
  return out;
}

void check_label(const Label& l, double marker_x, double marker_y, const std::string& text, double dx = 6.0) {
  CHECK(l.x == Approx(marker_x + dx).margin(0.006));  // beside the marker, up and right (left at the right edge)
  CHECK(l.y == Approx(marker_y - 6.0).margin(0.006));
  CHECK(l.text == text);
}

Json run(const std::string& id, const std::string& model, int gpus, const Json& scheme, double images_per_sec) {
  return {{"id", id}, {"cluster", "aws-p2.8xlarge"}, {"nodes", 1}, {"gpus_per_node", gpus}, {"model", model},
          {"batch_per_gpu", 64}, {"data", "synthetic"}, {"scheme", scheme}, {"images_per_sec", images_per_sec}};
}

// The rows of v labelled with their runs, as validate_runs labels them.
Validation labelled(Validation v, const std::vector<MeasuredRun>& runs) {
  REQUIRE(v.rows.size() == runs.size());
  for (size_t i = 0; i < runs.size(); ++i) v.rows[i].run = run_labels(runs[i]);
  return v;
}

}  // namespace

TEST_CASE("the validation report charts every run with its error and lists runs, MAPE and calibration", "[unit]") {
  const Json ps = {{"name", "ps"}, {"mode", "sync"}, {"placement", "host_cpu"}};
  const Json direct = {{"name", "allreduce"}, {"algorithm", "direct"}};
  const Json file = {{"format", "scaletwin-measurements/1"},
                     {"runs",
                      {run("r50-1", "resnet50", 1, ps, 100), run("r50-2", "resnet50", 2, ps, 180),
                       run("r50-4", "resnet50", 4, ps, 300), run("r50-8-direct", "resnet50", 8, direct, 500),
                       run("vgg<1>", "vgg16", 1, ps, 40)}}};
  const auto runs = parse_measurements(file, "m.json");
  // errors +10%, -5%, 0%, +20%, -50%
  const Validation v = make_validation({"r50-1", "r50-2", "r50-4", "r50-8-direct", "vgg<1>"}, {100, 180, 300, 500, 40},
                                      {110, 171, 300, 600, 20});
  ValidationReportContext context;
  context.measurement_files = {"m.json"};
  context.calibration_source = "k80.json";
  context.calibration = {{"message_overhead_s", 5e-6}};
  const std::string html = validation_html(labelled(v, runs), context);

  // One complete, self-contained page: the parity chart and one chart per configuration (resnet50, vgg16).
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(html.size() > 7);
  CHECK(html.substr(html.size() - 8) == "</html>\n");
  CHECK(count(html, "<svg") == 3);
  CHECK(count(html, "</svg>") == 3);
  CHECK(count(html, "<table") == count(html, "</table>"));
  CHECK(count(html, "<script") == 0);
  CHECK(count(html, "https://") == 0);

  // resnet50: x log2 over 1..8 GPUs (plot 70..540), y 0..nice_max(600 * 1.1) = 800 over 52..302.
  const std::string r50 = chart(html, "config-1");
  CHECK(r50.find("resnet50 · aws-p2.8xlarge · batch 64 per GPU · synthetic data") != std::string::npos);
  const auto first = labels(r50, "\\(1\\) predicted");
  REQUIRE(first.size() == 3);
  check_label(first[0], 70.0, 52.0 + 250.0 * (1.0 - 110.0 / 800.0), "(1) +10.0%");
  check_label(first[1], 70.0 + 470.0 / 3.0, 52.0 + 250.0 * (1.0 - 171.0 / 800.0), "(1) -5.0%");
  check_label(first[2], 70.0 + 2.0 * 470.0 / 3.0, 52.0 + 250.0 * (1.0 - 300.0 / 800.0), "(1) +0.0%");
  const auto second = labels(r50, "\\(2\\) predicted");
  REQUIRE(second.size() == 1);
  check_label(second[0], 540.0, 52.0 + 250.0 * (1.0 - 600.0 / 800.0), "(2) +20.0%", -6.0);  // 546 + 10 chars > 560
  CHECK(labels(r50, "\\(1\\) measured").empty());
  CHECK(count(r50, "class=\"marker\" data-series=\"(1) measured\"") == 3);
  CHECK(count(r50, "class=\"marker\" data-series=\"(1) predicted\"") == 3);
  CHECK(count(r50, "<polyline class=\"series\"") == 4);
  CHECK(html.find("<li>(2) allreduce(direct") != std::string::npos);  // the scheme key under the chart
  const std::string vgg = chart(html, "config-2");
  CHECK(labels(vgg, "predicted").size() == 1);  // one scheme: no "(k)" tags
  CHECK(labels(vgg, "predicted")[0].text == "-50.0%");

  // Parity: 420 x 420 frame, plot x 70..400, y 52..370, both axes 0..600; scheme names as marker-only series.
  const std::string parity = chart(html, "parity");
  CHECK(count(parity, "class=\"marker\" data-series=\"ps\"") == 4);
  CHECK(count(parity, "class=\"marker\" data-series=\"allreduce\"") == 1);
  CHECK(count(parity, "<polyline class=\"series\" data-series=\"ps\"") == 0);
  CHECK(parity.find("data-series=\"predicted = measured\" fill=\"none\" stroke=\"#7f7f7f\" stroke-width=\"1.5\" "
                    "stroke-dasharray=\"6 4\" points=\"70.00,370.00 400.00,52.00\"") != std::string::npos);
  CHECK(parity.find("data-series=\"ps\" cx=\"125.00\" cy=\"311.70\"") != std::string::npos);  // (100, 110)

  // The table: a row per run with its error, escaped ids, the MAPE, the calibration's source and values.
  CHECK(count(html, "<tr data-run=") == 5);
  CHECK(html.find("<tr data-run=\"vgg&lt;1&gt;\"><td>vgg&lt;1&gt;</td>") != std::string::npos);
  CHECK(html.find("<td>+20.0%</td></tr>") != std::string::npos);
  CHECK(v.mape == Approx(17.0));
  CHECK(html.find("MAPE 17.00% over 5 runs") != std::string::npos);
  CHECK(html.find("Calibration: k80.json") != std::string::npos);
  CHECK(html.find("<td>message_overhead_s</td><td>5e-06</td>") != std::string::npos);
}

// Eight schemes at one GPU count (the closed loop's validation): every predicted point's label names its scheme's
// tag and error, and no two labels overlap. Label boxes are estimated from the SVG text alone: font size × 0.6 per
// character wide, one font size high above the baseline, and ending at x where text-anchor="end".
namespace {

struct TextBox {
  double x0, y0, x1, y1;
  std::string series, text;
};

std::vector<TextBox> label_boxes(const std::string& svg) {
  const std::regex re("<text class=\"point-label\" data-series=\"([^\"]*)\" x=\"([-0-9.]+)\" y=\"([-0-9.]+)\""
                      "( text-anchor=\"end\")? font-size=\"([0-9.]+)\"[^>]*>([^<]*)</text>");
  std::vector<TextBox> out;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator(); ++it) {
    const double x = std::stod((*it)[2]), y = std::stod((*it)[3]), font = std::stod((*it)[5]);
    const std::string text = (*it)[6];
    const double width = 0.6 * font * static_cast<double>(text.size());
    const double x0 = (*it)[4].matched ? x - width : x;
    out.push_back({x0, y - font, x0 + width, y, (*it)[1], text});
  }
  return out;
}

}  // namespace

TEST_CASE("the validation chart of eight schemes at one GPU count has no overlapping labels", "[unit]") {
  const std::vector<Json> schemes = {
      {{"name", "ps"}, {"mode", "async"}},
      {{"name", "allreduce"}, {"algorithm", "halving_doubling"}},
      {{"name", "allreduce"}, {"algorithm", "hierarchical"}},
      {{"name", "hybrid"}, {"data_parallel", {{"name", "allreduce"}, {"algorithm", "ring"}}}},
      {{"name", "allreduce"}, {"algorithm", "interval_pairing"}},
      {{"name", "ps"}, {"mode", "mixed_async"}},
      {{"name", "ps"}, {"mode", "sync"}},
      {{"name", "allreduce"}, {"algorithm", "ring"}}};
  // The closed loop's figures: measured images/s, and predictions within a few percent of each other.
  const std::vector<double> measured = {10532, 11702, 12523, 12197, 12776, 10613, 12310, 13224};
  const std::vector<double> predicted = {12047, 12524, 12524, 12527, 12524, 12260, 12529, 12524};
  Json runs_json = Json::array();
  std::vector<std::string> ids;
  for (size_t k = 0; k < schemes.size(); ++k) {
    ids.push_back("run-" + std::to_string(k + 1));
    runs_json.push_back(run(ids.back(), "lenet5", 2, schemes[k], measured[k]));
  }
  const auto runs = parse_measurements({{"format", "scaletwin-measurements/1"}, {"runs", runs_json}}, "m.json");
  const Validation v = make_validation(ids, measured, predicted);
  const std::string svg = chart(validation_html(labelled(v, runs), ValidationReportContext{}), "config-1");

  const std::vector<TextBox> boxes = label_boxes(svg);
  REQUIRE(boxes.size() == 8);
  for (size_t k = 0; k < boxes.size(); ++k) {
    INFO("label " << boxes[k].text << " at " << boxes[k].x0 << "," << boxes[k].y1);
    const std::string tag = "(" + std::to_string(k + 1) + ")";
    CHECK(boxes[k].series == tag + " predicted");
    CHECK(boxes[k].text == tag + " " + scaletwin::report::error_label((predicted[k] - measured[k]) / measured[k]));
    for (size_t j = 0; j < k; ++j) {
      const TextBox &a = boxes[j], &b = boxes[k];
      INFO("overlaps " << a.text << " at " << a.x0 << "," << a.y1);
      CHECK_FALSE((a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1));
    }
  }
  // Labels moved off their default spot keep a leader line to their marker; at least the near-equal predictions
  // (six within 0.05% of 12,524 images/s) had to move.
  const size_t leaders = count(svg, "<line class=\"leader\"");
  CHECK(leaders >= 5);
  CHECK(leaders < 8);  // the first label placed keeps its spot
}

TEST_CASE("the 90% interval of each prediction and how many measured runs fall inside", "[unit]") {
  Validation v = make_validation({"a", "b", "c"}, {100.0, 100.0, 100.0}, {105.0, 130.0, 90.0});
  set_intervals(v, 0.1);  // x exp(-+0.1645): 0.848x .. 1.179x
  CHECK(v.rows[0].interval_low == Approx(105.0 * std::exp(-1.6448536269514722 * 0.1)));
  CHECK(v.rows[0].interval_high == Approx(105.0 * std::exp(1.6448536269514722 * 0.1)));
  CHECK(v.inside_interval == 2);  // 130 predicted: 110.3 .. 153.2 leaves 100 out
  const Json j = validation_to_json(v);
  CHECK(j.at("interval").at("inside") == 2);
  CHECK(j.at("runs").at(1).at("predicted_interval").size() == 2);
  set_intervals(v, 0.0);
  CHECK(v.inside_interval == 0);
  CHECK_FALSE(validation_to_json(v).contains("interval"));
}

TEST_CASE("a run predicted at both ends of an assumed NIC rate: its interval covers them", "[unit]") {
  Validation v = make_validation({"a", "b", "c"}, {100.0, 100.0, 100.0}, {60.0, 60.0, 130.0});
  v.rows[0].range_low_images_per_sec = 60.0;  // the stated rate is the low end; the high end predicts 95
  v.rows[0].range_high_images_per_sec = 95.0;
  const double f = std::exp(1.6448536269514722 * 0.1);
  set_intervals(v, 0.1);
  CHECK(v.rows[0].interval_low == Approx(60.0 / f));
  CHECK(v.rows[0].interval_high == Approx(95.0 * f));  // 112: 100 measured is inside
  CHECK(v.rows[1].interval_high == Approx(60.0 * f));  // 70.7: without a range it is not
  CHECK(v.inside_interval == 1);  // a only: c's 130 / 1.179 = 110.3 leaves 100 out
  const Json j = validation_to_json(v);
  CHECK(j.at("runs").at(0).at("predicted_assumed_range") == Json::array({60.0, 95.0}));
  CHECK_FALSE(j.at("runs").at(1).contains("predicted_assumed_range"));
  CHECK_THAT(validation_table(v), Catch::Contains("1 of the runs are on several nodes of a cluster whose NIC rate"));
  set_intervals(v, 0.0);  // no calibrated interval: only the range's
  CHECK(v.rows[0].interval_low == 60.0);
  CHECK(v.rows[0].interval_high == 95.0);
  CHECK(v.rows[1].interval_high == 0.0);
  CHECK(validation_to_json(v).at("runs").at(0).contains("predicted_interval"));
  CHECK_FALSE(validation_to_json(v).at("runs").at(1).contains("predicted_interval"));
}

TEST_CASE("validate --by: MAPE, largest error and interval coverage per group of runs", "[unit]") {
  // errors +10%, -20%, +5%, -40%
  Validation v = make_validation({"a", "b", "c", "d"}, {100, 100, 100, 100}, {110, 80, 105, 60});
  set_intervals(v, 0.1);  // x/1.179 .. 1.179x: a and c inside, b (67.9-94.3) and d out
  set_groups(v, {"framework", "model"}, {{"tf", "vgg16"}, {"mxnet", "alexnet"}, {"tf", "vgg16"}, {"tf", ""}});
  REQUIRE(v.groups.size() == 3);  // sorted by values: mxnet/alexnet, tf/"", tf/vgg16
  CHECK(v.groups[0].values == std::vector<std::string>{"mxnet", "alexnet"});
  CHECK(v.groups[0].mape == Approx(20.0));
  CHECK(v.groups[0].inside_interval == 0);
  const ValidationGroup& vgg = v.groups[2];
  CHECK(vgg.runs == 2);
  CHECK(vgg.mape == Approx(7.5));
  CHECK(vgg.max_abs_error == Approx(0.10));
  CHECK(vgg.with_interval == 2);
  CHECK(vgg.inside_interval == 2);
  const Json j = validation_to_json(v);
  CHECK(j.at("groups").at("by") == Json::array({"framework", "model"}));
  CHECK(j.at("groups").at("groups").at(2).at("values").at("model") == "vgg16");
  CHECK(j.at("groups").at("groups").at(1).at("max_abs_error") == Approx(0.40));
  const std::string table = validation_table(v);
  CHECK_THAT(table, Catch::Contains("by framework, model:"));
  CHECK(std::regex_search(table, std::regex(R"(tf +vgg16 +2 +7\.50% +10\.0% +2/2)")));
  CHECK(std::regex_search(table, std::regex(R"(tf +- +1 +40\.00% +40\.0% +0/1)")));  // an empty value reads "-"
  CHECK_FALSE(validation_to_json(make_validation({"a"}, {1}, {1})).contains("groups"));
  for (ValidationRow& r : v.rows) r.run = RunLabels{1, 1, "m", "c", 32, "synthetic", "ring", "allreduce"};
  const std::string html = validation_html(v, ValidationReportContext{});  // the page's table, the same figures
  CHECK_THAT(html, Catch::Contains("<h2>By framework, model</h2>"));
  CHECK_THAT(html, Catch::Contains("<tr><td>tf</td><td>vgg16</td><td>2</td><td>7.50%</td><td>10.0%</td>"
                                   "<td>2 of 2</td></tr>"));
  CHECK(count(html, "<table") == count(html, "</table>"));
  set_groups(v, {"nodes"}, {{"16"}, {"2"}, {"16"}, {"gce"}});  // numbers as numbers, before words
  REQUIRE(v.groups.size() == 3);
  CHECK(v.groups[0].values[0] == "2");
  CHECK(v.groups[1].values[0] == "16");
  CHECK(v.groups[1].runs == 2);
}

TEST_CASE("validate predicts a run on several p2.xlarge at both ends of the assumed NIC rate", "[unit]") {
  // aws-p2.xlarge states 1 Gbit/s within 1-10 Gbit/s; its what-if cluster file states 10 Gbit/s, nothing else changed.
  const auto run = [](const std::string& id, const std::string& cluster, int nodes) {
    return Json{{"id", id}, {"cluster", cluster}, {"nodes", nodes}, {"gpus_per_node", 1}, {"model", "resnet50_v1"},
                {"batch_per_gpu", 64}, {"framework", "tensorflow"}, {"images_per_sec", 150.0},
                {"scheme", {{"name", "ps"}, {"placement", "colocated"}, {"servers", nodes}}}};
  };
  const std::string what_if = std::string(SCALETWIN_SOURCE_DIR) + "/scenarios/what-if/aws-p2.xlarge-10gbe.json";
  const Json doc = {{"format", "scaletwin-measurements/1"},
                    {"runs", {run("stated", "aws-p2.xlarge", 4), run("one", "aws-p2.xlarge", 1),
                              run("fast", what_if, 4)}}};
  const Validation v = validate_runs(parse_measurements(doc, "m.json"), scaletwin::sim::default_calibration(), 2);
  REQUIRE(v.rows.size() == 3);
  const ValidationRow& stated = v.rows[0];
  CHECK(stated.range_low_images_per_sec == Approx(stated.predicted_images_per_sec).epsilon(1e-9));
  CHECK(stated.range_high_images_per_sec == Approx(v.rows[2].predicted_images_per_sec).epsilon(1e-9));
  CHECK(stated.range_high_images_per_sec > 1.2 * stated.predicted_images_per_sec);  // the network decides
  CHECK(stated.interval_low == stated.range_low_images_per_sec);  // no calibrated interval: the range alone
  CHECK(stated.interval_high == stated.range_high_images_per_sec);
  CHECK(v.rows[1].range_high_images_per_sec == 0.0);  // one instance: nothing crosses the network
  CHECK(v.rows[2].range_high_images_per_sec == 0.0);  // the what-if states its rate without a range
}

TEST_CASE("a measured run with a server per node is predicted as the run that states their number", "[unit]") {
  const auto run = [](const std::string& id, const Json& servers, const std::string& placement) {
    return Json{{"id", id}, {"cluster", "aws-p2.8xlarge"}, {"nodes", 2}, {"gpus_per_node", 8},
                {"model", "resnet50_v1"}, {"batch_per_gpu", 64}, {"framework", "tensorflow"}, {"images_per_sec", 700.0},
                {"scheme", {{"name", "ps"}, {"placement", placement}, {"servers", servers}}}};
  };
  const Json doc = {{"format", "scaletwin-measurements/1"},
                    {"runs", {run("per-node", "per_node", "colocated"), run("two", 2, "colocated"),
                              run("per-gpu", "per_gpu", "device"), run("sixteen", 16, "device")}}};
  const Validation v = validate_runs(parse_measurements(doc, "m.json"), scaletwin::sim::default_calibration(), 2);
  REQUIRE(v.rows.size() == 4);
  CHECK(v.rows[0].predicted_images_per_sec == Approx(v.rows[1].predicted_images_per_sec).epsilon(1e-12));
  CHECK(v.rows[2].predicted_images_per_sec == Approx(v.rows[3].predicted_images_per_sec).epsilon(1e-12));
  // servers on the nodes' CPUs and on the GPUs are other runs (TensorFlow's whole tensors bring them within 0.1%)
  CHECK(v.rows[0].predicted_images_per_sec != Approx(v.rows[2].predicted_images_per_sec).epsilon(1e-4));
}

TEST_CASE("validate measures each stack's dispatch and covers a run beyond its support without it", "[unit]") {
  // TensorFlow's ResNet-50 (v1) on one K80 at batch 8 and 64 under the shipped calibration, whose dispatch support
  // is that of the reference runs (batch 32 and 64): batch 8 leans on the dispatch further.
  const auto run = [](const std::string& id, int batch) {
    return Json{{"id", id}, {"cluster", "aws-p2.xlarge"}, {"nodes", 1}, {"gpus_per_node", 1},
                {"model", "resnet50_v1"}, {"batch_per_gpu", batch}, {"framework", "tensorflow"},
                {"images_per_sec", 40.0}, {"scheme", {{"name", "allreduce"}}}};
  };
  const Json doc = {{"format", "scaletwin-measurements/1"}, {"runs", {run("b8", 8), run("b64", 64)}}};
  const scaletwin::sim::Calibration shipped = scaletwin::sim::choose_calibration("shipped:k80", "").calibration;
  REQUIRE(shipped.dispatch_support.count("tensorflow") == 1);
  const Validation v = validate_runs(parse_measurements(doc, "m.json"), shipped, 2);
  const ValidationRow& b8 = v.rows[0];
  CHECK(b8.dispatch_share > shipped.dispatch_support.at("tensorflow"));
  CHECK(b8.alternatives.at("without_dispatch") > 1.3 * b8.predicted_images_per_sec);  // the dispatch weighs on batch 8
  CHECK(b8.interval_high ==
        Approx(b8.alternatives.at("without_dispatch") * std::exp(1.6448536269514722 * shipped.prediction_log_sd)));
  CHECK(v.rows[1].dispatch_share < shipped.dispatch_support.at("tensorflow"));
  CHECK(v.rows[1].alternatives.empty());  // within the support: the interval as fitted
  CHECK(v.dispatch_support.at("tensorflow") == b8.dispatch_share);  // these runs' own, the larger
  const Json j = validation_to_json(v);
  CHECK(j.at("runs").at(0).at("predicted_without_dispatch") == b8.alternatives.at("without_dispatch"));
  CHECK_FALSE(j.at("runs").at(1).contains("predicted_without_dispatch"));
  CHECK_THAT(validation_table(v), Catch::Contains("1 of the runs lean on their stack's dispatch more than"));
  // A calibration that states no support (a fresh fit, the defaults) checks nothing.
  scaletwin::sim::Calibration bare = shipped;
  bare.dispatch_support.clear();
  CHECK(validate_runs(parse_measurements(doc, "m.json"), bare, 2).rows[0].alternatives.empty());
}

TEST_CASE("validate counts the runs of networks the calibration was not fitted on", "[unit]") {
  const auto run = [](const std::string& id, const std::string& model) {
    return Json{{"id", id}, {"cluster", "aws-p2.xlarge"}, {"nodes", 1}, {"gpus_per_node", 1}, {"model", model},
                {"batch_per_gpu", 32}, {"images_per_sec", 40.0}, {"scheme", {{"name", "allreduce"}}}};
  };
  const Json doc = {{"format", "scaletwin-measurements/1"},
                    {"runs", {run("a", "resnet101_v1"), run("b", "resnet50_v1"), run("c", "resnet101_v1")}}};
  scaletwin::sim::Calibration c = scaletwin::sim::default_calibration();
  c.fitted_networks["Tesla K80 (one GK210)"] = {"resnet50_v1"};
  c.prediction_log_sd = 0.05;
  c.cross_validation_folds = {{"model!=vgg16", 10, 12.0, 0.2}};
  const Validation v = validate_runs(parse_measurements(doc, "m.json"), c, 2);
  // The unseen network's runs get the left-out folds' interval, the fitted one the calibration's.
  const auto factor = [](const ValidationRow& r) { return r.interval_high / r.predicted_images_per_sec; };
  CHECK(factor(v.rows[0]) == Approx(std::exp(1.6448536269514722 * 0.2)));
  CHECK(factor(v.rows[1]) == Approx(std::exp(1.6448536269514722 * 0.05)));
  CHECK(factor(v.rows[2]) == Approx(std::exp(1.6448536269514722 * 0.2)));
  CHECK(v.interval_log_sd == 0.05);
  REQUIRE(v.unfitted_networks.size() == 1);
  CHECK(v.unfitted_networks[0].first.network == "resnet101_v1");
  CHECK(v.unfitted_networks[0].second == 2);
  CHECK_THAT(validation_table(v), Catch::Contains("2 runs: resnet101_v1 is not among the networks"));
  const Json j = validation_to_json(v);
  CHECK(j.at("unfitted_networks").at(0).at("runs") == 2);
  CHECK(j.at("unfitted_networks").at(0).at("fitted") == Json({"resnet50_v1"}));
}

TEST_CASE("validate simulates each run as predict would: message level up to 64 GPUs, the fast mode above", "[unit]") {
  const Json doc = {{"format", "scaletwin-measurements/1"},
                    {"runs",
                     {{{"id", "small"}, {"cluster", "dgx-h200"}, {"nodes", 1}, {"gpus_per_node", 2}, {"model", "resnet50"},
                       {"batch_per_gpu", 64}, {"scheme", {{"name", "allreduce"}}}, {"images_per_sec", 5000.0}},
                      {{"id", "large"}, {"cluster", "dgx-h200"}, {"nodes", 16}, {"gpus_per_node", 8}, {"model", "resnet50"},
                       {"batch_per_gpu", 64}, {"scheme", {{"name", "allreduce"}}}, {"images_per_sec", 300000.0}}}}};
  const auto runs = parse_measurements(doc, "m.json");
  const Validation v = validate_runs(runs, scaletwin::sim::default_calibration(), 2);
  REQUIRE(v.rows.size() == 2);
  CHECK(v.rows[0].fidelity == "message");
  CHECK(v.rows[1].fidelity == "fast");
  CHECK(validation_to_json(v).at("runs")[1].at("fidelity") == "fast");
  CHECK(validation_table(v).find("1 at message level, 1 in the fast mode") != std::string::npos);
}

TEST_CASE("validate compares run records: the measured run's record beside the prediction's", "[unit]") {
  const Json doc = {{"format", "scaletwin-measurements/1"},
                    {"runs",
                     {{{"id", "a"}, {"cluster", "dgx-h200"}, {"nodes", 1}, {"gpus_per_node", 4}, {"model", "resnet50"},
                       {"batch_per_gpu", 32}, {"scheme", {{"name", "allreduce"}}}, {"images_per_sec", 400.0},
                       {"phases_per_iteration_s", {{"compute", 0.25}, {"data", 0.01}}}}}}};
  const auto runs = parse_measurements(doc, "m.json");
  const scaletwin::report::RunRecord measured = run_record(runs.at(0));
  CHECK(measured.id == "a");
  CHECK(measured.gpus == 4);
  CHECK(measured.iteration_s == Approx(128.0 / 400.0));  // global batch 4 x 32 over images/s
  CHECK(measured.phases_s.at("compute") == 0.25);
  scaletwin::report::RunRecord predicted;
  predicted.images_per_sec = 500.0;
  const Validation v = make_validation({measured}, {predicted});
  REQUIRE(v.rows.size() == 1);
  CHECK(v.rows[0].id == "a");
  CHECK(v.rows[0].error == Approx(0.25));
  CHECK(v.mape == Approx(25.0));
}

TEST_CASE("the validation parity chart takes log axes where the runs span decades", "[unit]") {
  // 20 to 5,000 images/s (as the 116 K80 runs of the reference): on a linear axis most would sit in its bottom tenth.
  const Json ps = {{"name", "ps"}, {"mode", "sync"}, {"placement", "host_cpu"}};
  const Json file = {{"format", "scaletwin-measurements/1"},
                     {"runs",
                      {run("a", "resnet50", 1, ps, 20), run("b", "resnet50", 2, ps, 40), run("c", "resnet50", 8, ps, 5000)}}};
  const auto runs = parse_measurements(file, "m.json");
  const Validation v = make_validation({"a", "b", "c"}, {20, 40, 5000}, {22, 38, 4800});
  const std::string parity = chart(validation_html(labelled(v, runs), ValidationReportContext{}), "parity");
  CHECK(count(parity, "(log scale)") == 2);  // both axes
  CHECK(parity.find(">10</text>") != std::string::npos);     // 10 to 10,000: powers of ten
  CHECK(parity.find(">10000</text>") != std::string::npos);
  // The identity line runs corner to corner of the log axes (10 to 10,000).
  CHECK(parity.find("data-series=\"predicted = measured\" fill=\"none\" stroke=\"#7f7f7f\" stroke-width=\"1.5\" "
                    "stroke-dasharray=\"6 4\" points=\"70.00,370.00 400.00,52.00\"") != std::string::npos);
}
