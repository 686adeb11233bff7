// ModelBuilder: appends layers with their parameters, infers shapes and costs at once (inference.cpp), and checks
// the graph when the model is built (unique names, every output used).
#include "models/builder.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace scaletwin::models {

namespace {

std::string origin_or_builtin(std::string origin, const std::string& name) {
  return origin.empty() ? fmt::format("built-in model {}", name) : origin;
}

// Every layer but the last must feed a later one; names must be unique.
void check_graph(const Model& model, const std::string& origin) {
  std::vector<bool> used(model.layers.size(), false);
  for (const Layer& l : model.layers)
    for (int from : l.inputs) used[static_cast<size_t>(from)] = true;
  for (size_t i = 0; i + 1 < model.layers.size(); ++i)
    if (!used[i])
      throw InputError(origin, layer_json_path(static_cast<int>(i)),
                       fmt::format("layer \"{}\" to feed a later layer (its output is never used; only the last "
                                   "layer may be a sink)",
                                   model.layers[i].name));
  if (model.layers.size() < 2) throw InputError(origin, "/layers", "at least one layer after the input");
}

}  // namespace

ModelBuilder::ModelBuilder(std::string name, Shape input, int64_t classes, std::string origin)
    : origin_(origin_or_builtin(std::move(origin), name)) {
  if (name.empty()) throw InputError(origin_, "/name", "a non-empty model name");
  model_.name = std::move(name);
  model_.input = input;
  model_.classes = classes;
  Layer in;
  in.name = "input";
  in.kind = LayerKind::kInput;
  model_.layers.push_back(in);
  infer_layer(model_, 0, origin_);
}

const Shape& ModelBuilder::shape(int layer) const {
  ST_ASSERT(layer >= 0 && layer <= last(), "layer index out of range");
  return model_.layers[static_cast<size_t>(layer)].out;
}

int ModelBuilder::add_layer(Layer layer) {
  const int index = last() + 1;
  if (model_.index_of(layer.name) >= 0)
    throw InputError(origin_, layer_json_path(index) + "/name",
                     fmt::format("a layer name not used before (\"{}\" is layer {} already)", layer.name,
                                 layer_json_path(model_.index_of(layer.name))));
  model_.layers.push_back(std::move(layer));
  try {
    infer_layer(model_, index, origin_);
  } catch (...) {
    model_.layers.pop_back();
    throw;
  }
  return index;
}

namespace {
Layer make_layer(const std::string& name, LayerKind kind, std::vector<int> inputs) {
  Layer l;
  l.name = name;
  l.kind = kind;
  l.inputs = std::move(inputs);
  return l;
}
}  // namespace

int ModelBuilder::conv(const std::string& name, int from, const ConvParams& p) {
  Layer l = make_layer(name, LayerKind::kConv, {from});
  l.conv = p;
  return add_layer(std::move(l));
}

int ModelBuilder::conv(const std::string& name, int from, int64_t out_channels, int64_t kernel, int64_t stride,
                       int64_t pad, bool bias) {
  ConvParams p;
  p.out_channels = out_channels;
  p.kernel_h = p.kernel_w = kernel;
  p.stride_h = p.stride_w = stride;
  p.pad_h = p.pad_w = pad;
  p.bias = bias;
  return conv(name, from, p);
}

int ModelBuilder::batchnorm(const std::string& name, int from, double eps, double momentum) {
  Layer l = make_layer(name, LayerKind::kBatchNorm, {from});
  l.bn_eps = eps;
  l.bn_momentum = momentum;
  return add_layer(std::move(l));
}

int ModelBuilder::relu(const std::string& name, int from) {
  return add_layer(make_layer(name, LayerKind::kRelu, {from}));
}

int ModelBuilder::maxpool(const std::string& name, int from, const PoolParams& p) {
  Layer l = make_layer(name, LayerKind::kMaxPool, {from});
  l.pool = p;
  return add_layer(std::move(l));
}

int ModelBuilder::maxpool(const std::string& name, int from, int64_t kernel, int64_t stride, int64_t pad,
                          bool ceil_mode) {
  PoolParams p;
  p.kernel_h = p.kernel_w = kernel;
  p.stride_h = p.stride_w = stride;
  p.pad_h = p.pad_w = pad;
  p.ceil_mode = ceil_mode;
  return maxpool(name, from, p);
}

int ModelBuilder::avgpool(const std::string& name, int from, const PoolParams& p) {
  Layer l = make_layer(name, LayerKind::kAvgPool, {from});
  l.pool = p;
  return add_layer(std::move(l));
}

int ModelBuilder::avgpool(const std::string& name, int from, int64_t kernel, int64_t stride, int64_t pad,
                          bool ceil_mode, bool count_include_pad) {
  PoolParams p;
  p.kernel_h = p.kernel_w = kernel;
  p.stride_h = p.stride_w = stride;
  p.pad_h = p.pad_w = pad;
  p.ceil_mode = ceil_mode;
  p.count_include_pad = count_include_pad;
  return avgpool(name, from, p);
}

int ModelBuilder::global_avgpool(const std::string& name, int from) {
  return add_layer(make_layer(name, LayerKind::kGlobalAvgPool, {from}));
}

int ModelBuilder::fc(const std::string& name, int from, int64_t out_features, bool bias) {
  Layer l = make_layer(name, LayerKind::kFullyConnected, {from});
  l.fc.out_features = out_features;
  l.fc.bias = bias;
  return add_layer(std::move(l));
}

int ModelBuilder::add(const std::string& name, const std::vector<int>& from) {
  return add_layer(make_layer(name, LayerKind::kAdd, from));
}

int ModelBuilder::concat(const std::string& name, const std::vector<int>& from) {
  return add_layer(make_layer(name, LayerKind::kConcat, from));
}

int ModelBuilder::dropout(const std::string& name, int from, double rate) {
  Layer l = make_layer(name, LayerKind::kDropout, {from});
  l.dropout_rate = rate;
  return add_layer(std::move(l));
}

int ModelBuilder::flatten(const std::string& name, int from) {
  return add_layer(make_layer(name, LayerKind::kFlatten, {from}));
}

int ModelBuilder::softmax_cross_entropy(const std::string& name, int from) {
  return add_layer(make_layer(name, LayerKind::kSoftmaxCrossEntropy, {from}));
}

int ModelBuilder::sigmoid(const std::string& name, int from) {
  return add_layer(make_layer(name, LayerKind::kSigmoid, {from}));
}

int ModelBuilder::silu(const std::string& name, int from) { return add_layer(make_layer(name, LayerKind::kSilu, {from})); }

int ModelBuilder::hardswish(const std::string& name, int from) {
  return add_layer(make_layer(name, LayerKind::kHardSwish, {from}));
}

int ModelBuilder::mul(const std::string& name, int from, int scale) {
  return add_layer(make_layer(name, LayerKind::kMul, {from, scale}));
}

int ModelBuilder::drop_path(const std::string& name, int from, double rate) {
  Layer l = make_layer(name, LayerKind::kDropPath, {from});
  l.dropout_rate = rate;
  return add_layer(std::move(l));
}

Model ModelBuilder::build() const {
  check_graph(model_, origin_);
  return model_;
}

void infer_model(Model& model, const std::string& origin) {
  ST_ASSERT(!model.layers.empty(), "a model has at least its input layer");
  for (size_t i = 0; i < model.layers.size(); ++i) {
    for (size_t j = 0; j < i; ++j)
      if (model.layers[j].name == model.layers[i].name)
        throw InputError(origin, layer_json_path(static_cast<int>(i)) + "/name",
                         fmt::format("a layer name not used before (\"{}\" is layer {} already)",
                                     model.layers[i].name, layer_json_path(static_cast<int>(j))));
    infer_layer(model, static_cast<int>(i), origin);
  }
  check_graph(model, origin);
}

}  // namespace scaletwin::models
