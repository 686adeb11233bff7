// Software stacks (stacks/*.json, sim/stacks.hpp), their costs in a calibration (for_run, the network ceiling),
// shape-aware efficiency (winograd_gain, parallel_half_elements, reduction_half_length) and the shipped calibrations.
#include <catch2/catch.hpp>

#include <cmath>

#include "core/error.hpp"
#include "plan/iteration_plan.hpp"
#include "report/html.hpp"
#include "sim/compute_model.hpp"
#include "sim/predict.hpp"
#include "sim/stacks.hpp"

using namespace scaletwin;

namespace {

plan::Scenario scenario_on(const std::string& cluster, const Json& scheme, const std::string& framework = "") {
  Json j = {{"model", "resnet50"}, {"cluster", cluster}, {"nodes", 2}, {"batch_per_gpu", 32}, {"scheme", scheme}};
  if (!framework.empty()) j["framework"] = framework;
  return plan::parse_scenario(j, "test.json");
}

// A 3x3 stride-1 convolution of 1 GFLOP moving 1 MB (compute-bound at any efficiency below).
plan::ComputeOp conv3x3_op() {
  plan::ComputeOp op;
  op.layer_class = models::LayerClass::kConv;
  op.flops = 1e9;
  op.bytes = 1e6;
  op.kernel_hw = 9;
  op.stride = 1;
  return op;
}

// A stack file that parses: every cost without a value of its own, no link factors.
Json minimal_stack() {
  Json stack = {{"format", "scaletwin-stack/1"}, {"name", "x"}, {"parameters", Json::object()},
                {"link_factors", {{"value", false}, {"source", "s"}}},
                {"ps_local_aggregation", {{"value", false}, {"source", "s"}}}};
  for (const std::string& key : sim::stack_parameter_keys())
    stack["parameters"][key] = {{"value", nullptr}, {"fit", false}, {"lower", 1e-6}, {"upper", 1.0}, {"source", "s"}};
  return stack;
}

}  // namespace

TEST_CASE("every built-in stack names each of its costs with bounds and a source", "[unit]") {
  std::vector<std::string> names;
  for (const sim::StackDescription& d : sim::builtin_stacks()) {
    names.push_back(d.name);
    REQUIRE(d.parameters.size() == sim::stack_parameter_keys().size());
    for (const sim::StackParameter& p : d.parameters) {
      INFO(d.name << "/" << p.key);
      CHECK_FALSE(p.source.empty());
      CHECK(p.lower < p.upper);
      if (p.value) CHECK((*p.value >= p.lower && *p.value <= p.upper));
      if (p.fit) CHECK(p.value.has_value());
    }
  }
  CHECK(names == std::vector<std::string>{"mpi", "mxnet", "nccl", "paddle", "pytorch", "tensorflow"});
  CHECK_THROWS_AS(sim::find_stack("caffe", "s.json", "/framework"), InputError);
  // Only the stacks without a cost model of their own beyond per-message costs fit link factors from their runs.
  CHECK(sim::find_stack("mpi").link_factors);
  CHECK(sim::find_stack("nccl").link_factors);
  CHECK_FALSE(sim::find_stack("tensorflow").link_factors);
  CHECK_FALSE(sim::find_stack("mxnet").link_factors);
}

TEST_CASE("a stack file without a source or with a fitted parameter lacking a start is refused", "[unit]") {
  Json stack = minimal_stack();
  CHECK_NOTHROW(sim::parse_stack_description(stack, "x.json"));
  Json no_link_source = stack;  // whether its runs fit link factors is a claim about the stack: it needs a reason
  no_link_source["link_factors"].erase("source");
  CHECK_THROWS_WITH(sim::parse_stack_description(no_link_source, "x.json"), Catch::Contains("/link_factors/source"));
  Json no_aggregation = stack;  // so is whether the framework sums a node's gradients before they leave it
  no_aggregation.erase("ps_local_aggregation");
  CHECK_THROWS_WITH(sim::parse_stack_description(no_aggregation, "x.json"), Catch::Contains("/ps_local_aggregation"));
  CHECK_FALSE(sim::parse_stack_description(stack, "x.json").ps_servers_per_node);  // optional: false when absent
  Json per_node = stack;
  per_node["ps_servers_per_node"] = {{"value", true}};  // present, it needs its reason too
  CHECK_THROWS_WITH(sim::parse_stack_description(per_node, "x.json"), Catch::Contains("/ps_servers_per_node/source"));
  per_node["ps_servers_per_node"]["source"] = "s";
  CHECK(sim::parse_stack_description(per_node, "x.json").ps_servers_per_node);
  CHECK(sim::parse_stack_description(stack, "x.json").ps_tensors == plan::TensorPlacement::kSliced);  // when absent
  Json tensors = stack;
  tensors["ps_tensors"] = {{"value", "whole"}};  // how a framework places its tensors is a claim: its reason
  CHECK_THROWS_WITH(sim::parse_stack_description(tensors, "x.json"), Catch::Contains("/ps_tensors/source"));
  tensors["ps_tensors"]["source"] = "s";
  CHECK(sim::parse_stack_description(tensors, "x.json").ps_tensors == plan::TensorPlacement::kWhole);
  CHECK_FALSE(sim::parse_stack_description(tensors, "x.json").ps_tensors_on_devices);  // optional
  tensors["ps_tensors"]["device"] = "largest_first";  // on the GPUs, where the framework places them otherwise
  CHECK(sim::parse_stack_description(tensors, "x.json").ps_tensors_on_devices == plan::TensorPlacement::kLargestFirst);
  tensors["ps_tensors"]["device"] = "balanced";
  CHECK_THROWS_WITH(sim::parse_stack_description(tensors, "x.json"), Catch::Contains("/ps_tensors/device"));
  tensors["ps_tensors"]["device"] = "whole";
  tensors["ps_tensors"]["value"] = "hashed";
  CHECK_THROWS_WITH(sim::parse_stack_description(tensors, "x.json"), Catch::Contains("/ps_tensors/value"));
  CHECK(sim::find_stack("tensorflow").ps_tensors == plan::TensorPlacement::kWhole);
  CHECK(sim::find_stack("mxnet").ps_tensors == plan::TensorPlacement::kKvstore);
  CHECK(sim::find_stack("mpi").ps_tensors == plan::TensorPlacement::kSliced);
  CHECK(sim::find_stack("mxnet").ps_tensors_on_devices == plan::TensorPlacement::kLargestFirst);
  CHECK_FALSE(sim::find_stack("tensorflow").ps_tensors_on_devices);
  CHECK_FALSE(sim::parse_stack_description(stack, "x.json").ps_device_servers_per_gpu);  // optional: false
  Json per_gpu = stack;
  per_gpu["ps_device_servers_per_gpu"] = {{"value", true}};
  CHECK_THROWS_WITH(sim::parse_stack_description(per_gpu, "x.json"),
                    Catch::Contains("/ps_device_servers_per_gpu/source"));
  per_gpu["ps_device_servers_per_gpu"]["source"] = "s";
  CHECK(sim::parse_stack_description(per_gpu, "x.json").ps_device_servers_per_gpu);
  Json no_source = stack;
  no_source["parameters"]["network_Bps"].erase("source");
  CHECK_THROWS_WITH(sim::parse_stack_description(no_source, "x.json"), Catch::Contains("/parameters/network_Bps"));
  Json fitted_null = stack;
  fitted_null["parameters"]["op_overhead_s"]["fit"] = true;
  CHECK_THROWS_WITH(sim::parse_stack_description(fitted_null, "x.json"), Catch::Contains("start value"));
  Json zero = stack;  // a fixed cost may be 0 (none); a fitted one is searched on a log scale, above 0
  zero["parameters"]["input_cost_per_image_s"] = {{"value", 0}, {"fit", false}, {"lower", 0}, {"upper", 1e-2},
                                                  {"source", "s"}};
  CHECK(sim::parse_stack_description(zero, "x.json").parameter("input_cost_per_image_s").value == 0.0);
  zero["parameters"]["input_cost_per_image_s"]["fit"] = true;
  CHECK_THROWS_WITH(sim::parse_stack_description(zero, "x.json"),
                    Catch::Contains("/parameters/input_cost_per_image_s/lower"));
}

TEST_CASE("a stack names the network its runs mean by a built-in model name", "[unit]") {
  CHECK(sim::find_stack("mxnet").network("alexnet") == "alexnet_mxnet");
  CHECK(sim::find_stack("mxnet").network("resnet50") == "resnet50");
  CHECK(sim::find_stack("tensorflow").network("alexnet") == "alexnet");
  CHECK(sim::find_stack("tensorflow").network("resnet50") == "resnet50_v1");
  CHECK(sim::find_stack("tensorflow").network("resnet152") == "resnet152_v1");
  CHECK(sim::find_stack("tensorflow").network("resnet101") == "resnet101_v1");
  CHECK(sim::find_stack("mxnet").network("resnet101") == "resnet101");
  CHECK(sim::find_stack("nccl").network("resnet50") == "resnet50");
  Json stack = minimal_stack();
  stack["models"] = {{"alexnet", {{"model", "alexnet_v9"}, {"source", "s"}}}};
  CHECK_THROWS_WITH(sim::parse_stack_description(stack, "x.json"), Catch::Contains("/models/alexnet/model"));
  stack["models"] = {{"alexnet", {{"model", "alexnet_mxnet"}}}};
  CHECK_THROWS_WITH(sim::parse_stack_description(stack, "x.json"), Catch::Contains("/models/alexnet/source"));
  stack["models"] = {{"alexnet", {{"model", "alexnet_mxnet"}, {"source", "s"}}}};
  CHECK(sim::parse_stack_description(stack, "x.json").network("alexnet") == "alexnet_mxnet");
}

TEST_CASE("a run's stack: its framework, else the scheme's and cluster's default", "[unit]") {
  const Json ps = {{"name", "ps"}, {"placement", "colocated"}, {"servers", 2}};
  const Json ring = {{"name", "allreduce"}, {"algorithm", "ring"}};
  const auto stack = [](const plan::Scenario& s) { return sim::run_stack(s, plan::load_scenario_cluster(s, 1)); };
  CHECK(stack(scenario_on("aws-p2.8xlarge", ps)) == "tensorflow");
  CHECK(stack(scenario_on("aws-p2.8xlarge", ring)) == "nccl");
  CHECK(stack(scenario_on("aws-p2.8xlarge", ps, "mxnet")) == "mxnet");
  Json local = {{"model", "lenet5"}, {"cluster", "local-cpu"}, {"scheme", ps}};
  CHECK(stack(plan::parse_scenario(local, "l.json")) == "mpi");
  CHECK_THROWS_WITH(scenario_on("aws-p2.8xlarge", ps, "caffe"), Catch::Contains("/framework"));
}

TEST_CASE("a parameter server over the network sums a node's gradients where the named stack does", "[unit]") {
  const Json colocated = {{"name", "ps"}, {"placement", "colocated"}, {"servers", 2}};
  CHECK(sim::find_stack("mxnet").ps_local_aggregation);  // its dist kvstore: one push per key and node
  for (const char* name : {"tensorflow", "mpi", "nccl"}) CHECK_FALSE(sim::find_stack(name).ps_local_aggregation);
  plan::Scenario mx = scenario_on("aws-p2.16xlarge", colocated, "mxnet");
  CHECK(sim::apply_stack_defaults(mx));
  CHECK(mx.scheme.ps.local_aggregation);
  CHECK(mx.scheme.ps.local_aggregation_by == "mxnet");
  CHECK(mx.scheme.describe() ==
        "ps(sync, 2 servers, colocated, local aggregation (mxnet's default), kvstore tensors (mxnet's default))");
  CHECK(mx.scheme.to_json().at("local_aggregation") == true);
  CHECK_FALSE(sim::apply_stack_defaults(mx));  // applied once
  // MXNet's launcher starts a server per worker node where the scheme does not say how many.
  CHECK(sim::find_stack("mxnet").ps_servers_per_node);
  for (const char* name : {"tensorflow", "mpi", "nccl"}) CHECK_FALSE(sim::find_stack(name).ps_servers_per_node);
  CHECK(mx.scheme.ps.servers_per == plan::PsScheme::Per::kFixed);  // it said 2
  Json unstated = colocated;
  unstated.erase("servers");
  plan::Scenario mx_launcher = scenario_on("aws-p2.16xlarge", unstated, "mxnet");
  CHECK(sim::apply_stack_defaults(mx_launcher));
  CHECK(mx_launcher.scheme.ps.servers_per == plan::PsScheme::Per::kNode);
  CHECK(mx_launcher.scheme.describe() == "ps(sync, a server per node (mxnet's default), colocated, local aggregation "
                                         "(mxnet's default), kvstore tensors (mxnet's default))");
  CHECK(plan::servers_at(mx_launcher, 32) == 2);  // 16 GPUs per p2.16xlarge
  CHECK_FALSE(sim::apply_stack_defaults(mx_launcher));
  plan::Scenario tf_unstated = scenario_on("aws-p2.16xlarge", unstated, "tensorflow");
  CHECK(sim::apply_stack_defaults(tf_unstated));  // its tensors only
  CHECK(tf_unstated.scheme.ps.tensors == plan::TensorPlacement::kWhole);
  CHECK(plan::servers_at(tf_unstated, 32) == 1);  // the spec's default
  Json dedicated = colocated;
  dedicated["placement"] = "dedicated";
  plan::Scenario mx_dedicated = scenario_on("aws-p2.16xlarge", dedicated, "mxnet");
  CHECK(sim::apply_stack_defaults(mx_dedicated));
  Json hybrid = {{"name", "hybrid"}, {"data_parallel", colocated}};
  plan::Scenario mx_hybrid = scenario_on("aws-p2.16xlarge", hybrid, "mxnet");
  CHECK(sim::apply_stack_defaults(mx_hybrid));
  CHECK(mx_hybrid.scheme.ps.local_aggregation);
  // What a scheme states stands: one worker process per GPU is a run that says "local_aggregation": false.
  Json stated = colocated;
  stated["local_aggregation"] = false;
  stated["tensors"] = "sliced";
  plan::Scenario mx_stated = scenario_on("aws-p2.16xlarge", stated, "mxnet");
  CHECK_FALSE(sim::apply_stack_defaults(mx_stated));
  CHECK_FALSE(mx_stated.scheme.ps.local_aggregation);
  CHECK(mx_stated.scheme.ps.tensors == plan::TensorPlacement::kSliced);
  // Servers inside the node (MXNet's local and device kvstores), another stack, or none named: the scheme as said,
  // but for how the stack spreads its tensors over the servers, wherever they are.
  Json device = colocated;
  device["placement"] = "device";
  plan::Scenario mx_device = scenario_on("aws-p2.16xlarge", device, "mxnet");
  CHECK(sim::apply_stack_defaults(mx_device));
  CHECK_FALSE(mx_device.scheme.ps.local_aggregation);
  // On the GPUs MXNet's device kvstore places each key whole, largest first (its merge buffers), not ps-lite's way.
  CHECK(mx_device.scheme.ps.tensors == plan::TensorPlacement::kLargestFirst);
  CHECK(mx_device.scheme.ps.servers_per == plan::PsScheme::Per::kFixed);  // it said 2
  plan::Scenario tf = scenario_on("aws-p2.16xlarge", colocated, "tensorflow");
  CHECK(sim::apply_stack_defaults(tf));
  CHECK_FALSE(tf.scheme.ps.local_aggregation);
  CHECK(tf.scheme.describe() == "ps(sync, 2 servers, colocated, whole tensors (tensorflow's default))");
  CHECK(tf.scheme.to_json().at("tensors") == "whole");
  plan::Scenario unnamed = scenario_on("aws-p2.16xlarge", colocated);
  CHECK_FALSE(sim::apply_stack_defaults(unnamed));
  CHECK(unnamed.scheme.describe() == "ps(sync, 2 servers, colocated)");
  plan::Scenario ring = scenario_on("aws-p2.16xlarge", {{"name", "allreduce"}}, "mxnet");
  CHECK_FALSE(sim::apply_stack_defaults(ring));
}

TEST_CASE("servers on the GPUs: one per GPU and the framework's placement where the scheme is silent", "[sim]") {
  const Json device = {{"name", "ps"}, {"placement", "device"}};  // MXNet's --kv-store device, tf_cnn_benchmarks' gpu
  plan::Scenario mx = scenario_on("aws-p2.16xlarge", device, "mxnet");
  mx.model = "alexnet_mxnet";
  mx.nodes = 1;
  CHECK(sim::apply_stack_defaults(mx));
  CHECK(mx.scheme.ps.servers_per == plan::PsScheme::Per::kGpu);
  CHECK(plan::servers_at(mx, 16) == 16);
  CHECK(mx.scheme.describe() == "ps(sync, a server per GPU (mxnet's default), device, largest_first tensors "
                                "(mxnet's default))");
  plan::Scenario tf = scenario_on("aws-p2.16xlarge", device, "tensorflow");
  CHECK(sim::apply_stack_defaults(tf));
  CHECK(tf.scheme.ps.servers_per == plan::PsScheme::Per::kGpu);
  CHECK(tf.scheme.ps.tensors == plan::TensorPlacement::kWhole);
  for (const char* name : {"mpi", "nccl"}) CHECK_FALSE(sim::find_stack(name).ps_device_servers_per_gpu);
  plan::Scenario unnamed = scenario_on("aws-p2.16xlarge", device);
  CHECK_FALSE(sim::apply_stack_defaults(unnamed));
  CHECK(plan::servers_at(unnamed, 16) == 1);  // the spec's default
  // MXNet's AlexNet on a p2.16xlarge's 16 GPUs: its fc6 (38M weights) is summed and updated on one GPU, whose PCIe
  // link carries all 16 copies each way, where sliced it would spread over the 16.
  plan::Scenario sliced = mx;
  sliced.scheme.ps.tensors = plan::TensorPlacement::kSliced;
  const sim::Calibration c = sim::default_calibration();
  const auto step = [&](const plan::Scenario& s) {
    return sim::simulate_point(s, 16, c, sim::RunOptions{}, sim::Fidelity::kFast).iteration_s;
  };
  CHECK(step(mx) > 1.3 * step(sliced));
}

TEST_CASE("MXNet's servers across nodes take one merged push per node as a stated local aggregation does", "[sim]") {
  // 2 p2.16xlarge (32 GPUs, 20 Gbit/s NICs), ResNet-50: 16 pushes of 100 MB per node or one (0.97 s against 0.69).
  Json colocated = {{"name", "ps"}, {"placement", "colocated"}, {"servers", 2}};
  plan::Scenario by_stack = scenario_on("aws-p2.16xlarge", colocated, "mxnet");
  sim::apply_stack_defaults(by_stack);
  colocated["local_aggregation"] = true;
  plan::Scenario stated = scenario_on("aws-p2.16xlarge", colocated, "mxnet");
  sim::apply_stack_defaults(stated);  // its tensors: MXNet's kvstore's, as by_stack's
  colocated["local_aggregation"] = false;
  plan::Scenario per_gpu = scenario_on("aws-p2.16xlarge", colocated, "mxnet");
  sim::apply_stack_defaults(per_gpu);
  const sim::Calibration c = sim::default_calibration();
  const auto fast = [&](const plan::Scenario& s) {
    return sim::simulate_point(s, 32, c, sim::RunOptions{}, sim::Fidelity::kFast).iteration_s;
  };
  const double merged = fast(by_stack);
  CHECK(merged == Approx(fast(stated)).epsilon(1e-12));
  CHECK(fast(per_gpu) > 1.25 * merged);
}

TEST_CASE("for_run folds the stack's costs in and leaves other stacks' runs alone", "[unit]") {
  sim::Calibration c = sim::default_calibration();
  c.devices["gpu"] = sim::DeviceEfficiency{0.5, 0.5, 0.5, 1e-5};
  c.message_overhead_s = 7e-6;
  c.ps_cost_per_byte_s = 3e-10;
  c.input_cost_per_image_s = 3e-4;
  c.stacks["tensorflow"] = sim::StackCosts{4e-5, 2e-4, 5e8, 1e-9, 4.0 * (1 << 30), 0.0};
  c.stacks["mpi"] = sim::StackCosts{};
  const sim::Calibration tf = c.for_run("resnet50", "tensorflow");
  CHECK(tf.input_cost_per_image_s == 0.0);  // the stack's own (its pipeline prefetches), not the top-level one
  CHECK(tf.device("gpu").op_overhead_s == 1e-5);  // the device's own per-op cost stays its own
  CHECK(tf.device("gpu").dispatch_s == Approx(4e-5));
  CHECK(tf.device("gpu").workspace_limit_bytes == 4.0 * (1 << 30));
  CHECK(tf.message_overhead_s == 2e-4);
  CHECK(tf.ps_cost_per_byte_s == 1e-9);
  CHECK(tf.network_ceiling_Bps == 5e8);
  CHECK(tf.stacks.empty());
  CHECK(tf.for_run("resnet50", "tensorflow").device("gpu").dispatch_s == Approx(4e-5));  // applied once
  const sim::Calibration mpi = c.for_run("resnet50", "mpi");
  CHECK(mpi.device("gpu").op_overhead_s == 1e-5);
  CHECK(mpi.device("gpu").dispatch_s == 0.0);
  CHECK(mpi.device("gpu").workspace_limit_bytes == 0.0);  // no cap
  CHECK(mpi.message_overhead_s == 7e-6);
  CHECK(mpi.ps_cost_per_byte_s == 3e-10);
  CHECK(mpi.network_ceiling_Bps == 0.0);
  CHECK(mpi.input_cost_per_image_s == 3e-4);
}

TEST_CASE("the stack's ceiling caps NIC links only, and never below a slower wire", "[unit]") {
  sim::Calibration c = sim::ideal_calibration();
  c.network_ceiling_Bps = 6e8;
  CHECK(c.link_bandwidth_Bps("network", 1.25e9) == 6e8);   // 10 Gbit/s Ethernet: the stack is the limit
  CHECK(c.link_bandwidth_Bps("network", 1.25e8) == 1.25e8);  // 1 Gbit/s: the wire is (no cliff)
  CHECK(c.link_bandwidth_Bps("pcie", 1.13e10) == 1.13e10);
  CHECK(c.link_bandwidth_Bps("uplink", 5e9) == 5e9);
  c.links[sim::LinkClass::kNetwork].bandwidth_factor = 0.5;
  CHECK(c.link_bandwidth_Bps("network", 1e9) == 5e8);
  // An assumed NIC rate's other end (predict's range): NIC links and uplinks scale before the factor and the ceiling.
  c.network_wire_scale = 10.0;
  CHECK(c.link_bandwidth_Bps("network", 1e8) == 5e8);   // 1e9 x 0.5, under the 6e8 ceiling
  CHECK(c.link_bandwidth_Bps("network", 1.25e8) == 6e8);  // 6.25e8: the ceiling
  CHECK(c.link_bandwidth_Bps("uplink", 5e9) == 2.5e10);
  CHECK(c.link_bandwidth_Bps("pcie", 1.13e10) == 1.13e10);
}

TEST_CASE("a slower network under a ceiling above its wire predicts as with no ceiling", "[sim]") {
  // aws-p2.xlarge's assumed 1 Gbit/s: a TensorFlow ceiling of 600 MB/s must not change anything.
  const plan::Scenario s = scenario_on("aws-p2.xlarge", {{"name", "ps"}, {"placement", "colocated"}, {"servers", 2}});
  sim::Calibration with = sim::default_calibration(), without = with;
  with.stacks["tensorflow"].network_Bps = 6e8;
  without.stacks["tensorflow"].network_Bps.reset();
  const auto a = sim::simulate_point_forked(s, 2, with, sim::RunOptions{});
  const auto b = sim::simulate_point_forked(s, 2, without, sim::RunOptions{});
  CHECK(a.iteration_s == Approx(b.iteration_s).epsilon(1e-9));
  // ... while a ceiling below the wire slows the same scenario down.
  sim::Calibration slow = with;
  slow.stacks["tensorflow"].network_Bps = 2e7;
  CHECK(sim::simulate_point_forked(s, 2, slow, sim::RunOptions{}).iteration_s > 1.2 * a.iteration_s);
}

TEST_CASE("shape-aware efficiency: 3x3 stride-1 convolutions with their tiles and the parallel-work curve", "[unit]") {
  sim::DeviceEfficiency d{0.4, 0.5, 0.6, 0.0};
  d.winograd_gain = 2.0;  // 0.8 for 3x3 stride-1
  plan::ComputeOp op = conv3x3_op();
  CHECK(d.for_op(op) == Approx(0.8));
  op.out_h = op.out_w = 14;  // whole 2x2 tiles
  CHECK(d.for_op(op) == Approx(0.8));
  op.out_h = op.out_w = 7;  // computed as 8x8: 49 of 64 outputs used
  CHECK(d.for_op(op) == Approx(0.8 * 49.0 / 64.0));
  op.out_w = 8;
  CHECK(d.for_op(op) == Approx(0.8 * 56.0 / 64.0));
  op.kernel_hw = 25;  // 5x5: no Winograd (F(2x2, 5x5) measured and not adopted: docs/results/k80-calibration.md)
  CHECK(d.for_op(op) == Approx(0.4));
  op.kernel_hw = 9;
  op.stride = 2;  // no Winograd: no tiles
  CHECK(d.for_op(op) == Approx(0.4));
  op.kernel_hw = 1;
  op.stride = 1;
  CHECK(d.for_op(op) == Approx(0.4));
  d.parallel_half_elements = 5e4;
  op.parallel_elements = 5e4;
  CHECK(d.for_op(op) == Approx(0.2));
  d.reduction_half_length = 64.0;
  op.flops = 2.0 * 5e4 * 64.0;  // 64 multiply-adds behind each output: half the efficiency again
  CHECK(d.for_op(op) == Approx(0.1));
  op.flops = 2.0 * 5e4 * 192.0;
  CHECK(d.for_op(op) == Approx(0.2 * 0.75));
  op.parallel_elements = 0.0;  // not a GEMM-like op: no curve (and no reduction length)
  CHECK(d.for_op(op) == Approx(0.4));
  d.reduction_half_length = 0.0;
  op.layer_class = models::LayerClass::kMemory;
  op.parallel_elements = 10.0;
  CHECK(d.for_op(op) == Approx(0.6));
}

TEST_CASE("a 3x3 convolution whose Winograd workspace exceeds the framework's cap runs without the gain", "[unit]") {
  // 64 -> 64 channels at 56x56, batch 32: 28 x 28 tiles of 4x4 values per channel and sample, and 16 per filter.
  plan::ComputeOp op = conv3x3_op();
  op.out_h = op.out_w = 56;
  op.in_channels = op.out_channels = 64;
  op.samples = 32;
  const double workspace = 4.0 * 16.0 * (28.0 * 28.0 * 32.0 * 128.0 + 64.0 * 64.0);
  CHECK(sim::winograd_workspace_bytes(op) == Approx(workspace));
  op.out_h = op.out_w = 55;  // odd: the last tile row and column are computed too
  CHECK(sim::winograd_workspace_bytes(op) == Approx(workspace));
  op.out_h = op.out_w = 56;
  sim::DeviceEfficiency d{0.4, 0.5, 0.6, 0.0};
  d.winograd_gain = 2.0;
  CHECK(d.for_op(op) == Approx(0.8));  // no cap
  d.workspace_limit_bytes = workspace;
  CHECK(d.for_op(op) == Approx(0.8));  // fits exactly
  d.workspace_limit_bytes = workspace - 1.0;
  CHECK(d.for_op(op) == Approx(0.4));  // the autotuner's pick among the algorithms that fit: the conv efficiency
  op.samples = 16;  // half the batch fits again
  CHECK(d.for_op(op) == Approx(0.8));
  // The built-in stacks' caps come from the frameworks' defaults: MXNet 1 GiB, TensorFlow 1.x 4 GiB, none else.
  CHECK(sim::find_stack("mxnet").parameter("conv_workspace_bytes").value == 1073741824.0);
  CHECK(sim::find_stack("tensorflow").parameter("conv_workspace_bytes").value == 4294967296.0);
  CHECK_FALSE(sim::find_stack("nccl").parameter("conv_workspace_bytes").value.has_value());
  CHECK_FALSE(sim::find_stack("mpi").parameter("conv_workspace_bytes").value.has_value());
}

TEST_CASE("predict's count of the 3x3 convolutions a stack's workspace cap keeps from Winograd", "[unit]") {
  const auto vgg16 = [](const std::string& framework, int batch, const std::string& cluster = "aws-p2.xlarge") {
    return plan::parse_scenario({{"model", "vgg16"}, {"cluster", cluster}, {"framework", framework},
                                 {"batch_per_gpu", batch}, {"scheme", {{"name", "allreduce"}}}},
                                "t.json");
  };
  sim::Calibration c = sim::default_calibration();
  c.devices["Tesla K80 (one GK210)"].winograd_gain = 1.5;
  // MXNet's 1 GiB at batch 32: conv1_1 and conv1_2 (224x224) and conv2_1 and conv2_2 (112x112) need more.
  sim::WorkspaceCap cap = sim::workspace_cap(vgg16("mxnet", 32), c);
  CHECK(cap.stack == "mxnet");
  CHECK(cap.cap_bytes == 1073741824.0);
  CHECK(cap.convolutions == 13);
  CHECK(cap.over_cap == 4);
  CHECK(sim::workspace_cap(vgg16("mxnet", 16), c).over_cap == 1);  // conv1_2 alone: 103 MB per image
  CHECK(sim::workspace_cap(vgg16("mxnet", 8), c).over_cap == 0);
  // TensorFlow's 4 GiB: nothing at batch 32, conv1_2 at batch 64 (6.6 GB).
  CHECK(sim::workspace_cap(vgg16("tensorflow", 32), c).over_cap == 0);
  CHECK(sim::workspace_cap(vgg16("tensorflow", 64), c).over_cap == 1);
  CHECK(sim::workspace_cap(vgg16("nccl", 64), c).over_cap == 0);  // no cap
  const sim::WorkspaceCap h200 = sim::workspace_cap(vgg16("mxnet", 64, "dgx-h200"), c);  // no Winograd gain
  CHECK(h200.convolutions == 0);
  CHECK(h200.over_cap == 0);
}

TEST_CASE("predict's measure of what a framework's dispatch adds to a worker's step", "[unit]") {
  const auto resnet50 = [](const std::string& framework, int batch) {
    return plan::parse_scenario({{"model", "resnet50"}, {"cluster", "aws-p2.xlarge"}, {"framework", framework},
                                 {"batch_per_gpu", batch}, {"scheme", {{"name", "allreduce"}}}},
                                "t.json");
  };
  sim::Calibration c = sim::default_calibration();
  c.stacks["tensorflow"].op_overhead_s = 644e-6;
  const sim::DispatchCost small = sim::dispatch_cost(resnet50("tensorflow", 8), c);
  const sim::DispatchCost large = sim::dispatch_cost(resnet50("tensorflow", 64), c);
  CHECK(small.stack == "tensorflow");
  CHECK(small.per_op_s == Approx(644e-6 + c.devices.at("Tesla K80 (one GK210)").dispatch_s));
  CHECK(small.ops == large.ops);  // the same layers and phases at any batch
  CHECK(small.ops > 100);
  // Added to every op: the same cost at any batch, a smaller share of a larger step.
  CHECK(small.added_s == Approx(small.ops * small.per_op_s).epsilon(1e-9));
  CHECK(large.added_s == Approx(small.added_s).epsilon(1e-9));
  CHECK(small.added_s / small.compute_s > large.added_s / large.compute_s);
  // Without it the step costs what it did not add.
  sim::Calibration none = c;
  none.stacks["tensorflow"].op_overhead_s = 1e-9;
  const sim::DispatchCost bare = sim::dispatch_cost(resnet50("tensorflow", 8), none);
  CHECK(bare.compute_s == Approx(small.compute_s - small.added_s + bare.added_s).epsilon(1e-9));
  // Each stack its own: MXNet's 20 us on each op, beside the device's own cost.
  c.devices["Tesla K80 (one GK210)"].op_overhead_s = 60e-6;
  c.stacks["mxnet"].op_overhead_s = 20e-6;
  const sim::DispatchCost mxnet = sim::dispatch_cost(resnet50("mxnet", 8), c);
  CHECK(mxnet.stack == "mxnet");
  CHECK(mxnet.ops == small.ops);
  CHECK(mxnet.added_s == Approx(mxnet.ops * 20e-6).epsilon(1e-9));
}

// ResNet-50 at batch 8 on one K80: the model and one worker's plan.
struct Resnet50Plan {
  plan::Scenario scenario = plan::parse_scenario(
      {{"model", "resnet50"}, {"cluster", "aws-p2.8xlarge"}, {"batch_per_gpu", 8}, {"scheme", {{"name", "allreduce"}}}},
      "t.json");
  models::Model model = plan::load_scenario_model(scenario);
  plan::IterationPlan plan = plan::lower(scenario, model, plan::load_scenario_cluster(scenario, 1), 1);
};

TEST_CASE("lowering gives every convolution and FC op its GEMM shape", "[unit]") {
  const Resnet50Plan r;
  const models::Model& model = r.model;
  const plan::IterationPlan& plan = r.plan;
  int convs = 0;
  for (const plan::Item& item : plan.program(0).items) {
    const plan::ComputeOp& op = item.compute;
    if (item.kind != plan::Item::Kind::kCompute || op.layer < 0) continue;
    const models::Layer& L = model.layers.at(static_cast<size_t>(op.layer));
    if (L.kind != models::LayerKind::kConv) continue;
    convs += op.phase == plan::Phase::kForward ? 1 : 0;
    CHECK(op.kernel_hw == L.conv.kernel_h * L.conv.kernel_w);
    CHECK((op.out_h == L.out.h && op.out_w == L.out.w));
    const models::Shape& in = model.layers.at(static_cast<size_t>(L.inputs.front())).out;
    CHECK((op.in_channels == in.c && op.out_channels == L.out.c));
    CHECK(op.samples == 8);
    if (op.phase == plan::Phase::kForward)  // M x N = output elements of the batch
      CHECK(op.parallel_elements == Approx(8.0 * static_cast<double>(L.out.elements())));
    if (op.phase == plan::Phase::kBackwardInput && op.stride == 1)  // input elements (strided: / stride^2)
      CHECK(op.parallel_elements == Approx(8.0 * static_cast<double>(in.elements())));
    if (op.phase == plan::Phase::kBackwardWeight)  // the weights
      CHECK(op.parallel_elements == Approx(static_cast<double>(L.out.c * in.c * L.conv.kernel_h * L.conv.kernel_w)));
  }
  CHECK(convs == 53);  // ResNet-50's 53 convolutions
}

TEST_CASE("lowering charges batch norm eight passes over its activation", "[unit]") {
  const Resnet50Plan r;
  const models::Model& model = r.model;
  const plan::IterationPlan& plan = r.plan;
  int norms = 0, norm_weights = 0;
  for (const plan::Item& item : plan.program(0).items) {
    const plan::ComputeOp& op = item.compute;
    if (item.kind != plan::Item::Kind::kCompute || op.layer < 0) continue;
    const models::Layer& L = model.layers.at(static_cast<size_t>(op.layer));
    if (L.kind != models::LayerKind::kBatchNorm) continue;
    const double a = 8.0 * static_cast<double>(L.activation_bytes);  // the batch's activation
    const double w = static_cast<double>(L.weight_bytes);
    // forward: x for the statistics, x and y to normalise; backward: x, dy for dgamma and dbeta, then x, dy, dx
    const double passes = op.phase == plan::Phase::kBackwardWeight ? 2.0 : 3.0;
    CHECK(op.bytes == Approx(passes * a + w));
    norms += op.phase == plan::Phase::kForward ? 1 : 0;
    norm_weights += op.phase == plan::Phase::kBackwardWeight ? 1 : 0;
  }
  CHECK(norms == 53);  // one after each convolution
  CHECK(norm_weights == 53);  // each with its scale and shift: the x, dy reduction is charged
}

TEST_CASE("calibration files keep stacks, shape parameters and the prediction interval", "[unit]") {
  sim::Calibration c = sim::default_calibration();
  c.devices["gpu"] = sim::DeviceEfficiency{0.5, 0.5, 0.5, 1e-5};
  c.devices["gpu"].winograd_gain = 1.9;
  c.devices["gpu"].parallel_half_elements = 3e4;
  c.devices["gpu"].reduction_half_length = 16.0;
  // An entry overrides its stack file's values; mpi's are all none, so what is absent stays absent.
  c.stacks["mpi"] = sim::StackCosts{4e-5, std::nullopt, 5e8, std::nullopt, 2e9, 1e-4};
  c.prediction_log_sd = 0.07;
  const sim::Calibration back = sim::parse_calibration(sim::calibration_to_json(c), "c.json");
  CHECK(back.devices.at("gpu").winograd_gain == 1.9);
  CHECK(back.devices.at("gpu").parallel_half_elements == 3e4);
  CHECK(back.devices.at("gpu").reduction_half_length == 16.0);
  CHECK(back.stacks.at("mpi") == c.stacks.at("mpi"));
  CHECK(back.prediction_log_sd == 0.07);
  Json bad = sim::calibration_to_json(c);
  bad["stacks"]["tensorflow"]["network_gbps"] = 1;
  CHECK_THROWS_WITH(sim::parse_calibration(bad, "c.json"), Catch::Contains("/stacks/tensorflow"));
}

TEST_CASE("an older calibration's conv_winograd (the 3x3 efficiency) reads as the gain over conv", "[unit]") {
  Json j = sim::calibration_to_json(sim::default_calibration());
  j["devices"]["gpu"] = {{"conv", 0.8}, {"conv_winograd", 1.2}};
  CHECK(sim::parse_calibration(j, "old.json").devices.at("gpu").winograd_gain == Approx(1.5));
  j["devices"]["gpu"]["winograd_gain"] = 1.5;  // both: refused, naming the field
  CHECK_THROWS_WITH(sim::parse_calibration(j, "old.json"), Catch::Contains("/devices/gpu/conv_winograd"));
}

TEST_CASE("predict names its calibration: shipped by device, none, or a file", "[unit]") {
  const sim::ChosenCalibration none = sim::choose_calibration("none", "Tesla K80 (one GK210)");
  CHECK(none.source == "built-in defaults");
  const sim::ChosenCalibration other = sim::choose_calibration("", "a device nobody calibrated");
  CHECK(other.source.find("built-in defaults") == 0);
  for (const sim::ShippedCalibration& s : sim::shipped_calibrations()) {
    INFO(s.name);
    CHECK(s.provenance.contains("command"));
    CHECK(s.provenance.contains("commit"));
    CHECK(s.calibration.prediction_log_sd > 0.0);
    REQUIRE_FALSE(s.devices.empty());
    const sim::ChosenCalibration chosen = sim::choose_calibration("", s.devices.front());
    CHECK(chosen.source == "calibrations/" + s.name + ".json (shipped)");
    CHECK(sim::choose_calibration("shipped:" + s.name, "x").source == chosen.source);
  }
  CHECK_THROWS_AS(sim::choose_calibration("shipped:nothing", "x"), InputError);
  // k80.json carries the H200's defaults along but fitted nothing of it: an H200 of no known family is nobody's
  // fit, and gets no K80 interval; as a Hopper it takes modern.json, which fitted the family's entry.
  const sim::ChosenCalibration h200 = sim::choose_calibration("", "H200-SXM5-141GB");
  CHECK(h200.source == "built-in defaults (no shipped calibration fits H200-SXM5-141GB)");
  CHECK(h200.calibration.prediction_log_sd == 0.0);
  const sim::ChosenCalibration hopper = sim::choose_calibration("", "H200-SXM5-141GB", "hopper");
  CHECK(hopper.source == "calibrations/modern.json (shipped)");
  CHECK(hopper.calibration.devices.count("family:hopper") == 1);
  CHECK(sim::choose_calibration("", "Tesla K80 (one GK210)", "kepler").source == "calibrations/k80.json (shipped)");
  CHECK(sim::choose_calibration("", "Tesla K80 (one GK210)").source == "calibrations/k80.json (shipped)");
}

TEST_CASE("an H100 is predicted with the H200's efficiencies and its own slower memory", "[sim]") {
  // Both are Hopper: with no entry of their own, both take the family's (not the default's).
  const sim::Calibration defaults = sim::default_calibration();
  CHECK(defaults.device_key("H100-SXM5-80GB", "hopper") == "family:hopper");
  CHECK(defaults.device_key("H200-SXM5-141GB", "hopper") == "family:hopper");
  CHECK(defaults.device_key("H200-SXM5-141GB", "") == "default");
  const auto iteration_s = [](const std::string& cluster) {
    const plan::Scenario s = plan::parse_scenario(Json{{"name", "h"}, {"model", "resnet50"}, {"cluster", cluster},
                                                       {"gpus_per_node", 1}, {"batch_per_gpu", 64},
                                                       {"scheme", {{"name", "allreduce"}}}},
                                                  "h.json");
    const sim::ChosenCalibration chosen =
        sim::choose_calibration("", plan::load_scenario_cluster_spec(s).node.device.name);
    CHECK(chosen.source.find("built-in defaults") == 0);  // no shipped calibration fits either
    return sim::simulate_point(s, 1, chosen.calibration, sim::RunOptions{}, sim::Fidelity::kFast).iteration_s;
  };
  // Same peaks: only the memory-bound part of the step (and the convolutions' own traffic) takes 4.8 / 3.35 times
  // as long, so the whole step takes longer, by less than that.
  const double ratio = iteration_s("dgx-h100") / iteration_s("dgx-h200");
  CHECK(ratio > 1.05);
  CHECK(ratio < 4.8 / 3.35);
}

TEST_CASE("predict says when a network is not among those the calibration was fitted on for the device", "[sim]") {
  const auto scenario = [](const std::string& model) {
    return plan::parse_scenario(Json{{"name", "u"}, {"model", model}, {"cluster", "aws-p2.xlarge"},
                                     {"batch_per_gpu", 32}, {"scheme", {{"name", "allreduce"}}}},
                                "u.json");
  };
  sim::Calibration c = sim::default_calibration();
  CHECK_FALSE(sim::unfitted_network(sim::worker_step(scenario("resnet101_v1"), c), c));  // names none: nothing
  c.fitted_networks["Tesla K80 (one GK210)"] = {"vgg16", "resnet50_v1"};
  c.fitted_networks["H200-SXM5-141GB"] = {"resnet101_v1"};  // another device's networks do not count
  c.cross_validation_folds = {{"model!=vgg16", 16, 17.2}, {"nodes<=1", 3, 2.0}, {"model!=resnet152", 16, 0.8}};
  c.prediction_log_sd = 0.1;
  CHECK_FALSE(sim::unfitted_network(sim::worker_step(scenario("resnet50_v1"), c), c));
  const auto unfitted = sim::unfitted_network(sim::worker_step(scenario("resnet101_v1"), c), c);
  REQUIRE(unfitted);
  CHECK(unfitted->network == "resnet101_v1");
  CHECK(unfitted->device == "Tesla K80 (one GK210)");
  CHECK(unfitted->fitted == std::vector<std::string>{"resnet50_v1", "vgg16"});
  CHECK(unfitted->left_out_folds == 2);  // the folds that left a network out, not the scale fold
  CHECK(unfitted->left_out_mape_low == 0.8);
  CHECK(unfitted->left_out_mape_high == 17.2);
  CHECK(unfitted->interval_log_sd == 0.0);  // the folds did not record their spread: the calibration's interval
  CHECK_THAT(report::unfitted_network_note(*unfitted),
             Catch::StartsWith("resnet101_v1 is not among the networks the calibration was fitted on for Tesla K80 "
                               "(one GK210) (resnet50_v1, vgg16): the 2 networks its cross-validation left out were "
                               "predicted 0.8-17.2% off"));
  sim::PredictOptions options;
  options.calibration = c;
  options.gpus = {1};
  const report::Report r = sim::predict(scenario("resnet101_v1"), options);
  REQUIRE(r.unfitted_network);
  CHECK_THAT(report::report_table(r), Catch::Contains("resnet101_v1 is not among the networks"));
  CHECK_THAT(report::report_html(r), Catch::Contains("resnet101_v1 is not among the networks"));
  const Json j = report::report_to_json(r);
  CHECK(j.at("unfitted_network").at("left_out_networks").at("mape") == Json({0.8, 17.2}));
  CHECK(r.interval_log_sd == 0.1);
  const report::Report seen = sim::predict(scenario("vgg16"), options);
  CHECK_FALSE(report::report_to_json(seen).contains("unfitted_network"));
  // With each fold's spread: an unseen network's interval is drawn from the left-out-network folds' runs (the RMS
  // of their log errors, sqrt((16 * 0.2^2 + 48 * 0.04^2) / 64) = 0.1058), where that is wider than the calibration's.
  options.calibration.cross_validation_folds = {{"model!=vgg16", 16, 17.2, 0.2}, {"nodes<=1", 3, 2.0, 0.5},
                                                {"model!=resnet152", 48, 0.8, 0.04}};
  const report::Report wider = sim::predict(scenario("resnet101_v1"), options);
  REQUIRE(wider.unfitted_network);
  CHECK(wider.interval_log_sd == Approx(std::sqrt((16 * 0.04 + 48 * 0.0016) / 64.0)));
  CHECK(wider.unfitted_network->interval_log_sd == wider.interval_log_sd);
  CHECK_THAT(report::report_table(wider), Catch::Contains("and its interval is drawn from theirs (x1.190^-+1)"));
  CHECK(sim::predict(scenario("vgg16"), options).interval_log_sd == 0.1);
  options.calibration.prediction_log_sd = 0.2;  // already wider: kept
  CHECK(sim::predict(scenario("resnet101_v1"), options).interval_log_sd == 0.2);
  CHECK_FALSE(sim::unfitted_network(sim::worker_step(scenario("vgg16"), c), c));
  CHECK(sim::interval_log_sd(std::nullopt, c) == 0.1);
  CHECK(sim::interval_log_sd(unfitted, c) == 0.1);  // no spread recorded: the pooled one
}

TEST_CASE("predict says when its sweep goes beyond the scale of the calibration's runs of its stack", "[sim]") {
  // One K80 per p2.xlarge instance: 2 GPUs are 2 nodes.
  const plan::Scenario scenario = plan::parse_scenario(
      Json{{"name", "s"}, {"model", "resnet50_v1"}, {"cluster", "aws-p2.xlarge"}, {"framework", "tensorflow"},
           {"nodes", 2}, {"batch_per_gpu", 32}, {"scheme", {{"name", "allreduce"}}}},
      "s.json");
  sim::PredictOptions options;
  options.calibration = sim::default_calibration();
  options.gpus = {1, 2};
  CHECK_FALSE(sim::predict(scenario, options).beyond_fitted_scale);  // the calibration does not record its scale
  options.calibration.fitted_scale["tensorflow"] = {1, 1};
  const report::Report r = sim::predict(scenario, options);
  REQUIRE(r.beyond_fitted_scale);
  CHECK(r.beyond_fitted_scale->nodes == 2);
  CHECK(r.beyond_fitted_scale->gpus == 2);
  CHECK(r.beyond_fitted_scale->fitted_gpus == 1);
  const std::string note = "tensorflow's runs in the calibration reach 1 node (1 GPU); the sweep goes to 2 nodes "
                           "(2 GPUs): beyond that scale the prediction extrapolates, and tensorflow's costs between "
                           "GPUs and nodes are its stack file's (stacks/tensorflow.json), fitted on no run";
  CHECK(report::beyond_fitted_scale_note(*r.beyond_fitted_scale) == note);
  CHECK_THAT(report::report_table(r), Catch::Contains(note));
  CHECK_THAT(report::report_html(r), Catch::Contains("beyond that scale the prediction extrapolates"));
  CHECK(report::report_to_json(r).at("beyond_fitted_scale") ==
        Json({{"stack", "tensorflow"}, {"fitted_nodes", 1}, {"fitted_gpus", 1}, {"nodes", 2}, {"gpus", 2}}));
  report::BeyondFittedScale one_node = *r.beyond_fitted_scale;
  one_node.nodes = 1;  // several GPUs of one node
  CHECK_THAT(report::beyond_fitted_scale_note(one_node),
             Catch::EndsWith("tensorflow's costs between GPUs are its stack file's (stacks/tensorflow.json), fitted "
                             "on no run"));
  options.gpus = {1};
  CHECK_FALSE(sim::predict(scenario, options).beyond_fitted_scale);  // within
  options.gpus = {1, 2};
  options.calibration.fitted_scale["tensorflow"] = {4, 8};
  CHECK_FALSE(sim::predict(scenario, options).beyond_fitted_scale);
  options.calibration.fitted_scale["tensorflow"] = {1, 8};  // several GPUs, one node: across nodes only
  CHECK_THAT(report::report_table(sim::predict(scenario, options)),
             Catch::Contains("reach 1 node (8 GPUs); the sweep goes to 2 nodes (2 GPUs): beyond that scale the "
                             "prediction extrapolates, and tensorflow's costs across nodes are"));
  options.calibration.fitted_scale = {{"mxnet", {1, 1}}};  // no run of this stack
  CHECK_THAT(report::report_table(sim::predict(scenario, options)),
             Catch::Contains("no run of tensorflow is among those the calibration was fitted on, and the sweep goes "
                             "to 2 nodes (2 GPUs): its costs are its stack file's (stacks/tensorflow.json), not "
                             "fitted"));
}

TEST_CASE("a step that leans on the dispatch beyond the calibration's support is predicted without it too",
          "[sim]") {
  // TensorFlow's ResNet-50 (v1) on one K80: the floor adds 13% of the step at batch 32, about 39% at batch 8.
  const auto scenario = [](int batch) {
    return plan::parse_scenario(Json{{"model", "resnet50_v1"}, {"cluster", "aws-p2.xlarge"}, {"batch_per_gpu", batch},
                                     {"framework", "tensorflow"}, {"scheme", {{"name", "allreduce"}}}},
                                "t.json");
  };
  sim::Calibration c = sim::choose_calibration("shipped:k80", "").calibration;
  c.dispatch_support = {{"tensorflow", 0.2}};
  CHECK_FALSE(sim::dispatch_beyond_support(scenario(32), c));
  const auto beyond = sim::dispatch_beyond_support(scenario(8), c);
  REQUIRE(beyond);
  CHECK(beyond->stack == "tensorflow");
  CHECK(beyond->batch_per_gpu == 8);
  CHECK(beyond->share > 0.35);
  CHECK(beyond->support == 0.2);
  const sim::Calibration free = sim::without_dispatch(c, "tensorflow");
  CHECK(sim::dispatch_cost(scenario(8), free).added_s == 0.0);
  CHECK_FALSE(sim::dispatch_beyond_support(scenario(8), free));
  c.dispatch_support.clear();  // none stated: nothing to check against
  CHECK_FALSE(sim::dispatch_beyond_support(scenario(8), c));
  // predict: every point also without the dispatch, and the interval covers it.
  c.dispatch_support = {{"tensorflow", 0.2}};
  sim::PredictOptions options;
  options.calibration = c;
  options.gpus = {1};
  CHECK(sim::predict_simulations(scenario(8), options.gpus, c) == 2);
  const report::Report r = sim::predict(scenario(8), options);
  REQUIRE(r.dispatch_beyond);
  const report::PointResult& p = r.predictions.at(0);
  CHECK(p.alternatives.at("without_dispatch") > 1.3 * p.images_per_sec);
  CHECK(report::interval_ratios(r.interval_log_sd, p).second * p.images_per_sec >=
        p.alternatives.at("without_dispatch"));
  CHECK(r.alternative_notes.count("without_dispatch") == 1);
  CHECK(sim::predict(scenario(32), options).predictions.at(0).alternatives.empty());
}

TEST_CASE("a calibration keeps each stack's dispatch support", "[unit]") {
  Json j = sim::calibration_to_json(sim::default_calibration());
  j["prediction_interval"] = {{"log_sd", 0.1}, {"dispatch_support", {{"tensorflow", 0.21}}}};
  const sim::Calibration c = sim::parse_calibration(j, "c.json");
  CHECK(c.dispatch_support.at("tensorflow") == 0.21);
  CHECK(sim::calibration_to_json(c).at("prediction_interval").at("dispatch_support").at("tensorflow") == 0.21);
  j["prediction_interval"]["dispatch_support"]["tensorflow"] = 1.5;  // a share of the step: at most 1
  CHECK_THROWS_WITH(sim::parse_calibration(j, "c.json"),
                    Catch::Contains("/prediction_interval/dispatch_support/tensorflow"));
}

TEST_CASE("where the stack's workspace cap keeps 3x3 convolutions from Winograd the interval covers no cap", "[sim]") {
  // MXNet's VGG16 on one K80 at batch 32: 4 of its 13 3x3 convolutions need more than MXNet's 1 GiB.
  const plan::Scenario s = plan::parse_scenario(
      Json{{"model", "vgg16"}, {"cluster", "aws-p2.xlarge"}, {"batch_per_gpu", 32}, {"framework", "mxnet"},
           {"scheme", {{"name", "allreduce"}}}},
      "v.json");
  const sim::Calibration c = sim::choose_calibration("shipped:k80", "").calibration;
  const std::vector<sim::ModelAlternative> alts = sim::model_alternatives(s, c);
  REQUIRE(alts.size() == 1);
  CHECK(alts[0].what == "without_workspace_cap");
  CHECK_THAT(alts[0].note, Catch::Contains("mxnet's cap on cuDNN's workspace (1.00 GiB) keeps 4 of the 13 3x3"));
  CHECK(sim::workspace_cap(s, alts[0].calibration).over_cap == 0);
  sim::PredictOptions options;
  options.calibration = c;
  options.gpus = {1};
  const report::Report r = sim::predict(s, options);
  const report::PointResult& p = r.predictions.at(0);
  CHECK(p.alternatives.at("without_workspace_cap") > 1.2 * p.images_per_sec);
  CHECK(std::round(10.0 * p.images_per_sec) == 256.0);  // docs/results/k80-calibration.md: 25.6 within 21.7-40.4
  const auto [lo, hi] = report::interval_ratios(r.interval_log_sd, p);
  CHECK(std::round(10.0 * p.images_per_sec * lo) == 217.0);
  CHECK(std::round(10.0 * p.images_per_sec * hi) == 404.0);
  CHECK(report::interval_ratios(r.interval_log_sd, p).second * p.images_per_sec >
        p.alternatives.at("without_workspace_cap"));
  // Under the cap at batch 8 (its convolutions fit): nothing to cover.
  plan::Scenario small = s;
  small.batch_per_gpu = 8;
  CHECK(sim::model_alternatives(small, c).empty());
}
