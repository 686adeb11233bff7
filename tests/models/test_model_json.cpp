// The model JSON format: round trip of every zoo model, a hand-written file with overrides, load_model's
// resolution, the describe output, and bad files, each giving an InputError with the file and the JSON path.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "models/describe.hpp"
#include "models/model_json.hpp"
#include "models/zoo.hpp"

using namespace scaletwin;
using namespace scaletwin::models;

namespace {

// Writes `text` to a fresh file in the temporary directory and returns its path.
std::string write_temp(const std::string& stem, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / ("scaletwin_test_models_" + stem + ".json");
  std::ofstream(path) << text;
  return path.string();
}

const char* kTiny = R"({
  "name": "tiny", "input": [1, 28, 28], "classes": 10,
  "layers": [
    {"name": "conv1", "type": "conv", "out_channels": 6, "kernel": 5, "padding": 2, "bias": true},
    {"name": "relu1", "type": "relu"},
    {"name": "pool1", "type": "maxpool", "kernel": 2},
    {"name": "side", "type": "conv", "inputs": ["pool1"], "out_channels": 6, "kernel": [1, 3], "padding": [0, 1]},
    {"name": "sum", "type": "add", "inputs": ["pool1", "side"]},
    {"name": "flat", "type": "flatten"},
    {"name": "fc", "type": "fc", "out_features": "classes"},
    {"name": "loss", "type": "softmax_cross_entropy"}
  ]
})";

}  // namespace

TEST_CASE("model_json: every zoo model round-trips to an identical Model") {
  for (const std::string& name : builtin_model_names()) {
    INFO(name);
    const Model m = make_builtin_model(name);
    const Json j = model_to_json(m);
    const Model back = parse_model_json(parse_json_text(j.dump(1), name + ".json"), name + ".json");
    CHECK(back == m);
    CHECK(model_to_json(back) == j);
    // Overrides follow the "classes" classifier of the written file as they do for the built-in model.
    const ModelOverrides mini{Shape{3, 84, 84}, 100};
    CHECK(parse_model_json(j, "x.json", mini) == make_builtin_model(name, mini.input, mini.classes));
  }
}

TEST_CASE("model_json: a hand-written file, its defaults and overrides") {
  const std::string path = write_temp("tiny", kTiny);
  const Model m = load_model(path);
  CHECK(m.name == "tiny");
  REQUIRE(m.layers.size() == 9);
  CHECK(m.layers[0].kind == LayerKind::kInput);
  CHECK(m.layers[3].pool.stride_h == 2);  // pool stride defaults to the kernel
  CHECK(m.layers[3].out == Shape{6, 14, 14});
  CHECK(m.layers[4].inputs == std::vector<int>{3});
  CHECK(m.layers[4].conv.kernel_h == 1);
  CHECK(m.layers[4].conv.kernel_w == 3);
  CHECK(m.layers[5].inputs == std::vector<int>{3, 4});
  CHECK(m.layers[6].inputs == std::vector<int>{5});  // default: the layer before
  CHECK(m.params() == (6 * 25 + 6) + 6 * 6 * 3 + (6 * 14 * 14 * 10 + 10));
  const Model big = load_model(path, ModelOverrides{Shape{1, 56, 56}, 3});
  CHECK(big.layers[7].params == 6 * 28 * 28 * 3 + 3);
  CHECK(load_model_file(path) == m);
}

TEST_CASE("model_json: load_model resolves built-in names, files, and rejects the rest") {
  CHECK(load_model("lenet5").params() == 61'706);
  CHECK(load_model("resnet18", ModelOverrides{std::nullopt, 10}).classes == 10);
  try {
    load_model("lenet6", {}, "scenario.json", "/model");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.file() == "scenario.json");
    CHECK(e.json_path() == "/model");
    CHECK(std::string(e.what()).find("resnet152") != std::string::npos);
  }
  try {
    load_model("/nonexistent/model.json");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.file() == "/nonexistent/model.json");
  }
}

TEST_CASE("model_json: bad model files name the file, the JSON path and the expectation") {
  struct Case {
    const char* stem;
    std::string from, to;  // replace `from` in kTiny by `to`
    const char* path;
    const char* words;
  };
  const std::vector<Case> cases = {
      {"unknown_key", R"("kernel": 2})", R"("kernel": 2, "kernal": 3})", "/layers/2/kernal", "unknown key"},
      {"unknown_type", R"("type": "relu")", R"("type": "gelu")", "/layers/1/type", "one of"},
      {"kernel_too_big", R"("kernel": 5, "padding": 2)", R"("kernel": 33, "padding": 2)", "/layers/0",
       "padded input"},
      {"add_mismatch", R"("out_channels": 6, "kernel": [1, 3])", R"("out_channels": 7, "kernel": [1, 3])",
       "/layers/4", "same shape"},
      {"groups", R"("out_channels": 6, "kernel": [1, 3])", R"("out_channels": 6, "groups": 4, "kernel": [1, 3])",
       "/layers/3", "groups"},
      {"unknown_input", R"("inputs": ["pool1", "side"])", R"("inputs": ["pool1", "sider"])", "/layers/4/inputs/1",
       "earlier layer"},
      {"later_input", R"("inputs": ["pool1"])", R"("inputs": ["sum"])", "/layers/3/inputs/0", "earlier layer"},
      {"dangling", R"("inputs": ["pool1", "side"])", R"("inputs": ["pool1", "pool1"])", "/layers/3",
       "never used"},
      {"zero_input", R"("input": [1, 28, 28])", R"("input": [1, 0, 28])", "/input/1", "positive integer"},
      {"negative_pad", R"("padding": [0, 1])", R"("padding": [0, -1])", "/layers/3/padding", "integer >= 0"},
      {"bad_kernel", R"("kernel": 2})", R"("kernel": "2"})", "/layers/2/kernel", "integer >= 1"},
      {"bad_classes", R"("classes": 10)", R"("classes": 0)", "/classes", "integer >= 1"},
      {"missing_name", R"({"name": "relu1", )", "{", "/layers/1/name", "required"},
      {"duplicate_name", R"("name": "relu1")", R"("name": "conv1")", "/layers/1/name", "not used before"},
      {"fixed_classifier", R"("out_features": "classes")", R"("out_features": 12)", "/layers/7", "classes"},
      {"top_level_key", R"("classes": 10,)", R"("classes": 10, "clases": 10,)", "/clases", "unknown key"},
      {"input_layer", R"("type": "relu")", R"("type": "input")", "/layers/1/type", "one of"},
      // A misspelt required key is an unknown key near the right one, not a missing one.
      {"misspelt_required", R"("kernel": 2})", R"("kernal": 2})", "/layers/2/kernal", "did you mean \"kernel\""},
      {"misspelt_type", R"("type": "relu")", R"("type": "rellu")", "/layers/1/type", "did you mean \"relu\""},
      {"no_loss_wrong_width", R"({"name": "loss", "type": "softmax_cross_entropy"})", R"({"name": "fc2", "type": "fc", "out_features": 7})",
       "/layers", "softmax_cross_entropy layer, or a last layer"},
      {"mul_shapes", R"({"name": "sum", "type": "add", "inputs": ["pool1", "side"]})",
       R"({"name": "sum", "type": "mul", "inputs": ["pool1", "conv1"]})", "/layers/4", "one scale per channel"},
      {"mul_three", R"({"name": "sum", "type": "add", "inputs": ["pool1", "side"]})",
       R"({"name": "sum", "type": "mul", "inputs": ["pool1", "side", "pool1"]})", "/layers/4", "exactly 2 inputs"},
      {"drop_path_rate", R"({"name": "relu1", "type": "relu"})", R"({"name": "relu1", "type": "drop_path"})",
       "/layers/1/rate", "required"},
  };
  for (const Case& c : cases) {
    INFO(c.stem);
    std::string text = kTiny;
    const size_t at = text.find(c.from);
    REQUIRE(at != std::string::npos);
    text.replace(at, c.from.size(), c.to);
    const std::string path = write_temp(c.stem, text);
    try {
      load_model(path);
      FAIL("no InputError");
    } catch (const InputError& e) {
      const std::string msg = e.what();
      INFO(msg);
      CHECK(e.file() == path);
      CHECK(e.json_path() == c.path);
      CHECK(msg.find(path) != std::string::npos);
      CHECK(msg.find(c.path) != std::string::npos);
      CHECK(msg.find(c.words) != std::string::npos);
    }
  }
  const std::string syntax = write_temp("syntax", "{\"name\": \"x\",\n \"input\": [1, 2, 3]\n");
  try {
    load_model(syntax);
    FAIL("no InputError");
  } catch (const InputError& e) {
    CHECK(e.file() == syntax);
    CHECK(std::string(e.what()).find("line") != std::string::npos);
  }
}

TEST_CASE("model_json: a model without a loss layer gets the default loss after its classifier") {
  std::string text = kTiny;
  const std::string loss = R"(,
    {"name": "loss", "type": "softmax_cross_entropy"})";
  text.replace(text.find(loss), loss.size(), "");
  const Model m = load_model(write_temp("no_loss", text));
  CHECK(m.layers.back().kind == LayerKind::kSoftmaxCrossEntropy);
  CHECK(m.layers.back().name == "loss");
  CHECK(m.layers.back().inputs == std::vector<int>{m.index_of("fc")});
  CHECK(m == load_model(write_temp("with_loss", kTiny)));
}

TEST_CASE("model_json: squeeze-and-excitation layers in a file: sigmoid, silu, hardswish, mul, drop_path") {
  const std::string path = write_temp("se", R"({
  "name": "se", "input": [8, 6, 6], "classes": 3,
  "layers": [
    {"name": "c", "type": "conv", "out_channels": 8, "kernel": 3, "padding": 1, "groups": 8},
    {"name": "act", "type": "silu"},
    {"name": "pool", "type": "global_avgpool"},
    {"name": "fc1", "type": "conv", "out_channels": 2, "kernel": 1, "bias": true},
    {"name": "hs", "type": "hardswish"},
    {"name": "fc2", "type": "conv", "out_channels": 8, "kernel": 1, "bias": true},
    {"name": "gate", "type": "sigmoid"},
    {"name": "scale", "type": "mul", "inputs": ["act", "gate"]},
    {"name": "drop", "type": "drop_path", "rate": 0.1},
    {"name": "sum", "type": "add", "inputs": ["drop", "input"]},
    {"name": "gap", "type": "global_avgpool"},
    {"name": "fc", "type": "fc", "out_features": "classes"}
  ]
})");
  const Model m = load_model(path);
  CHECK(m.layers[m.index_of("c")].params == 8 * 9);  // depthwise: one 3x3 filter per channel
  const Layer& scale = m.layers[m.index_of("scale")];
  CHECK(scale.out == Shape{8, 6, 6});
  CHECK(scale.fwd_flops == 288.0);
  CHECK(scale.bwd_input_flops == 3.0 * 288);  // dx, and ds summed over the 36 positions
  CHECK(m.layers[m.index_of("drop")].dropout_rate == 0.1);
  CHECK(m.layers.back().kind == LayerKind::kSoftmaxCrossEntropy);  // the default loss
  CHECK(parse_model_json(model_to_json(m), "round trip") == m);
}

TEST_CASE("describe: JSON fields and the table of a model") {
  const Model m = make_builtin_model("lenet5");
  const Json j = describe_model_json(m);
  CHECK(j.at("model") == "lenet5");
  CHECK(j.at("params") == 61'706);
  CHECK(j.at("fwd_flops_per_sample").get<double>() == m.fwd_flops_per_sample());
  REQUIRE(j.at("layers").size() == m.layers.size());
  const Json& conv1 = j.at("layers").at(1);
  CHECK(conv1.at("name") == "conv1");
  CHECK(conv1.at("type") == "conv");
  CHECK(conv1.at("class") == "conv");
  CHECK(conv1.at("output") == Json::array({6, 28, 28}));
  CHECK(conv1.at("params") == 156);
  CHECK(conv1.at("fwd_flops").get<double>() == 2.0 * 6 * 28 * 28 * 25 + 6 * 28 * 28);
  const std::string table = format_model_table(m);
  CHECK(table.find("fc3") != std::string::npos);
  CHECK(table.find("61,706") != std::string::npos);
  CHECK(group_thousands(25'557'032) == "25,557,032");
  CHECK(group_thousands(999) == "999");
  CHECK(group_thousands(-1000) == "-1,000");
}
