// Names of layer kinds and classes, and the whole-model totals declared in model.hpp.
//
// The kind names are the "type" strings of the model JSON format (models/README.md); the class of a layer picks
// which efficiency of a calibration applies to it: convolutions, matrix products (fully connected), and everything
// else, which is bound by memory bandwidth.
#include "models/model.hpp"

#include "core/error.hpp"

namespace scaletwin::models {

const char* layer_kind_name(LayerKind kind) {
  switch (kind) {
    case LayerKind::kInput: return "input";
    case LayerKind::kConv: return "conv";
    case LayerKind::kBatchNorm: return "batchnorm";
    case LayerKind::kRelu: return "relu";
    case LayerKind::kMaxPool: return "maxpool";
    case LayerKind::kAvgPool: return "avgpool";
    case LayerKind::kGlobalAvgPool: return "global_avgpool";
    case LayerKind::kFullyConnected: return "fc";
    case LayerKind::kAdd: return "add";
    case LayerKind::kConcat: return "concat";
    case LayerKind::kDropout: return "dropout";
    case LayerKind::kFlatten: return "flatten";
    case LayerKind::kSoftmaxCrossEntropy: return "softmax_cross_entropy";
    case LayerKind::kSigmoid: return "sigmoid";
    case LayerKind::kSilu: return "silu";
    case LayerKind::kHardSwish: return "hardswish";
    case LayerKind::kMul: return "mul";
    case LayerKind::kDropPath: return "drop_path";
  }
  ST_ASSERT(false, "unknown LayerKind value");
}

LayerClass layer_class(LayerKind kind) {
  switch (kind) {
    case LayerKind::kConv: return LayerClass::kConv;
    case LayerKind::kFullyConnected: return LayerClass::kMatmul;
    default: return LayerClass::kMemory;
  }
}

const char* layer_class_name(LayerClass c) {
  switch (c) {
    case LayerClass::kConv: return "conv";
    case LayerClass::kMatmul: return "matmul";
    case LayerClass::kMemory: return "memory";
  }
  ST_ASSERT(false, "unknown LayerClass value");
}

const std::vector<LayerKind>& all_layer_kinds() {
  static const std::vector<LayerKind> kinds = {
      LayerKind::kInput,   LayerKind::kConv,           LayerKind::kBatchNorm, LayerKind::kRelu,
      LayerKind::kMaxPool, LayerKind::kAvgPool,        LayerKind::kGlobalAvgPool,
      LayerKind::kFullyConnected, LayerKind::kAdd,     LayerKind::kConcat,    LayerKind::kDropout,
      LayerKind::kFlatten, LayerKind::kSoftmaxCrossEntropy, LayerKind::kSigmoid, LayerKind::kSilu,
      LayerKind::kHardSwish, LayerKind::kMul, LayerKind::kDropPath,
  };
  return kinds;
}

std::optional<LayerKind> layer_kind_from_name(const std::string& name) {
  for (LayerKind k : all_layer_kinds())
    if (name == layer_kind_name(k)) return k;
  return std::nullopt;
}

int64_t Model::params() const {
  int64_t total = 0;
  for (const Layer& l : layers) total += l.params;
  return total;
}

double Model::fwd_flops_per_sample() const {
  double total = 0.0;
  for (const Layer& l : layers) total += l.fwd_flops;
  return total;
}

double Model::bwd_flops_per_sample() const {
  double total = 0.0;
  for (const Layer& l : layers) total += l.bwd_input_flops + l.bwd_weight_flops;
  return total;
}

int64_t Model::weight_bytes() const {
  int64_t total = 0;
  for (const Layer& l : layers) total += l.weight_bytes;
  return total;
}

int64_t Model::activation_bytes_per_sample() const {
  int64_t total = 0;
  for (const Layer& l : layers) total += l.activation_bytes;
  return total;
}

int Model::index_of(const std::string& layer_name) const {
  for (size_t i = 0; i < layers.size(); ++i)
    if (layers[i].name == layer_name) return static_cast<int>(i);
  return -1;
}

}  // namespace scaletwin::models
