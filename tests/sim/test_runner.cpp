// The iteration runner on hand-made plans and clusters: exact hand computations, contention, asynchrony.
// One simulation per test case (SimGrid engine).
#include <catch2/catch.hpp>

#include "sim/runner.hpp"
#include "tests/sim/hand_plans.hpp"

using namespace scaletwin;

namespace {

sim::Calibration no_overheads() {
  sim::Calibration c = sim::ideal_calibration();
  return c;
}

}  // namespace

TEST_CASE("a data-parallel iteration equals the hand computation", "[sim]") {
  const int p = 4;
  const double bw = 10e9, lat = 1e-6;
  const auto cluster = test::star_node(p, bw, lat);
  const int64_t elements = 4'000'000;  // 16 MB, chunks of 4 MB
  const auto plan = test::ring_data_parallel(p, 2e11, 4e11, 1e9, elements);
  sim::RunOptions opt;
  opt.iterations = 2;
  opt.warmup = 1;
  const report::PointResult r = sim::run_iteration_plan(plan, cluster, no_overheads(), opt);
  // Compute at 1 TFLOP/s, efficiency 1: 0.2 + 0.4 + 0.001 s. The ring sends 2(p-1) chunks of 4 MB, each over
  // gpu->sw->gpu (two links of 1 us): 2 us + 4e6/10e9 s, and every reduce-scatter step reduces 4 MB at
  // 3 * 4 MB / 100 GB/s. Every rank sends to its right neighbour: no link is shared.
  const double chunk = 1e6 * 4;
  const double step = 2 * lat + chunk / bw;
  const double ring = (p - 1) * (step + 3 * chunk / 100e9) + (p - 1) * step;
  const double compute = 0.2 + 0.4 + 0.001;
  CHECK(r.iteration_s == Approx(compute + ring).epsilon(1e-9));
  CHECK(r.compute_s == Approx(compute).epsilon(1e-9));
  CHECK(r.exposed_comm_s == Approx(ring).epsilon(1e-6));
  CHECK(r.images_per_sec == Approx(32.0 * p / (compute + ring)).epsilon(1e-9));
  CHECK(r.phase_s.at("forward") == Approx(0.2).epsilon(1e-9));
  REQUIRE(r.collectives.size() == 1);
  CHECK(r.collectives[0].seconds == Approx(ring).epsilon(1e-9));
}

TEST_CASE("two flows into one GPU share its link and take twice as long", "[sim]") {
  // w0 and w1 both send 100 MB to w2 at once: w2's downlink carries both.
  const double bw = 10e9, lat = 1e-6;
  const auto cluster = test::star_node(3, bw, lat);
  plan::IterationPlan plan;
  plan.workers = 3;
  plan.batch_per_worker = 1;
  plan.global_batch = 3;
  plan::Schedule s = test::empty_schedule(3, 50'000'000);
  test::add_step(s, 0, plan::OpKind::kSend, 2, 0, 25'000'000, {});
  test::add_step(s, 1, plan::OpKind::kSend, 2, 25'000'000, 25'000'000, {});
  test::add_step(s, 2, plan::OpKind::kRecv, 0, 0, 25'000'000, {});
  test::add_step(s, 2, plan::OpKind::kRecv, 1, 25'000'000, 25'000'000, {});
  plan.schedules.push_back(s);
  plan::CollectiveInstance ci;
  ci.schedule = 0;
  ci.participants = {0, 1, 2};
  ci.label = "fan-in";
  plan.collectives.push_back(ci);
  for (int r = 0; r < 3; ++r) {
    plan.endpoints.push_back(test::worker(r));
    test::add_program(plan, {{test::comm_item(0, {})}});
  }
  sim::RunOptions opt;
  opt.iterations = 1;
  opt.warmup = 0;
  const report::PointResult r = sim::run_iteration_plan(plan, cluster, no_overheads(), opt);
  const double alone = 2 * lat + 100e6 / bw;
  const double shared = 2 * lat + 2 * 100e6 / bw;
  CHECK(r.iteration_s == Approx(shared).epsilon(1e-9));
  CHECK(r.iteration_s > 1.9 * alone);
}

TEST_CASE("asynchronous workers see stale parameters", "[sim]") {
  // 3 GPU workers, one parameter server on the host CPU; each worker computes, then pushes its gradient and pulls
  // the parameters on demand. The server applies pushes one at a time in arrival order.
  const auto cluster = test::star_node(3, 10e9, 1e-6);
  plan::IterationPlan plan;
  plan.sync = plan::SyncKind::kAsync;
  plan.workers = 3;
  plan.batch_per_worker = 32;
  plan.global_batch = 96;
  plan::Schedule s = test::empty_schedule(2, 1'000'000);
  test::add_step(s, 0, plan::OpKind::kSend, 1, 0, 1'000'000, {});
  const int recv = test::add_step(s, 1, plan::OpKind::kRecvReduce, 0, 0, 1'000'000, {});
  test::add_step(s, 1, plan::OpKind::kSend, 0, 0, 1'000'000, {recv});
  test::add_step(s, 0, plan::OpKind::kRecv, 1, 0, 1'000'000, {0});
  plan.schedules.push_back(s);
  plan::Endpoint server;
  server.kind = plan::EndpointKind::kServer;
  server.name = "ps0";
  server.device = -1;
  for (int w = 0; w < 3; ++w) {
    plan::CollectiveInstance ci;
    ci.schedule = 0;
    ci.participants = {w, 3};
    ci.purpose = plan::CollectivePurpose::kPsPushPull;
    ci.label = "push/pull";
    ci.on_demand = true;
    ci.has_serve_compute = true;
    ci.serve_compute = test::compute_op(plan::Phase::kServerUpdate, 1e9);
    plan.collectives.push_back(ci);
    plan.endpoints.push_back(test::worker(w));
    // Workers differ a little so that arrivals interleave.
    test::add_program(plan, {{test::compute_item(plan::Phase::kForward, 1e10 * (1.0 + 0.1 * w), {}),
                              test::comm_item(w, {0})}});
  }
  plan.endpoints.push_back(server);
  test::add_program(plan, {});
  sim::RunOptions opt;
  opt.iterations = 6;
  opt.warmup = 2;
  const report::PointResult r = sim::run_iteration_plan(plan, cluster, no_overheads(), opt);
  CHECK(r.sync == "async");
  CHECK(r.staleness_samples > 0);
  CHECK(r.staleness_mean > 0.5);
  CHECK(r.staleness_max >= 1.0);
  CHECK(r.images_per_sec > 0.0);
  // Free-running workers: the slowest one (w2) is critical.
  CHECK(r.critical_worker == 2);
}
