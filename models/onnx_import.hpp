// ONNX import: a network exported by any framework (torch.onnx.export, tf2onnx, ...) read into a Model with Debian's
// libonnx (onnx/onnx_pb.h, shape inference), so that `--model net.onnx` and a scenario's "model": "net.onnx" work
// wherever a zoo name does.
//
//   ONNX operator                         → layer
//   Conv (group, strides, pads, dilations) → conv            Gemm (transB), MatMul [+ Add of a bias] → fc
//   BatchNormalization                    → batchnorm       Relu, Sigmoid, HardSwish → relu, sigmoid, hardswish
//   Mul(x, Sigmoid(x))                    → silu            Mul(x, s) (s: x's shape or N×C×1×1) → mul
//   MaxPool, AveragePool                  → maxpool, avgpool GlobalAveragePool, ReduceMean over H, W → global_avgpool
//   Add                                   → add             Concat (channels) → concat
//   Flatten (axis 1), Reshape to N × F    → flatten         Dropout → dropout
//   Softmax (the graph's output)          → dropped: the default loss (softmax cross-entropy) follows the logits
//   Identity, Squeeze / Unsqueeze of 1×1 spatial axes → no layer (the same values)
//
// The model's input is the graph's first input that is not an initializer (N×C×H×W); its classes are the logits'
// features. Weights are read by their shapes only (initializers, or graph inputs with a static shape): the model
// description needs no values. ONNX's shape inference runs on the graph (with the input override, if any), and every
// layer's shape as ModelBuilder infers it must equal ONNX's: a mapping that disagrees is an error at that node.
//
// Errors are InputErrors naming the file, the node's path (/graph/node/<i>), its name and op type: an operator
// outside the table, attributes outside what the layer supports (asymmetric padding, a Concat not along channels,
// a Reshape that is not a flatten), weights without a static shape. A classes override replaces the classifier's
// out_features, as for a zoo model.
#pragma once

#include <string>

#include "models/model_json.hpp"

namespace scaletwin::models {

// Whether `name` names an ONNX file (ends with ".onnx", any case).
bool is_onnx_path(const std::string& name);
Model load_onnx_model(const std::string& path, const ModelOverrides& overrides = {});

}  // namespace scaletwin::models
