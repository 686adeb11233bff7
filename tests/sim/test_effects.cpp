// The qualitative effects of issue 4, simulated through the whole chain (scenario -> lower -> SimGrid) with the
// default calibration. Every point runs in a forked child (one SimGrid engine per process).
#include <catch2/catch.hpp>

#include <string>

#include "plan/scenario.hpp"
#include "sim/predict.hpp"

using namespace scaletwin;

namespace {

plan::Scenario scenario(const std::string& model, const std::string& cluster, int nodes, int gpus_per_node,
                        const Json& scheme) {
  Json j = {{"name", "effects"},      {"model", model},         {"cluster", cluster},
            {"nodes", nodes},         {"gpus_per_node", gpus_per_node}, {"batch_per_gpu", 32},
            {"scheme", scheme}, {"framework", "mpi"}};  // the wire's effects: no framework costs on top
  return plan::parse_scenario(j, "test_effects");
}

double images_per_sec(const plan::Scenario& s, int gpus) {
  sim::RunOptions opt;
  opt.iterations = 2;
  opt.warmup = 1;
  return sim::simulate_point_forked(s, gpus, sim::default_calibration(), opt).images_per_sec;
}

Json ps(int servers) {
  return {{"name", "ps"}, {"mode", "sync"}, {"servers", servers}, {"placement", "colocated"},
          {"local_aggregation", true}};
}

}  // namespace

TEST_CASE("sync PS: images/s rise with nodes until the server's link saturates, and more shards relieve it", "[sim]") {
  // VGG16 (553 MB of gradients) on 8-GPU p2.8xlarge nodes over 10 Gbit/s: one shard receives every node's push.
  auto one = [](int nodes) { return images_per_sec(scenario("vgg16", "aws-p2.8xlarge", nodes, 8, ps(1)), 8 * nodes); };
  const double n1 = one(1), n2 = one(2), n4 = one(4), n8 = one(8);
  CHECK(n2 > 1.5 * n1);   // still scaling
  CHECK(n8 < 1.3 * n4);   // saturated: doubling the nodes adds little
  CHECK(n8 < 0.5 * 8 * n1);
  const double sharded = images_per_sec(scenario("vgg16", "aws-p2.8xlarge", 8, 8, ps(8)), 64);
  CHECK(sharded > 2.0 * n8);
  CHECK(sharded > 0.8 * 8 * n1);
}

TEST_CASE("interval_pairing beats ring where latency dominates", "[sim]") {
  // LeNet-5 (0.25 MB of gradients) on 8 single-GPU nodes: 2 log2(8) = 6 network steps against 2 (8-1) = 14.
  const Json ring = {{"name", "allreduce"}, {"algorithm", "ring"}};
  const Json ip = {{"name", "allreduce"}, {"algorithm", "interval_pairing"}};
  const double t_ring = images_per_sec(scenario("lenet5", "aws-p2.xlarge", 8, 1, ring), 8);
  const double t_ip = images_per_sec(scenario("lenet5", "aws-p2.xlarge", 8, 1, ip), 8);
  CHECK(t_ip > t_ring);
}

TEST_CASE("the hybrid beats data parallelism for a 4096-wide FC head and loses for a 10-wide one", "[sim]") {
  const Json ring = {{"name", "allreduce"}, {"algorithm", "ring"}};
  const Json hybrid = {{"name", "hybrid"}, {"data_parallel", ring}, {"model_parallel", "fc"}};
  // vgg16_cifar: 512 -> 4096 -> 4096 -> 10; 8 GPUs, batch 32 each (global 256): the FC weights dwarf activations.
  const double vgg_dp = images_per_sec(scenario("vgg16_cifar", "aws-p2.xlarge", 8, 1, ring), 8);
  const double vgg_hybrid = images_per_sec(scenario("vgg16_cifar", "aws-p2.xlarge", 8, 1, hybrid), 8);
  CHECK(vgg_hybrid > 1.2 * vgg_dp);
  // resnet18_cifar: one 512 -> 10 FC layer: splitting it only adds activation traffic.
  const double res_dp = images_per_sec(scenario("resnet18_cifar", "aws-p2.xlarge", 8, 1, ring), 8);
  const double res_hybrid = images_per_sec(scenario("resnet18_cifar", "aws-p2.xlarge", 8, 1, hybrid), 8);
  CHECK(res_hybrid < res_dp);
}

TEST_CASE("async PS reports staleness and mixed_async is synchronous inside a node", "[sim]") {
  const Json async = {{"name", "ps"}, {"mode", "async"}, {"servers", 2}, {"placement", "colocated"}};
  sim::RunOptions opt;
  opt.iterations = 4;
  opt.warmup = 1;
  const report::PointResult a =
      sim::simulate_point_forked(scenario("resnet50", "bsc-minotauro-k80", 4, 4, async), 16, sim::default_calibration(), opt);
  CHECK(a.sync == "async");
  CHECK(a.staleness_samples > 0);
  // 16 identical free-running workers take turns: every update finds the other 15 applied since its pull.
  CHECK(a.staleness_mean == Approx(15.0).margin(0.5));
  const Json mixed = {{"name", "ps"}, {"mode", "mixed_async"}, {"servers", 4}, {"placement", "colocated"},
                      {"local_aggregation", true}};
  const report::PointResult one_node =
      sim::simulate_point_forked(scenario("resnet50", "bsc-minotauro-k80", 1, 4, mixed), 4, sim::default_calibration(), opt);
  CHECK(one_node.staleness_mean == 0.0);  // a single node has no one to be stale against
}
