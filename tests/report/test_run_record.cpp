// The one record of a run's figures (report/run_record.hpp): a prediction becomes one, a run writes one, and what a
// file holds reads back as the same figures.
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "../input_error_message.hpp"
#include "core/error.hpp"
#include "report/compare.hpp"
#include "report/html.hpp"
#include "report/run_record.hpp"

using namespace scaletwin;

namespace {

report::PointResult sample_point() {
  report::PointResult p;
  p.gpus = 8;
  p.nodes = 2;
  p.iteration_s = 0.5;
  p.images_per_sec = 1024.0;
  p.compute_s = 0.3;
  p.exposed_comm_s = 0.2;
  p.phase_s = {{"data", 0.05}, {"forward", 0.1}, {"backward_input", 0.08}, {"backward_weight", 0.07}};
  p.fidelity = "fast";
  p.plan_hash = "00112233aabbccdd";
  p.collectives = {{"bucket 0", "gradients", 4e6, 0.01}, {"bucket 1", "gradients", 4e6, 0.02},
                   {"bucket 0", "gradients", 4e6, 0.005}};
  p.time_to_target_s = 3600.0;
  p.images_to_target = 3.6e6;
  return p;
}

}  // namespace

TEST_CASE("a predicted point becomes a record with the report's phase split and its collectives by label") {
  const report::PointResult p = sample_point();
  const report::RunRecord r = report::predicted_record(p);
  const report::TimeBreakdown b = report::time_breakdown(p);
  CHECK(r.gpus == 8);
  CHECK(r.iteration_s == 0.5);
  CHECK(r.images_per_sec == 1024.0);
  CHECK(r.plan_hash == "00112233aabbccdd");
  CHECK(r.phases_s.at("compute") == b.compute_s);
  CHECK(r.phases_s.at("data") == b.data_s);
  CHECK(r.phases_s.at("exposed_comm") == b.exposed_comm_s);
  CHECK(r.phases_s.at("idle") == b.idle_s);
  // The phases add up to the iteration (time_breakdown's contract), here with data apart from compute.
  CHECK(r.phases_s.at("compute") + r.phases_s.at("data") + r.phases_s.at("exposed_comm") + r.phases_s.at("idle") ==
        Approx(0.5));
  CHECK(r.phases_s.at("data") == Approx(0.05));
  REQUIRE(r.collectives_s.size() == 2);
  CHECK(r.collectives_s.at("bucket 0") == Approx(0.015));  // a label shared by two collectives adds up
  CHECK(r.time_to_target_s == 3600.0);
}

TEST_CASE("predict's JSON point reads back as the record of the point it was written from") {
  const report::PointResult p = sample_point();
  const Json j = report::point_to_json(p, false);
  const report::RunRecord direct = report::predicted_record(p);
  const report::RunRecord read = report::predicted_record(JsonObject(j, "prediction.json", "/predictions/0"));
  CHECK(read.gpus == direct.gpus);
  CHECK(read.iteration_s == direct.iteration_s);
  CHECK(read.images_per_sec == direct.images_per_sec);
  CHECK(read.phases_s == direct.phases_s);
  CHECK(read.collectives_s == direct.collectives_s);
  CHECK(read.plan_hash == direct.plan_hash);
  CHECK(read.time_to_target_s == direct.time_to_target_s);
}

TEST_CASE("a record written as a run's figures reads back through measured_record unchanged") {
  report::RunRecord w;
  w.id = "lenet5-4gpu";
  w.source = "scaletwin run on host (4 MPI ranks, cpu)";
  w.plan_hash = "0123456789abcdef";
  w.gpus = 4;
  w.images_per_sec = 2000.0;
  w.iteration_s = 256.0 / 2000.0;
  w.phases_s = {{"compute", 0.1}, {"exposed_comm", 0.02}, {"data", 0.003}};
  w.collectives_s = {{"bucket 0 allreduce", 0.004}};
  w.time_to_target_s = 12.5;
  w.images_to_target = 25600.0;
  const Json j = report::record_json(w);
  CHECK(j.at("phases_per_iteration_s").size() == 3);
  const report::RunRecord r =
      report::measured_record(JsonObject(j, "runs.json", "/runs/0"), w.id, w.gpus, 256.0, j.at("images_per_sec"));
  CHECK(r.id == w.id);
  CHECK(r.source == w.source);
  CHECK(r.plan_hash == w.plan_hash);
  CHECK(r.gpus == 4);
  CHECK(r.iteration_s == Approx(w.iteration_s));
  CHECK(r.phases_s == w.phases_s);
  CHECK(r.collectives_s == w.collectives_s);
  CHECK(r.time_to_target_s == 12.5);
  CHECK(r.images_to_target == 25600.0);
}

TEST_CASE("a predicted point without a positive rate is refused with its file and path") {
  Json j = report::point_to_json(sample_point(), false);
  j["images_per_sec"] = 0.0;
  const std::string message = testing::input_error_message(
      [&] { report::predicted_record(JsonObject(j, "prediction.json", "/predictions/3")); });
  CHECK_THAT(message, Catch::Contains("prediction.json"));
  CHECK_THAT(message, Catch::Contains("/predictions/3/images_per_sec"));
  CHECK_THAT(message, Catch::Contains("> 0"));
}

TEST_CASE("compare_records joins predicted and measured records per GPU count, on the figures both have") {
  report::RunRecord p4, p8, m4, m16;
  p4.gpus = 4;
  p4.iteration_s = 0.2;
  p4.images_per_sec = 1000.0;
  p4.phases_s = {{"compute", 0.15}, {"exposed_comm", 0.05}, {"data", 0.0}, {"idle", 0.0}};
  p4.collectives_s = {{"bucket 0", 0.03}, {"bucket 1", 0.02}};
  p8 = p4;
  p8.gpus = 8;
  m4.id = "run-4gpu";
  m4.gpus = 4;
  m4.iteration_s = 0.25;
  m4.images_per_sec = 800.0;
  m4.phases_s = {{"compute", 0.2}};  // only what the run measured is compared
  m4.collectives_s = {{"bucket 1", 0.04}, {"bucket 9", 0.01}};
  m16.id = "run-16gpu";
  m16.gpus = 16;
  const report::Comparison c = report::compare_records({p4, p8}, {m4, m16});
  std::map<std::string, report::ComparedFigure> rows;
  for (const auto& r : c.rows) rows[r.figure] = r;
  REQUIRE(rows.size() == 4);  // iteration, images/s, compute, the one bucket both have
  CHECK(rows.at("iteration_s").error.value() == Approx(-0.2));
  CHECK(rows.at("images_per_sec").error.value() == Approx(0.25));
  CHECK(rows.at("compute_s").error.value() == Approx(-0.25));
  CHECK(rows.at("bucket:bucket 1").error.value() == Approx(-0.5));
  for (const auto& r : c.rows) CHECK(r.run == "run-4gpu");
  CHECK(c.predicted_only_gpus == std::vector<int>{8});
  CHECK(c.measured_only_runs == std::vector<std::string>{"run-16gpu"});
  CHECK(report::error_label(-0.2) == "-20.0%");
}

TEST_CASE("collective labels are kept in the order a reader counts them", "[unit]") {
  const report::LabelOrder less;
  CHECK(less("bucket 2", "bucket 10"));
  CHECK_FALSE(less("bucket 10", "bucket 2"));
  CHECK(less("bucket 2 pull", "bucket 10 push"));
  CHECK(less("bucket 1 pull", "bucket 1 push"));  // same number: the text decides
  CHECK(less("bucket 9", "node 0 bucket 0"));
  CHECK(less("bucket 1", "bucket 1 push"));       // a prefix first
  CHECK(less("bucket 1", "bucket 01"));            // equal values, distinct labels: both kept
  CHECK_FALSE(less("bucket 3", "bucket 3"));
  report::RunRecord r;
  r.collectives_s = {{"bucket 10", 3.0}, {"bucket 2", 2.0}, {"bucket 1", 1.0}};
  const Json list = report::record_json(r).at("collectives");
  REQUIRE(list.size() == 3);
  CHECK(list[0].at("label") == "bucket 1");
  CHECK(list[1].at("label") == "bucket 2");
  CHECK(list[2].at("label") == "bucket 10");
}
