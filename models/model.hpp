// The layer graph of a CNN: what both the simulator and the executor read about a model.
//
// A Model is a DAG of layers kept in topological order (every layer's inputs come before it). Shapes are per
// sample (C×H×W, batch excluded). After shape inference every layer carries its costs per sample:
//   - params:           trainable parameters (batch-norm scale and shift included, running statistics excluded)
//   - fwd_flops:        forward FLOPs, a multiply-add counts as 2
//   - bwd_input_flops:  FLOPs of the gradient with respect to the layer's input(s)
//   - bwd_weight_flops: FLOPs of the gradient with respect to its weights (0 for layers without weights)
//   - activation_bytes: bytes of the output activation (fp32)
//   - weight_bytes:     bytes of the trainable parameters (fp32)
// Layers are built either by the zoo (zoo.hpp) or from a model JSON file (model_json.hpp); both go through
// ModelBuilder, which runs shape inference and rejects impossible shapes with an InputError.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace scaletwin::models {

enum class LayerKind {
  kInput,
  kConv,
  kBatchNorm,
  kRelu,
  kMaxPool,
  kAvgPool,
  kGlobalAvgPool,
  kFullyConnected,
  kAdd,
  kConcat,
  kDropout,
  kFlatten,
  kSoftmaxCrossEntropy,
  kSigmoid,    // y = 1 / (1 + e^-x)
  kSilu,       // SiLU / swish: y = x · sigmoid(x)
  kHardSwish,  // y = x · min(max(x + 3, 0), 6) / 6 (MobileNetV3; ONNX HardSwish)
  kMul,        // y = x · s: two inputs, s of x's shape or C×1×1 (a channel scale: squeeze-and-excitation)
  kDropPath,   // stochastic depth / drop-connect: each sample's whole tensor kept with probability 1 − rate
};

// Classes of layers for the compute model: each has its own efficiency in a calibration.
enum class LayerClass { kConv, kMatmul, kMemory };

const char* layer_kind_name(LayerKind kind);  // "conv", "batchnorm", "relu", ... (the JSON "type" strings)
LayerClass layer_class(LayerKind kind);
const char* layer_class_name(LayerClass c);    // "conv", "matmul", "memory"
const std::vector<LayerKind>& all_layer_kinds();  // in declaration order
std::optional<LayerKind> layer_kind_from_name(const std::string& name);  // inverse of layer_kind_name

struct Shape {
  int64_t c = 0, h = 1, w = 1;
  int64_t elements() const { return c * h * w; }
  bool operator==(const Shape&) const = default;
};

struct ConvParams {
  int64_t out_channels = 0;
  int64_t kernel_h = 1, kernel_w = 1;
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_h = 0, pad_w = 0;
  int64_t dilation_h = 1, dilation_w = 1;
  int64_t groups = 1;
  bool bias = false;
  bool operator==(const ConvParams&) const = default;
};

struct PoolParams {
  int64_t kernel_h = 1, kernel_w = 1;
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_h = 0, pad_w = 0;
  bool ceil_mode = false;
  bool count_include_pad = true;  // average pooling only
  bool operator==(const PoolParams&) const = default;
};

struct FcParams {
  int64_t out_features = 0;
  bool bias = true;
  bool operator==(const FcParams&) const = default;
};

struct Layer {
  std::string name;
  LayerKind kind = LayerKind::kInput;
  std::vector<int> inputs;  // indices of earlier layers in Model::layers
  ConvParams conv;          // kConv
  PoolParams pool;          // kMaxPool, kAvgPool
  FcParams fc;              // kFullyConnected
  double dropout_rate = 0.0;  // kDropout: per element; kDropPath: per sample
  double bn_eps = 1e-5;
  double bn_momentum = 0.1;

  // Filled by shape inference.
  Shape out;
  int64_t params = 0;
  double fwd_flops = 0.0;
  double bwd_input_flops = 0.0;
  double bwd_weight_flops = 0.0;
  int64_t activation_bytes = 0;
  int64_t weight_bytes = 0;

  LayerClass layer_class() const { return models::layer_class(kind); }
  bool has_weights() const { return params > 0; }
  bool operator==(const Layer&) const = default;  // every field, costs included
};

struct Model {
  std::string name;
  Shape input;
  int64_t classes = 0;
  std::vector<Layer> layers;  // topological order; layers[0] is the input

  int64_t params() const;
  double fwd_flops_per_sample() const;
  double bwd_flops_per_sample() const;  // input-gradient + weight-gradient
  int64_t weight_bytes() const;
  int64_t activation_bytes_per_sample() const;  // sum over layers
  int index_of(const std::string& layer_name) const;  // -1 when absent
  bool operator==(const Model&) const = default;
};

}  // namespace scaletwin::models
