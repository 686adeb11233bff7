// Compute model closed forms and the calibration file format (strict reader, round trip, defaults).
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>

#include "core/error.hpp"
#include "plan/scenario.hpp"
#include "sim/compute_model.hpp"
#include "sim/predict.hpp"

using namespace scaletwin;

TEST_CASE("roofline: compute-bound, memory-bound, overhead, data and server costs", "[unit]") {
  sim::Calibration c = sim::ideal_calibration();
  c.devices["gpu"] = sim::DeviceEfficiency{0.5, 0.8, 0.25, 1e-5};
  c.input_cost_per_image_s = 1e-3;
  c.ps_cost_per_byte_s = 2e-9;
  const sim::Processor p{"gpu", 1e12, 1e11, false};
  plan::ComputeOp conv;
  conv.layer_class = models::LayerClass::kConv;
  conv.flops = 1e10;
  conv.bytes = 1e8;
  // On a GPU a convolution's arithmetic and its traffic add: 1e10 / (1e12 * 0.5) + 1e8 / (1e11 * 0.25) + 1e-5
  CHECK(sim::ComputeModel(c, false).op_time_s(conv, p) == Approx(0.02 + 0.004 + 1e-5).epsilon(1e-12));
  // on a host CPU the operands sit in its caches: the larger of the two
  c.devices["cpu"] = c.devices["gpu"];
  const sim::Processor cpu{"cpu", 1e12, 1e11, true};
  CHECK(sim::ComputeModel(c, false).op_time_s(conv, cpu) == Approx(0.02 + 1e-5).epsilon(1e-12));
  plan::ComputeOp relu = conv;
  relu.layer_class = models::LayerClass::kMemory;
  relu.flops = 1e8;
  relu.bytes = 4e9;  // 4e9 / 2.5e10 = 0.16 s, flops 1e8 / 2.5e11 = 0.4 ms
  CHECK(sim::ComputeModel(c, false).op_time_s(relu, p) == Approx(0.16 + 1e-5).epsilon(1e-12));
  plan::ComputeOp data;
  data.phase = plan::Phase::kData;
  data.samples = 64;
  CHECK(sim::ComputeModel(c, false).op_time_s(data, p) == Approx(1e-5).epsilon(1e-12));
  CHECK(sim::ComputeModel(c, true).op_time_s(data, p) == Approx(1e-5 + 64e-3).epsilon(1e-12));
  plan::ComputeOp update;
  update.phase = plan::Phase::kServerUpdate;
  // Applying 1 MB of gradient moves 5 MB: roofline 5e6 / 2.5e10 = 200 us; a host server's threads add 2e-9 per
  // byte of gradient (2 ms), a server on a device pays its roofline only.
  update.bytes = plan::kUpdateTrafficPerGradientByte * 1e6;
  CHECK(sim::ComputeModel(c, false).op_time_s(update, cpu) == Approx(2e-4 + 2e-3 + 1e-5).epsilon(1e-12));
  CHECK(sim::ComputeModel(c, false).op_time_s(update, p) == Approx(2e-4 + 1e-5).epsilon(1e-12));
  CHECK(sim::ComputeModel(c, false).reduce_time_s(1e6, p, false) == Approx(3e6 / 2.5e10).epsilon(1e-12));
  CHECK(sim::ComputeModel(c, false).reduce_time_s(1e6, cpu, true) == Approx(3e6 / 2.5e10 + 2e-3).epsilon(1e-12));
  CHECK(sim::ComputeModel(c, false).reduce_time_s(1e6, p, true) == Approx(3e6 / 2.5e10).epsilon(1e-12));
  CHECK(sim::ComputeModel(c, false).copy_time_s(1e6, p) == Approx(2e6 / 2.5e10).epsilon(1e-12));
}

TEST_CASE("a framework's dispatch adds to each op's time on a GPU as on a host CPU", "[unit]") {
  sim::Calibration c = sim::ideal_calibration();
  c.devices["gpu"] = sim::DeviceEfficiency{0.5, 0.8, 0.25, 1e-5};
  c.devices["cpu"] = sim::DeviceEfficiency{0.5, 0.8, 0.25, 1e-5};
  sim::StackCosts tf_costs;  // TensorFlow's dispatch alone, no other cost of its own
  tf_costs.op_overhead_s = 5e-4;
  c.stacks["tensorflow"] = tf_costs;
  const sim::Calibration tf = c.for_run("resnet50", "tensorflow");
  const sim::Processor gpu{"gpu", 1e12, 1e11, false};
  const sim::Processor cpu{"cpu", 1e12, 1e11, true};
  plan::ComputeOp big;
  big.layer_class = models::LayerClass::kConv;
  big.flops = 1e9;  // 1e9 / 5e11 = 2 ms on the device, and the dispatch's 0.5 ms beside it
  plan::ComputeOp small = big;
  small.flops = 1e8;  // 0.2 ms: the dispatch's 0.5 ms added as well, whatever the op's size
  CHECK(sim::ComputeModel(tf, false).op_time_s(big, gpu) == Approx(2e-3 + 1e-5 + 5e-4).epsilon(1e-12));
  CHECK(sim::ComputeModel(tf, false).op_time_s(small, gpu) == Approx(2e-4 + 1e-5 + 5e-4).epsilon(1e-12));
  CHECK(sim::ComputeModel(tf, false).op_time_s(big, cpu) == Approx(2e-3 + 1e-5 + 5e-4).epsilon(1e-12));
  CHECK(sim::ComputeModel(c, false).op_time_s(small, gpu) == Approx(2e-4 + 1e-5).epsilon(1e-12));  // no stack
}

TEST_CASE("real data: each worker uploads its batch over its share of the PCIe route from host memory", "[unit]") {
  // aws-p2.8xlarge: 8 GK210, two per K80 board, each board behind its own 11.3 GB/s slot (clusters/*.json).
  Json j = {{"model", "alexnet"}, {"cluster", "aws-p2.8xlarge"}, {"nodes", 1}, {"gpus_per_node", 8},
            {"batch_per_gpu", 512}, {"training", {{"data", "real"}}}};
  const plan::Scenario s = plan::parse_scenario(j, "s.json");
  for (const auto& [gpus, expected_Bps] : {std::pair{1, 11.3e9}, std::pair{2, 11.3e9 / 2}, std::pair{3, 11.3e9 / 2}}) {
    const plan::Point point = plan::prepare(s, gpus);
    std::vector<sim::Processor> per_endpoint(point.plan.endpoints.size());
    sim::note_upload_links(per_endpoint, point.plan, point.cluster);
    INFO(gpus << " GPUs");
    CHECK(per_endpoint.at(0).upload_Bps == Approx(expected_Bps));  // GPUs 0 and 1 share board 0
    if (gpus == 3) CHECK(per_endpoint.at(2).upload_Bps == Approx(11.3e9));  // alone on board 1
  }
  // The data op: 512 images of 3x224x224 floats (308 MB) at 5.65 GB/s, over the device's memory write.
  sim::Calibration c = sim::ideal_calibration();
  c.devices["gpu"] = sim::DeviceEfficiency{0.5, 0.8, 1.0, 0.0};
  sim::Processor p{"gpu", 1e12, 1e11, false};
  p.upload_Bps = 5.65e9;
  plan::ComputeOp data;
  data.phase = plan::Phase::kData;
  data.samples = 512;
  data.bytes = 512 * 3 * 224 * 224 * 4.0;
  CHECK(sim::ComputeModel(c, true).op_time_s(data, p) == Approx(data.bytes / 5.65e9).epsilon(1e-12));
  CHECK(sim::ComputeModel(c, false).op_time_s(data, p) == Approx(data.bytes / 1e11).epsilon(1e-12));  // synthetic
  c.input_cost_per_image_s = 1e-4;  // what the host's pipeline leaves exposed, on top
  CHECK(sim::ComputeModel(c, true).op_time_s(data, p) == Approx(data.bytes / 5.65e9 + 0.0512).epsilon(1e-12));
}

TEST_CASE("servers on one host CPU share it: each applies its shard at 1/k of the rate of one alone", "[unit]") {
  // 4 colocated servers on 2 nodes: ps0 and ps2 on node 0, ps1 and ps3 on node 1; 4 servers on 4 GPUs share nothing.
  Json j = {{"model", "resnet50"}, {"cluster", "aws-p2.8xlarge"}, {"nodes", 2}, {"gpus_per_node", 8},
            {"scheme", {{"name", "ps"}, {"servers", 4}, {"placement", "colocated"}}}};
  for (const auto& [placement, sharing] : {std::pair{"colocated", 2}, std::pair{"device", 1}}) {
    j["scheme"]["placement"] = placement;
    const plan::Point point = plan::prepare(plan::parse_scenario(j, "s.json"), 16);
    std::vector<sim::Processor> per_endpoint(point.plan.endpoints.size());
    sim::note_co_runners(per_endpoint, point.plan);
    int servers = 0;
    for (size_t e = 0; e < per_endpoint.size(); ++e) {
      INFO(placement << " " << point.plan.endpoints[e].name);
      const bool server = point.plan.endpoints[e].kind == plan::EndpointKind::kServer;
      servers += server ? 1 : 0;
      CHECK(per_endpoint[e].sharing_servers == (server ? sharing : 1));
      if (!server) CHECK(per_endpoint[e].co_runners == 7);
    }
    CHECK(servers == 4);
  }
  sim::Calibration c = sim::ideal_calibration();
  c.devices["cpu"] = sim::DeviceEfficiency{0.5, 0.8, 0.25, 0.0};
  c.ps_cost_per_byte_s = 2e-9;
  sim::Processor cpu{"cpu", 1e12, 1e11, true};
  plan::ComputeOp update;
  update.phase = plan::Phase::kServerUpdate;
  update.bytes = plan::kUpdateTrafficPerGradientByte * 1e6;
  const double alone = sim::ComputeModel(c, false).op_time_s(update, cpu);
  const double reduce_alone = sim::ComputeModel(c, false).reduce_time_s(1e6, cpu, true);
  cpu.sharing_servers = 2;
  CHECK(sim::ComputeModel(c, false).op_time_s(update, cpu) == Approx(2.0 * alone).epsilon(1e-12));
  CHECK(sim::ComputeModel(c, false).reduce_time_s(1e6, cpu, true) == Approx(2.0 * reduce_alone).epsilon(1e-12));
}

TEST_CASE("the K80 default reproduces the published ResNet-50 step within the derivation's rounding", "[sim]") {
  // calibration.cpp derives the K80's defaults from tf_cnn_benchmarks' ResNet-50 on one K80 (batch 64, synthetic
  // data: 51.9 images/s, ../shared/reference/k80-train.json). Simulating the whole model (every layer, its memory
  // traffic and per-op costs, on the GCE k80x8 node) with those defaults must land near it.
  const plan::Scenario s = plan::load_scenario(std::string(SCALETWIN_SOURCE_DIR) + "/scenarios/tf-gce-resnet50.json");
  REQUIRE(s.model == "resnet50_v1");  // tf_cnn_benchmarks' ResNet-50 of 2017
  REQUIRE(s.batch_per_gpu == 64);
  const report::PointResult p = sim::simulate_point_forked(s, 1, sim::default_calibration(), sim::RunOptions{});
  CHECK(p.images_per_sec == Approx(51.9).epsilon(0.03));
  const sim::Calibration c = sim::default_calibration();
  CHECK(c.device("unknown device").conv == c.device("default").conv);
}

TEST_CASE("calibration files round-trip and unknown keys are rejected", "[unit]") {
  sim::Calibration c = sim::default_calibration();
  c.devices["X"] = sim::DeviceEfficiency{0.1, 0.2, 0.3, 4e-6};
  c.links[sim::LinkClass::kNetwork].latency_factor = 2.5;
  c.message_overhead_s = 7e-6;
  const std::string path = "test_calibration_roundtrip.json";
  sim::save_calibration(path, c);
  const sim::Calibration back = sim::load_calibration(path);
  std::remove(path.c_str());
  CHECK(back.device("X").matmul == 0.2);
  CHECK(back.device("X").op_overhead_s == 4e-6);
  CHECK(back.link(sim::LinkClass::kNetwork).latency_factor == 2.5);
  CHECK(back.message_overhead_s == 7e-6);
  CHECK(sim::calibration_to_json(back) == sim::calibration_to_json(c));

  Json bad = sim::calibration_to_json(c);
  bad["devices"]["X"]["convv"] = 0.3;
  CHECK_THROWS_AS(sim::parse_calibration(bad, "bad.json"), InputError);
  Json wrong = sim::calibration_to_json(c);
  wrong["format"] = "scaletwin-calibration/2";
  CHECK_THROWS_AS(sim::parse_calibration(wrong, "bad.json"), InputError);
  Json partial = {{"format", "scaletwin-calibration/1"}, {"links", {{"pcie", {{"bandwidth_factor", 0.5}}}}}};
  const sim::Calibration p = sim::parse_calibration(partial, "partial.json");
  CHECK(p.link(sim::LinkClass::kPcie).bandwidth_factor == 0.5);
  CHECK(p.link(sim::LinkClass::kPcie).latency_factor == 1.0);
  CHECK(p.message_overhead_s == sim::default_calibration().message_overhead_s);

  // "sourced": a device's fields set from a source; kept from the defaults when a file does not say, replaced
  // when it does, and a name that is no device field is refused at its place.
  const std::string k80 = "Tesla K80 (one GK210)";
  CHECK(p.device(k80).sourced == sim::default_calibration().device(k80).sourced);
  c.devices["X"].sourced = {"memory", "winograd_gain"};
  const Json with = sim::calibration_to_json(c);
  CHECK(with["devices"]["X"]["sourced"] == Json({"memory", "winograd_gain"}));
  CHECK(sim::parse_calibration(with, "s.json").device("X").sourced == c.devices["X"].sourced);
  Json own = partial;
  own["devices"][k80] = {{"sourced", Json::array({"memory"})}};
  CHECK(sim::parse_calibration(own, "s.json").device(k80).sourced == std::set<std::string>{"memory"});
  own["devices"][k80]["sourced"] = {"memory", "speed"};
  try {
    sim::parse_calibration(own, "s.json");
    FAIL("no InputError");
  } catch (const InputError& e) {
    CHECK(e.json_path() == "/devices/" + k80 + "/sourced/1");
  }
}

TEST_CASE("a calibration file names the networks it was fitted on and keeps its cross-validation folds", "[unit]") {
  const std::string k80 = "Tesla K80 (one GK210)";
  Json file = {{"format", "scaletwin-calibration/1"},
               {"prediction_interval",
                {{"log_sd", 0.1},
                 {"method", "for people"},
                 {"folds", {{{"fold", "model!=vgg16"}, {"runs", 16}, {"mape", 17.2}, {"log_sd", 0.17}},
                            {{"fold", "nodes<=1"}, {"runs", 3}, {"mape", 2.0}}}}}},
               {"fit",
                {{"in_sample_mape", 5.2},
                 {"networks", {{k80, {"alexnet", "resnet50_v1"}}}},
                 {"scale", {{"tensorflow", {{"nodes", 8}, {"gpus", 64}}}}}}}};
  const sim::Calibration c = sim::parse_calibration(file, "c.json");
  CHECK(c.fitted_networks.at(k80) == std::set<std::string>{"alexnet", "resnet50_v1"});
  CHECK(c.fitted_scale.at("tensorflow").nodes == 8);
  CHECK(c.fitted_scale.at("tensorflow").gpus == 64);
  REQUIRE(c.cross_validation_folds.size() == 2);
  CHECK(c.cross_validation_folds[0].fold == "model!=vgg16");
  CHECK(c.cross_validation_folds[0].runs == 16);
  CHECK(c.cross_validation_folds[0].mape == 17.2);
  CHECK(c.cross_validation_folds[0].log_sd == 0.17);
  CHECK(c.cross_validation_folds[1].log_sd == 0.0);  // not recorded
  // The folds are the interval's evidence: written back with it (calibrate --model-factors-only keeps both).
  const sim::Calibration back = sim::parse_calibration(sim::calibration_to_json(c), "back.json");
  REQUIRE(back.cross_validation_folds.size() == 2);
  CHECK(back.cross_validation_folds[1].fold == "nodes<=1");
  CHECK(back.cross_validation_folds[1].mape == 2.0);
  CHECK(back.cross_validation_folds[0].log_sd == 0.17);
  file["fit"]["networks"][k80] = {"alexnet", 3};
  try {
    sim::parse_calibration(file, "c.json");
    FAIL("no InputError");
  } catch (const InputError& e) {
    CHECK(e.json_path() == "/fit/networks/" + k80 + "/1");
  }
  file["fit"]["networks"][k80] = {"alexnet"};
  file["fit"]["scale"]["tensorflow"]["nodes"] = 0;
  try {
    sim::parse_calibration(file, "c.json");
    FAIL("no InputError");
  } catch (const InputError& e) {
    CHECK(e.json_path() == "/fit/scale/tensorflow/nodes");
  }
  file["fit"]["scale"]["tensorflow"]["nodes"] = 8;
  file["prediction_interval"]["folds"][0].erase("mape");
  CHECK_THROWS_AS(sim::parse_calibration(file, "c.json"), InputError);
}
