// Reading and writing the model JSON format (see model_json.hpp and models/README.md).
//
// The reader turns each entry of "layers" into a Layer and hands it to ModelBuilder, which infers shapes and costs
// and reports impossible shapes at the same "/layers/<i>" path; the reader itself reports malformed fields at
// their own path ("/layers/<i>/kernel").
#include "models/model_json.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>

#include "core/error.hpp"
#include "models/builder.hpp"
#include "models/onnx_import.hpp"
#include "models/zoo.hpp"

namespace scaletwin::models {

namespace {

struct Pair {
  int64_t h = 0, w = 0;
};

bool is_int(const Json& v) { return v.is_number_integer() || v.is_number_unsigned(); }

// An integer >= min, or [height, width] of such integers; `fallback` when absent (required when nullopt).
Pair get_pair(const JsonObject& obj, const std::string& key, std::optional<Pair> fallback, int64_t min) {
  const Json* v = obj.get_any(key);
  if (v == nullptr) {
    if (!fallback) obj.fail(key, "this required field (it is missing)");
    return *fallback;
  }
  const std::string expected = fmt::format("an integer >= {} or [height, width] of such integers", min);
  auto value_ok = [min](const Json& x) { return is_int(x) && x.get<int64_t>() >= min; };
  if (value_ok(*v)) return Pair{v->get<int64_t>(), v->get<int64_t>()};
  if (v->is_array() && v->size() == 2 && value_ok((*v)[0]) && value_ok((*v)[1]))
    return Pair{(*v)[0].get<int64_t>(), (*v)[1].get<int64_t>()};
  obj.fail(key, fmt::format("{} (got {})", expected, v->dump()));
}

Json pair_json(int64_t h, int64_t w) { return h == w ? Json(h) : Json::array({h, w}); }

Shape read_input(const JsonObject& root) {
  const Json& a = root.get_array("input");
  if (a.size() != 3) root.fail("input", fmt::format("[C, H, W] (3 integers, got {} values)", a.size()));
  int64_t v[3] = {0, 0, 0};
  for (size_t i = 0; i < 3; ++i) {
    if (!is_int(a[i]) || a[i].get<int64_t>() < 1)
      throw InputError(root.file(), fmt::format("/input/{}", i),
                       fmt::format("a positive integer (got {})", a[i].dump()));
    v[i] = a[i].get<int64_t>();
  }
  return Shape{v[0], v[1], v[2]};
}

std::vector<int> read_inputs(const JsonObject& obj, const Model& so_far) {
  const int previous = static_cast<int>(so_far.layers.size()) - 1;
  if (!obj.has("inputs")) return {previous};
  const Json& a = obj.get_array("inputs");
  std::vector<int> out;
  for (size_t j = 0; j < a.size(); ++j) {
    const std::string path = fmt::format("{}/{}", obj.path_of("inputs"), j);
    if (!a[j].is_string()) throw InputError(obj.file(), path, fmt::format("a layer name, got {}", json_type_name(a[j])));
    const int from = so_far.index_of(a[j].get<std::string>());
    if (from < 0)
      throw InputError(obj.file(), path,
                       fmt::format("the name of an earlier layer or \"input\" (got \"{}\")", a[j].get<std::string>()));
    out.push_back(from);
  }
  return out;
}

void read_conv(const JsonObject& obj, Layer& l) {
  ConvParams& p = l.conv;
  p.out_channels = obj.get_int("out_channels", std::nullopt, 1);
  const Pair k = get_pair(obj, "kernel", std::nullopt, 1);
  const Pair s = get_pair(obj, "stride", Pair{1, 1}, 1);
  const Pair pad = get_pair(obj, "padding", Pair{0, 0}, 0);
  const Pair d = get_pair(obj, "dilation", Pair{1, 1}, 1);
  p.kernel_h = k.h, p.kernel_w = k.w, p.stride_h = s.h, p.stride_w = s.w;
  p.pad_h = pad.h, p.pad_w = pad.w, p.dilation_h = d.h, p.dilation_w = d.w;
  p.groups = obj.get_int("groups", 1, 1);
  p.bias = obj.get_bool("bias", false);
}

void read_pool(const JsonObject& obj, Layer& l) {
  PoolParams& p = l.pool;
  const Pair k = get_pair(obj, "kernel", std::nullopt, 1);
  const Pair s = get_pair(obj, "stride", k, 1);
  const Pair pad = get_pair(obj, "padding", Pair{0, 0}, 0);
  p.kernel_h = k.h, p.kernel_w = k.w, p.stride_h = s.h, p.stride_w = s.w, p.pad_h = pad.h, p.pad_w = pad.w;
  p.ceil_mode = obj.get_bool("ceil_mode", false);
  if (l.kind == LayerKind::kAvgPool) p.count_include_pad = obj.get_bool("count_include_pad", true);
}

void read_fc(const JsonObject& obj, Layer& l, int64_t classes) {
  const Json* v = obj.get_any("out_features");
  if (v != nullptr && v->is_string() && v->get<std::string>() == "classes") {
    l.fc.out_features = classes;
  } else if (v != nullptr && is_int(*v) && v->get<int64_t>() >= 1) {
    l.fc.out_features = v->get<int64_t>();
  } else {
    obj.fail("out_features", fmt::format("an integer >= 1 or the string \"classes\" (got {})",
                                         v == nullptr ? std::string("nothing") : v->dump()));
  }
  l.fc.bias = obj.get_bool("bias", true);
}

std::vector<std::string> layer_type_names() {
  std::vector<std::string> names;
  for (LayerKind k : all_layer_kinds())
    if (k != LayerKind::kInput) names.emplace_back(layer_kind_name(k));
  return names;
}

// The keys a layer of `kind` may have (models/README.md), so that a misspelt one is reported as unknown, with the
// nearest known key, before a required field would be reported as missing.
std::vector<std::string> layer_keys(LayerKind kind) {
  std::vector<std::string> keys = {"name", "type", "inputs", "comment"};
  auto more = [&keys](std::initializer_list<const char*> k) { keys.insert(keys.end(), k.begin(), k.end()); };
  switch (kind) {
    case LayerKind::kConv: more({"out_channels", "kernel", "stride", "padding", "dilation", "groups", "bias"}); break;
    case LayerKind::kMaxPool: more({"kernel", "stride", "padding", "ceil_mode"}); break;
    case LayerKind::kAvgPool: more({"kernel", "stride", "padding", "ceil_mode", "count_include_pad"}); break;
    case LayerKind::kFullyConnected: more({"out_features", "bias"}); break;
    case LayerKind::kBatchNorm: more({"eps", "momentum"}); break;
    case LayerKind::kDropout:
    case LayerKind::kDropPath: more({"rate"}); break;
    default: break;
  }
  return keys;
}

Layer read_layer(JsonObject& obj, const Model& so_far) {
  Layer l;
  l.name = obj.get_string("name");
  if (l.name.empty()) obj.fail("name", "a non-empty layer name");
  l.kind = *layer_kind_from_name(obj.get_enum("type", layer_type_names()));
  obj.expect_keys(layer_keys(l.kind));
  l.inputs = read_inputs(obj, so_far);
  switch (l.kind) {
    case LayerKind::kConv: read_conv(obj, l); break;
    case LayerKind::kMaxPool:
    case LayerKind::kAvgPool: read_pool(obj, l); break;
    case LayerKind::kFullyConnected: read_fc(obj, l, so_far.classes); break;
    case LayerKind::kBatchNorm:
      l.bn_eps = obj.get_number("eps", 1e-5);
      l.bn_momentum = obj.get_number("momentum", 0.1);
      break;
    case LayerKind::kDropout: l.dropout_rate = obj.get_number("rate", 0.5); break;
    case LayerKind::kDropPath: l.dropout_rate = obj.get_number("rate", std::nullopt); break;
    default: break;
  }
  obj.ignore("comment");
  obj.finish();
  return l;
}

}  // namespace

Model parse_model_json(const Json& doc, const std::string& origin, const ModelOverrides& overrides) {
  JsonObject root = JsonObject::root(doc, origin);
  if (root.has("format") && root.get_string("format") != kModelFormat)
    root.fail("format", fmt::format("\"{}\" (got \"{}\")", kModelFormat, root.get_string("format")));
  root.ignore("format");
  root.ignore("comment");
  const std::string name = root.get_string("name");
  Shape input = read_input(root);
  int64_t classes = root.get_int("classes", std::nullopt, 1);
  const Json& layers = root.get_array("layers");
  root.finish();
  if (overrides.input) input = *overrides.input;
  if (overrides.classes) classes = *overrides.classes;
  ModelBuilder b(name, input, classes, origin);
  for (size_t i = 0; i < layers.size(); ++i) {
    JsonObject obj(layers[i], origin, fmt::format("/layers/{}", i));
    b.add_layer(read_layer(obj, b.model()));
  }
  append_default_loss(b, origin, "/layers");
  return b.build();
}

void append_default_loss(ModelBuilder& b, const std::string& origin, const std::string& path) {
  for (const Layer& l : b.model().layers)
    if (l.kind == LayerKind::kSoftmaxCrossEntropy) return;
  const Layer& last = b.model().layers.back();
  if (b.model().layers.size() < 2 || last.out.elements() != b.classes())
    throw InputError(origin, path,
                     fmt::format("a softmax_cross_entropy layer, or a last layer with `classes` = {} outputs that the "
                                 "default loss (softmax cross-entropy) can follow (the last layer \"{}\" has {})",
                                 b.classes(), last.name, last.out.elements()));
  std::string name = "loss";
  while (b.model().index_of(name) >= 0) name += "_";
  b.softmax_cross_entropy(name, b.last());
}

Model load_model_file(const std::string& path, const ModelOverrides& overrides) {
  return parse_model_json(load_json_file(path), path, overrides);
}

Json layer_params_json(const Layer& l, bool is_classifier) {
  Json j = Json::object();
  switch (l.kind) {
    case LayerKind::kConv: {
      const ConvParams& p = l.conv;
      j["out_channels"] = p.out_channels;
      j["kernel"] = pair_json(p.kernel_h, p.kernel_w);
      if (p.stride_h != 1 || p.stride_w != 1) j["stride"] = pair_json(p.stride_h, p.stride_w);
      if (p.pad_h != 0 || p.pad_w != 0) j["padding"] = pair_json(p.pad_h, p.pad_w);
      if (p.dilation_h != 1 || p.dilation_w != 1) j["dilation"] = pair_json(p.dilation_h, p.dilation_w);
      if (p.groups != 1) j["groups"] = p.groups;
      if (p.bias) j["bias"] = true;
      break;
    }
    case LayerKind::kMaxPool:
    case LayerKind::kAvgPool: {
      const PoolParams& p = l.pool;
      j["kernel"] = pair_json(p.kernel_h, p.kernel_w);
      if (p.stride_h != p.kernel_h || p.stride_w != p.kernel_w) j["stride"] = pair_json(p.stride_h, p.stride_w);
      if (p.pad_h != 0 || p.pad_w != 0) j["padding"] = pair_json(p.pad_h, p.pad_w);
      if (p.ceil_mode) j["ceil_mode"] = true;
      if (l.kind == LayerKind::kAvgPool && !p.count_include_pad) j["count_include_pad"] = false;
      break;
    }
    case LayerKind::kFullyConnected:
      j["out_features"] = is_classifier ? Json("classes") : Json(l.fc.out_features);
      if (!l.fc.bias) j["bias"] = false;
      break;
    case LayerKind::kBatchNorm:
      if (l.bn_eps != 1e-5) j["eps"] = l.bn_eps;
      if (l.bn_momentum != 0.1) j["momentum"] = l.bn_momentum;
      break;
    case LayerKind::kDropout:
    case LayerKind::kDropPath: j["rate"] = l.dropout_rate; break;
    default: break;
  }
  return j;
}

Json model_to_json(const Model& model) {
  // A fully connected layer feeding the loss with `classes` outputs is the classifier: written as "classes" so
  // that a classes override follows it.
  std::vector<bool> classifier(model.layers.size(), false);
  for (const Layer& l : model.layers)
    if (l.kind == LayerKind::kSoftmaxCrossEntropy)
      for (int from : l.inputs) {
        const Layer& f = model.layers[static_cast<size_t>(from)];
        classifier[static_cast<size_t>(from)] =
            f.kind == LayerKind::kFullyConnected && f.fc.out_features == model.classes;
      }
  Json layers = Json::array();
  for (size_t i = 1; i < model.layers.size(); ++i) {
    const Layer& l = model.layers[i];
    Json j = {{"name", l.name}, {"type", layer_kind_name(l.kind)}};
    if (!(l.inputs.size() == 1 && l.inputs[0] == static_cast<int>(i) - 1)) {
      Json names = Json::array();
      for (int from : l.inputs) names.push_back(model.layers[static_cast<size_t>(from)].name);
      j["inputs"] = names;
    }
    j.update(layer_params_json(l, classifier[i]));
    layers.push_back(std::move(j));
  }
  return Json{{"format", kModelFormat},
              {"name", model.name},
              {"input", {model.input.c, model.input.h, model.input.w}},
              {"classes", model.classes},
              {"layers", layers}};
}

bool is_onnx_path(const std::string& name) {
  if (name.size() < 5) return false;
  std::string ext = name.substr(name.size() - 5);
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext == ".onnx";
}

Model load_model(const std::string& name_or_file, const ModelOverrides& overrides, const std::string& context_file,
                 const std::string& context_path) {
  if (is_builtin_model(name_or_file)) return make_builtin_model(name_or_file, overrides.input, overrides.classes);
  check_model_reference(name_or_file, context_file, context_path);
  if (!context_file.empty() && !std::filesystem::is_regular_file(name_or_file))
    throw InputError(context_file, context_path,
                     fmt::format("a built-in model ({}) or an existing model file (got \"{}\")",
                                 fmt::join(builtin_model_names(), ", "), name_or_file));
  if (is_onnx_path(name_or_file)) return load_onnx_model(name_or_file, overrides);
  return load_model_file(name_or_file, overrides);
}

void check_model_reference(const std::string& name_or_file, const std::string& context_file,
                           const std::string& context_path) {
  const bool looks_like_path = name_or_file.find('/') != std::string::npos || name_or_file.ends_with(".json") ||
                               is_onnx_path(name_or_file) || std::filesystem::exists(name_or_file);
  if (is_builtin_model(name_or_file) || looks_like_path) return;
  throw InputError(context_file, context_path,
                   fmt::format("a built-in model ({}) or the path of a model file (got \"{}\")",
                               fmt::join(builtin_model_names(), ", "), name_or_file));
}

}  // namespace scaletwin::models
