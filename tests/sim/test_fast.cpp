// The fast simulation mode (issue 5): max-min fair rates against a hand computation, lockstep rounds against the
// oracle's closed forms (symbolic rounds: tests/plan/test_rounds.cpp), twin classes, lazy plans against
// materialized ones, and agreement with the message-level runner within 1% for every scheme on small cases.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "core/error.hpp"
#include "plan/collectives.hpp"
#include "plan/oracle.hpp"
#include "plan/scenario.hpp"
#include "sim/fast/plan.hpp"
#include "sim/fast/runner.hpp"
#include "sim/point_pool.hpp"
#include "sim/predict.hpp"

using namespace scaletwin;

namespace {

// The mpi stack unless told otherwise: the network as the cluster file describes it, with no framework costs.
plan::Scenario scenario(const std::string& model, const std::string& cluster, int nodes, int gpus_per_node,
                        const Json& scheme, const std::string& framework = "mpi") {
  Json j = {{"name", "fast"},   {"model", model},   {"cluster", cluster}, {"nodes", nodes},
            {"gpus_per_node", gpus_per_node}, {"batch_per_gpu", 32}, {"scheme", scheme}, {"framework", framework}};
  return plan::parse_scenario(j, "test_fast");
}

// Σ over lockstep rounds of α + (largest flow) β + (largest reduced flow) γ: the oracle's time for schedules
// whose rounds move equal chunks.
double lockstep_time(const plan::CollectiveRounds& r, const plan::AlphaBetaGamma& c) {
  double t = 0.0;
  for (const plan::Round& round : r.rounds) {
    double largest = 0.0, reduced = 0.0;
    for (size_t f = 0; f < r.patterns[static_cast<size_t>(round.pattern)].size(); ++f) {
      largest = std::max(largest, static_cast<double>(r.bytes_of(round, f)));
      if (r.reduces(round, f)) reduced = std::max(reduced, static_cast<double>(r.bytes_of(round, f)));
    }
    t += c.alpha_s + largest * c.beta_s_per_byte + reduced * c.gamma_s_per_byte;
  }
  return t;
}

}  // namespace

TEST_CASE("max-min fair rates: the receiver NIC is shared by three flows and the sender NIC gives the rest", "[unit]") {
  const topology::Cluster cluster = topology::load_cluster("aws-p2.xlarge", 5);
  sim::fast::FlowNetwork net(cluster, sim::ideal_calibration());
  const double nic_Bps = cluster.spec().network.nic_link.bandwidth_Bps;
  auto gpu = [&](int node) { return cluster.device_vertex(node, 0); };
  // 0→1 and 0→2 leave node 0; 0→2, 3→2 and 4→2 enter node 2 (bottleneck: B/3 each); 0→1 gets B - B/3.
  const int into_two = net.add_pattern({{gpu(0), gpu(2)}, {gpu(3), gpu(2)}, {gpu(4), gpu(2)}});
  const int other = net.add_pattern({{gpu(0), gpu(1)}});
  CHECK(net.add_pattern({{gpu(0), gpu(1)}}) == other);  // same flows, same pattern
  const auto& rates = net.rates({other, into_two});
  for (double inv : rates.at(into_two).inverse_rate) CHECK(inv == Approx(3.0 / nic_Bps).epsilon(1e-12));
  CHECK(rates.at(other).inverse_rate.at(0) == Approx(1.5 / nic_Bps).epsilon(1e-12));
  CHECK(rates.at(into_two).max_inverse_rate == Approx(3.0 / nic_Bps).epsilon(1e-12));
  // Alone, a flow gets the whole NIC; the combination is memoized whatever the order asked.
  CHECK(net.rates({other}).at(other).max_inverse_rate == Approx(1.0 / nic_Bps).epsilon(1e-12));
  const size_t solved = net.combinations_computed();
  net.rates({into_two, other});
  CHECK(net.combinations_computed() == solved);
}

TEST_CASE("lockstep rounds reproduce the closed forms of the oracle", "[unit]") {
  const plan::AlphaBetaGamma c{5e-6, 1.0 / 12.5e9, 1.0 / 50e9, 0.0};
  for (int p : {2, 6, 8}) {
    const int64_t n = int64_t{p} * 1000;  // a multiple of p elements (4 bytes each)
    const double bytes = static_cast<double>(n * 4);
    CHECK(lockstep_time(plan::rounds_of(plan::ring_allreduce(p, n, 4)), c) ==
          Approx(plan::closed_form_ring_allreduce(p, bytes, c)).epsilon(1e-12));
    CHECK(lockstep_time(plan::rounds_of(plan::interval_pairing_allreduce(p, n, 4)), c) ==
          Approx(plan::closed_form_interval_pairing_allreduce(p, bytes, c)).epsilon(1e-12));
    CHECK(lockstep_time(plan::rounds_of(plan::halving_doubling_allreduce(p, n, 4)), c) ==
          Approx(plan::closed_form_halving_doubling_allreduce(p, bytes, c)).epsilon(1e-12));
  }
}

TEST_CASE("data-parallel workers are twins: one class simulates them all", "[unit]") {
  const plan::Scenario s = scenario("resnet18_cifar", "bsc-minotauro-k80", 4, 4, {{"name", "allreduce"}});
  const models::Model model = plan::load_scenario_model(s);
  const topology::Cluster cluster = plan::load_scenario_cluster(s, 16);
  const plan::IterationPlan plan = plan::lower(s, model, cluster, 16);
  sim::fast::FastPlan fp(plan, cluster, sim::default_calibration(), sim::RunOptions{});
  CHECK(fp.class_count() == 1);
  const plan::Scenario ps = scenario("resnet18_cifar", "bsc-minotauro-k80", 4, 4,
                                     {{"name", "ps"}, {"servers", 2}, {"local_aggregation", true}});
  const plan::IterationPlan ps_plan = plan::lower(ps, model, cluster, 16);
  sim::fast::FastPlan ps_fp(ps_plan, cluster, sim::default_calibration(), sim::RunOptions{});
  CHECK(ps_fp.class_count() > 2);                       // leaders, the others, servers
  CHECK(ps_fp.class_count() < ps_plan.endpoints.size());  // but not one per endpoint
}

TEST_CASE("a lazy plan with recipes and symbolic rings gives the prediction of the materialized plan", "[unit]") {
  const plan::Scenario s = scenario("resnet50", "dgx-h200", 4, 8, {{"name", "allreduce"}});
  const models::Model model = plan::load_scenario_model(s);
  const topology::Cluster cluster = plan::load_scenario_cluster(s, 32);
  plan::LowerOptions lazy;
  lazy.materialize_schedules = false;
  const plan::IterationPlan shells = plan::lower(s, model, cluster, 32, lazy);
  const plan::IterationPlan full = plan::lower(s, model, cluster, 32);
  CHECK_FALSE(shells.materialized());
  CHECK(full.materialized());
  CHECK(shells.hash() != full.hash());
  const sim::RunOptions opt;
  const report::PointResult a = sim::run_iteration_plan_fast(shells, cluster, sim::default_calibration(), opt);
  const report::PointResult b = sim::run_iteration_plan_fast(full, cluster, sim::default_calibration(), opt);
  CHECK(a.fidelity == "fast");
  CHECK(a.iteration_s == Approx(b.iteration_s).epsilon(1e-6));  // chunks rounded up to the largest: < 1 element
  CHECK(a.compute_s == b.compute_s);
}

namespace {

// Fast and message level on one point: iteration time within 1%, compute time equal (it does not depend on
// the network). The relative difference is compared, not the raw times, so a change of summation order (ASan at
// -O1, another compiler) cannot flip the outcome of an agreement measured at 1e-4.
void check_agreement(const plan::Scenario& s, int gpus, const sim::RunOptions& opt, const std::string& what,
                     const sim::Calibration& calibration = sim::default_calibration()) {
  const report::PointResult msg = sim::simulate_point_forked(s, gpus, calibration, opt, sim::Fidelity::kMessage);
  const report::PointResult fast = sim::simulate_point_forked(s, gpus, calibration, opt, sim::Fidelity::kFast);
  INFO(what << " on " << gpus << " GPUs: message " << msg.iteration_s << " s, fast " << fast.iteration_s << " s");
  CHECK(msg.fidelity == "message");
  CHECK(fast.fidelity == "fast");
  CHECK(std::abs(fast.iteration_s / msg.iteration_s - 1.0) < 0.01);
  CHECK(std::abs(fast.compute_s / msg.compute_s - 1.0) < 1e-9);
}

}  // namespace

TEST_CASE("fast and message-level modes agree within 1% on iteration time for every scheme", "[sim]") {
  const Json schemes[] = {
      {{"name", "allreduce"}, {"algorithm", "ring"}},
      {{"name", "allreduce"}, {"algorithm", "interval_pairing"}},
      {{"name", "allreduce"}, {"algorithm", "halving_doubling"}},
      {{"name", "allreduce"}, {"algorithm", "double_binary_tree"}},
      {{"name", "allreduce"}, {"algorithm", "direct"}},
      {{"name", "allreduce"}, {"algorithm", "hierarchical"}},
      {{"name", "ps"}, {"servers", 2}, {"placement", "colocated"}},
      {{"name", "ps"}, {"servers", 2}, {"placement", "colocated"}, {"local_aggregation", true}},
      {{"name", "ps"}, {"servers", 4}, {"placement", "device"}},
      {{"name", "hybrid"}, {"data_parallel", {{"name", "allreduce"}, {"algorithm", "ring"}}}},
  };
  sim::RunOptions opt;
  opt.iterations = 2;
  for (const Json& scheme : schemes) {
    for (int gpus : {6, 16}) {
      if (scheme.at("name") == "allreduce" && scheme.at("algorithm") == "hierarchical" && gpus % 4 != 0) continue;
      check_agreement(scenario("resnet18_cifar", "bsc-minotauro-k80", 4, 4, scheme), gpus, opt, scheme.dump());
    }
  }
}

TEST_CASE("fast and message-level modes agree within 1% under TensorFlow's network ceiling", "[sim]") {
  // The tensorflow stack's NIC ceiling (stacks/tensorflow.json, 1.25 GB/s) below FDR InfiniBand's wire: the
  // pushes and pulls of colocated servers share it on every node.
  sim::RunOptions opt;
  opt.iterations = 2;
  const Json scheme = {{"name", "ps"}, {"servers", 4}, {"placement", "colocated"}, {"local_aggregation", true}};
  check_agreement(scenario("resnet18_cifar", "bsc-minotauro-k80", 4, 4, scheme, "tensorflow"), 16, opt, scheme.dump());
}

TEST_CASE("fast and message-level modes agree within 1% where TensorFlow's dispatch outweighs the small ops", "[sim]") {
  // 600 us per op: most of resnet18_cifar's ops on a K80 are shorter than the dispatch added to them.
  sim::Calibration dispatched = sim::default_calibration();
  dispatched.stacks["tensorflow"].op_overhead_s = 6e-4;
  sim::RunOptions opt;
  opt.iterations = 2;
  const Json scheme = {{"name", "ps"}, {"servers", 4}, {"placement", "colocated"}, {"local_aggregation", true}};
  const plan::Scenario s = scenario("resnet18_cifar", "bsc-minotauro-k80", 4, 4, scheme, "tensorflow");
  check_agreement(s, 16, opt, scheme.dump(), dispatched);
  const report::PointResult base = sim::simulate_point_forked(s, 16, sim::default_calibration(), opt, sim::Fidelity::kFast);
  const report::PointResult with_dispatch = sim::simulate_point_forked(s, 16, dispatched, opt, sim::Fidelity::kFast);
  INFO("compute " << base.compute_s << " s at the default dispatch, " << with_dispatch.compute_s << " s at 600 us");
  CHECK(with_dispatch.compute_s > 1.5 * base.compute_s);
}

TEST_CASE("fast and message-level modes agree within 1% with concurrent buckets on a 10 Gbit/s star", "[sim]") {
  // Several buckets of interval pairing in flight over slow Ethernet (the HAN set-up), where lockstep rounds were
  // 2-5% optimistic: small buckets make many collectives overlap.
  sim::RunOptions opt;
  opt.iterations = 2;
  const Json scheme = {{"name", "allreduce"}, {"algorithm", "interval_pairing"}, {"bucket_bytes", "2MB"}};
  check_agreement(scenario("resnet18_cifar", "aws-p2.8xlarge", 6, 1, scheme), 6, opt, scheme.dump());
}

TEST_CASE("with real data workers that upload over different shares of PCIe are not twins and both modes agree",
          "[sim]") {
  // Three GPUs of a p2.8xlarge: GPUs 0 and 1 share their K80 board's slot, GPU 2 has its board's slot alone, so its
  // batch uploads twice as fast (sim/compute_model.hpp, note_upload_links).
  Json j = {{"name", "real"}, {"model", "alexnet"}, {"cluster", "aws-p2.8xlarge"}, {"nodes", 1}, {"gpus_per_node", 8},
            {"batch_per_gpu", 128}, {"scheme", {{"name", "allreduce"}}}, {"framework", "mpi"},
            {"training", {{"data", "real"}}}};
  const plan::Scenario s = plan::parse_scenario(j, "test_fast");
  const models::Model model = plan::load_scenario_model(s);
  const topology::Cluster cluster = plan::load_scenario_cluster(s, 3);
  const plan::IterationPlan plan = plan::lower(s, model, cluster, 3);
  sim::RunOptions real;
  real.real_data = true;
  CHECK(sim::fast::FastPlan(plan, cluster, sim::default_calibration(), real).class_count() == 2);
  CHECK(sim::fast::FastPlan(plan, cluster, sim::default_calibration(), sim::RunOptions{}).class_count() == 1);
  sim::RunOptions opt;
  opt.iterations = 2;
  check_agreement(s, 3, opt, "alexnet, real data, 3 GPUs on two boards");
}

TEST_CASE("asynchronous schemes run at the message level whatever the fidelity asked and say so", "[sim]") {
  const plan::Scenario s = scenario("resnet18_cifar", "bsc-minotauro-k80", 2, 4, {{"name", "ps"}, {"mode", "async"}});
  sim::RunOptions opt;
  opt.iterations = 2;
  const report::PointResult p = sim::simulate_point_forked(s, 8, sim::default_calibration(), opt, sim::Fidelity::kFast);
  CHECK(p.fidelity == "message");
  CHECK(p.staleness_samples > 0);
  CHECK_THROWS_AS(sim::fidelity_from_name("exact"), InputError);
  CHECK(sim::fidelity_from_name("auto") == sim::Fidelity::kAuto);
}

TEST_CASE("the fidelity asked for is the one that runs also above the auto threshold", "[sim]") {
  // 72 GPUs (9 nodes of 8): above kAutoFastAboveGpus, where kAuto picks the fast mode.
  const plan::Scenario s = scenario("lenet5", "aws-p2.8xlarge", 9, 8, {{"name", "allreduce"}, {"algorithm", "ring"}});
  sim::RunOptions opt;
  opt.iterations = 1;
  opt.warmup = 0;
  const auto calibration = sim::default_calibration();
  CHECK(sim::simulate_point_forked(s, 72, calibration, opt, sim::Fidelity::kMessage).fidelity == "message");
  CHECK(sim::simulate_point_forked(s, 72, calibration, opt, sim::Fidelity::kAuto).fidelity == "fast");
  CHECK(sim::simulate_point_forked(s, 72, calibration, opt).fidelity == "message");
  // The pool keeps each job's fidelity (calibrate and validate use predict's rule, the default).
  const auto points = sim::simulate_points_forked(
      {sim::PointJob{s, 72, calibration, sim::Fidelity::kMessage}, sim::PointJob{s, 72, calibration}}, 2, opt);
  CHECK(points.at(0).fidelity == "message");
  CHECK(points.at(1).fidelity == "fast");
}
