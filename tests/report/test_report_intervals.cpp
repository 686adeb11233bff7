// predict's 90% intervals: the calibration's ×/÷ factor, widened over both ends of a cluster's assumed NIC rate
// where a point has them; times take the rate's interval inverted. JSON and table.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <cmath>
#include <string>

#include "report/report.hpp"

using scaletwin::Json;
using namespace scaletwin::report;

namespace {

PointResult point(int gpus, int nodes, double images_per_sec, double speedup) {
  PointResult p;
  p.gpus = gpus;
  p.nodes = nodes;
  p.images_per_sec = images_per_sec;
  p.iteration_s = 64.0 * gpus / images_per_sec;
  p.speedup = speedup;
  p.efficiency = speedup / gpus;
  p.sync = "sync";
  return p;
}

}  // namespace

TEST_CASE("predict's interval covers both ends of an assumed NIC rate on several nodes", "[unit]") {
  Report r;
  r.scenario = "s";
  r.cluster = "aws-p2.xlarge";
  r.interval_log_sd = 0.1;
  r.assumed_rate = AssumedRate{"aws-p2.xlarge", 1.25e8, 1.25e8, 1.25e9};
  r.predictions = {point(1, 1, 50.0, 1.0), point(8, 8, 200.0, 4.0)};
  r.predictions[1].range_low_images_per_sec = 200.0;  // the stated rate is the low end
  r.predictions[1].range_high_images_per_sec = 300.0;
  const double f = std::exp(kZ90 * 0.1);
  const Json j = report_to_json(r);
  const Json& one = j.at("predictions").at(0);
  CHECK(one.at("images_per_sec_interval").at(0) == Approx(50.0 / f));  // the calibration's factor alone
  CHECK(one.at("images_per_sec_interval").at(1) == Approx(50.0 * f));
  CHECK_FALSE(one.contains("assumed_range_images_per_sec"));
  const Json& eight = j.at("predictions").at(1);
  CHECK(eight.at("assumed_range_images_per_sec") == Json::array({200.0, 300.0}));
  CHECK(eight.at("images_per_sec_interval").at(0) == Approx(200.0 / f));
  CHECK(eight.at("images_per_sec_interval").at(1) == Approx(300.0 * f));
  CHECK(eight.at("speedup_interval").at(1) == Approx(4.0 * 1.5 * f));
  CHECK(eight.at("iteration_s_interval").at(0) == Approx(512.0 / (300.0 * f)));  // faster rate, shorter step
  CHECK(eight.at("iteration_s_interval").at(1) == Approx(512.0 * f / 200.0));
  CHECK(j.at("assumed_nic_rate").at("range_Bps") == Json::array({1.25e8, 1.25e9}));
  CHECK(point_from_json(point_to_json(r.predictions[1], false)).range_high_images_per_sec == 300.0);
  const std::string table = report_table(r);
  CHECK_THAT(table, Catch::Contains("aws-p2.xlarge's NIC rate is an assumption (125.00 MB/s per direction)"));
  CHECK_THAT(table, Catch::Contains(fmt::format("{:.1f}-{:.1f}", 200.0 / f, 300.0 * f)));
  // Without a calibrated error the range alone gives the interval, and only where there is one.
  r.interval_log_sd = 0.0;
  const Json bare = report_to_json(r);
  CHECK_FALSE(bare.at("predictions").at(0).contains("images_per_sec_interval"));
  CHECK(bare.at("predictions").at(1).at("images_per_sec_interval") == Json::array({200.0, 300.0}));
}

TEST_CASE("predict's interval covers the prediction without a dispatch beyond its support", "[unit]") {
  Report r;
  r.scenario = "s";
  r.interval_log_sd = 0.1;
  r.dispatch_beyond = DispatchBeyondSupport{"tensorflow", 8, 0.47, 0.21};
  r.alternative_notes["without_dispatch"] = dispatch_beyond_note(*r.dispatch_beyond);
  r.predictions = {point(1, 1, 23.0, 1.0)};
  r.predictions[0].alternatives["without_dispatch"] = 40.0;
  const double f = std::exp(kZ90 * 0.1);
  const Json j = report_to_json(r);
  const Json& one = j.at("predictions").at(0);
  CHECK(one.at("without_dispatch_images_per_sec") == 40.0);
  CHECK(one.at("images_per_sec_interval").at(0) == Approx(23.0 / f));
  CHECK(one.at("images_per_sec_interval").at(1) == Approx(40.0 * f));
  CHECK(j.at("dispatch_beyond_support").at("share") == 0.47);
  CHECK(point_from_json(point_to_json(r.predictions[0], false)).alternatives.at("without_dispatch") == 40.0);
  CHECK(j.at("alternatives").at("without_dispatch") == dispatch_beyond_note(*r.dispatch_beyond));
  CHECK_THAT(report_table(r), Catch::Contains("tensorflow's dispatch adds 47% of the step's compute at batch 8, "
                                              "more than the 21% of any run its calibration was fitted on"));
  // The envelope of every alternative: an assumed NIC range and the prediction without the dispatch together.
  const auto [lo, hi] = interval_ratios(0.0, 100.0, {80.0, 150.0, 120.0});
  CHECK(lo == Approx(0.8));
  CHECK(hi == Approx(1.5));
  const auto [none_lo, none_hi] = interval_ratios(0.1, 100.0, {});
  CHECK(none_lo == Approx(1.0 / f));
  CHECK(none_hi == Approx(f));
  r.interval_log_sd = 0.0;  // without a calibrated error, the alternative alone gives the interval
  CHECK(report_to_json(r).at("predictions").at(0).at("images_per_sec_interval") == Json::array({23.0, 40.0}));
}
