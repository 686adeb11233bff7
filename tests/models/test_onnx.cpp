// ONNX import (models/onnx_import.hpp): one file per operator, written by tests/models/make_onnx.py with Debian's
// python3-onnx in the test itself, each read into the layers it maps to; ResNet-50 built as ONNX gives the zoo's
// parameters and FLOPs; files with an operator or attribute scaletwin cannot map are InputErrors naming the file,
// the node, its op type; the scaletwin binary describes an ONNX file and exits 2 on a refused one.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <map>

#include "../cli/run_binary.hpp"
#include "core/error.hpp"
#include "core/json_reader.hpp"
#include "models/model_json.hpp"
#include "models/onnx_import.hpp"
#include "models/zoo.hpp"

using namespace scaletwin;
using namespace scaletwin::models;

namespace {

// Writes the named files into a fresh directory and returns it.
std::string make_files(const std::vector<std::string>& names) {
  const std::string dir =
      (std::filesystem::temp_directory_path() / fmt::format("scaletwin_test_onnx_{}", getpid())).string();
  std::filesystem::create_directories(dir);
  std::string cmd = fmt::format("/usr/bin/python3 {}/tests/models/make_onnx.py {}", SCALETWIN_SOURCE_DIR, dir);
  for (const std::string& n : names) cmd += " " + n;
  REQUIRE(std::system(cmd.c_str()) == 0);
  return dir;
}

std::vector<LayerKind> kinds(const Model& m) {
  std::vector<LayerKind> out;
  for (size_t i = 1; i < m.layers.size(); ++i) out.push_back(m.layers[i].kind);
  return out;
}

const Layer& only(const Model& m, LayerKind kind) {
  const Layer* found = nullptr;
  for (const Layer& l : m.layers)
    if (l.kind == kind) {
      REQUIRE(found == nullptr);
      found = &l;
    }
  REQUIRE(found != nullptr);
  return *found;
}

}  // namespace

TEST_CASE("onnx: each supported operator maps to its layer") {
  using K = LayerKind;
  // stem conv (3 → 8, 3x3 pad 1), the operator, then global average pool, flatten, fc, and the default loss.
  const std::vector<K> head = {K::kGlobalAvgPool, K::kFlatten, K::kFullyConnected, K::kSoftmaxCrossEntropy};
  const std::map<std::string, std::vector<K>> middle = {
      {"conv", {K::kConv}},          {"batchnorm", {K::kBatchNorm}}, {"relu", {K::kRelu}},
      {"sigmoid", {K::kSigmoid}},    {"silu", {K::kSilu}},           {"hardswish", {K::kHardSwish}},
      {"maxpool", {K::kMaxPool}},    {"avgpool", {K::kAvgPool}},     {"add", {K::kConv, K::kAdd}},
      {"concat", {K::kConv, K::kConcat}},                           {"dropout", {K::kDropout}},
      {"softmax", {}},
      {"mul", {K::kGlobalAvgPool, K::kConv, K::kSigmoid, K::kMul}},
  };
  std::vector<std::string> names;
  for (const auto& [name, _] : middle) names.push_back(name);
  const std::string dir = make_files(names);
  for (const auto& [name, want] : middle) {
    INFO(name);
    const Model m = load_onnx_model(fmt::format("{}/{}.onnx", dir, name));
    std::vector<K> expected = {K::kConv};
    expected.insert(expected.end(), want.begin(), want.end());
    expected.insert(expected.end(), head.begin(), head.end());
    CHECK(kinds(m) == expected);
    CHECK(m.input == Shape{3, 8, 8});
    CHECK(m.classes == 10);
    CHECK(m.layers[1].params == 8 * 3 * 9);  // the stem, without bias
  }
  const Model conv = load_onnx_model(dir + "/conv.onnx");
  const Layer& c = conv.layers[2];
  CHECK(c.conv == ConvParams{16, 3, 3, 2, 2, 1, 1, 1, 1, 4, true});
  CHECK(c.out == Shape{16, 4, 4});
  CHECK(c.params == 16 * 2 * 9 + 16);
  const Model pool = load_onnx_model(dir + "/maxpool.onnx");
  CHECK(only(pool, K::kMaxPool).pool == PoolParams{3, 3, 2, 2, 1, 1, false, true});
  CHECK(only(load_onnx_model(dir + "/avgpool.onnx"), K::kAvgPool).pool == PoolParams{2, 2, 2, 2, 0, 0, false, false});
  CHECK(only(load_onnx_model(dir + "/dropout.onnx"), K::kDropout).dropout_rate == Approx(0.25));
  CHECK(only(load_onnx_model(dir + "/batchnorm.onnx"), K::kBatchNorm).bn_momentum == Approx(0.1));
  const Model mul = load_onnx_model(dir + "/mul.onnx");
  const Layer& scale = only(mul, K::kMul);
  CHECK(mul.layers[static_cast<size_t>(scale.inputs[0])].out == Shape{8, 8, 8});
  CHECK(mul.layers[static_cast<size_t>(scale.inputs[1])].out == Shape{8, 1, 1});
}

TEST_CASE("onnx: Gemm, MatMul with its bias, Flatten and Reshape make the same classifier") {
  const std::string dir = make_files({"gemm", "matmul", "flatten", "reshape"});
  const Model gemm = load_onnx_model(dir + "/gemm.onnx");
  for (const char* name : {"matmul", "flatten", "reshape"}) {
    INFO(name);
    const Model m = load_onnx_model(fmt::format("{}/{}.onnx", dir, name));
    CHECK(kinds(m) == kinds(gemm));
    CHECK(m.params() == gemm.params());
    CHECK(m.fwd_flops_per_sample() == gemm.fwd_flops_per_sample());
    CHECK(m.bwd_flops_per_sample() == gemm.bwd_flops_per_sample());
  }
  CHECK(only(gemm, LayerKind::kFullyConnected).params == 8 * 10 + 10);
  // The overrides of a scenario: another input size and another class count.
  ModelOverrides o;
  o.input = Shape{3, 16, 16};
  o.classes = 4;
  const Model m = load_onnx_model(dir + "/gemm.onnx", o);
  CHECK(m.input == Shape{3, 16, 16});
  CHECK(m.classes == 4);
  CHECK(only(m, LayerKind::kFullyConnected).fc.out_features == 4);
  CHECK(m.layers[1].out == Shape{8, 16, 16});
}

TEST_CASE("onnx: ResNet-50 built as ONNX has the zoo's parameters and FLOPs, layer by layer") {
  const std::string dir = make_files({"resnet50"});
  const Model onnx = load_model(dir + "/resnet50.onnx");
  const Model zoo = make_builtin_model("resnet50");
  CHECK(onnx.params() == 25'557'032);
  CHECK(onnx.fwd_flops_per_sample() == zoo.fwd_flops_per_sample());
  CHECK(onnx.bwd_flops_per_sample() == zoo.bwd_flops_per_sample());
  // The same layers in the same order, but for ONNX's Flatten before the classifier (no parameters, no FLOPs).
  std::vector<LayerKind> zoo_kinds = kinds(zoo);
  zoo_kinds.insert(zoo_kinds.end() - 2, LayerKind::kFlatten);
  CHECK(kinds(onnx) == zoo_kinds);
  // The scaletwin binary: describe --model FILE.onnx gives the zoo's totals.
  const auto onnx_json = test::run_scaletwin("describe --model " + dir + "/resnet50.onnx --json -");
  const auto zoo_json = test::run_scaletwin("describe --model resnet50 --json -");
  REQUIRE(onnx_json.code == 0);
  const Json a = Json::parse(onnx_json.out), b = Json::parse(zoo_json.out);
  CHECK(a["params"] == b["params"]);
  CHECK(a["fwd_flops_per_sample"] == b["fwd_flops_per_sample"]);
  std::filesystem::remove_all(dir);
}

TEST_CASE("onnx: an operator or attribute it cannot map is an input error naming the file, node and op type") {
  const std::string dir = make_files({"unsupported", "asymmetric"});
  struct Case {
    const char* file;
    const char* words;
  };
  for (const Case& c : {Case{"unsupported", "op type LRN"}, Case{"asymmetric", "symmetric padding"}}) {
    INFO(c.file);
    const std::string path = fmt::format("{}/{}.onnx", dir, c.file);
    try {
      load_onnx_model(path);
      FAIL("no InputError");
    } catch (const InputError& e) {
      CHECK(e.file() == path);
      CHECK(e.json_path() == "/graph/node/1");
      CHECK(std::string(e.what()).find(c.words) != std::string::npos);
    }
    const auto r = test::run_scaletwin("describe --model " + path);
    CHECK(r.code == 2);
    CHECK(r.out.find(path) != std::string::npos);
    CHECK(r.out.find(c.words) != std::string::npos);
  }
  // Not an ONNX file at all, and a missing one.
  const std::string junk = dir + "/junk.onnx";
  std::ofstream(junk) << "not a protobuf";
  CHECK_THROWS_AS(load_onnx_model(junk), InputError);
  CHECK_THROWS_AS(load_model(dir + "/missing.onnx"), InputError);
  CHECK(is_onnx_path("net.ONNX"));
  CHECK_FALSE(is_onnx_path("net.json"));
}
