// Support for the CUDA backend's tests: a naive reference Backend (host loops, double accumulation: the layer
// semantics of exec/backend.hpp written out plainly), one case per layer kind and option the CUDA backend
// supports, a runner that puts a layer through forward and backward on any Backend with the same data, and the
// visible skip of GPU tests on a machine without a GPU.
//
// The reference exists so that the GPU tests also run where oneDNN is absent (the executor-only build of
// scripts/gpu-check); test_cuda_host_reference.cpp holds it equal to the CPU (oneDNN) backend, here, without a GPU.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "exec/backend.hpp"

namespace scaletwin::exec::cuda_testing {

std::unique_ptr<Backend> make_reference_backend();

struct LayerCase {
  std::string title;
  models::Layer layer;
  std::vector<models::Shape> in_shapes;
  models::Shape out;
  int64_t batch = 2;
  bool training = true;
};
// Every layer kind: convolutions (bias, stride, padding, groups, dilation, 1×1, 7×7), fc with and without bias,
// batch norm (training and inference), relu, max / average (padding counted or not) / global average pooling,
// add of three inputs, concat, flatten, dropout (training and inference), softmax cross-entropy.
std::vector<LayerCase> layer_cases();

struct LayerResult {
  std::vector<float> output, d_weights, state;
  std::vector<std::vector<float>> d_inputs;
};
// Inputs, weights, state, labels and the output gradient are drawn from `seed` (the same on every backend); runs
// forward and, when training, backward_weight then backward_input; returns what the kernels wrote.
LayerResult run_layer(Backend& backend, const LayerCase& c, uint64_t seed);

// ‖a − b‖₂ / ‖b‖₂ (‖a − b‖₂ when b is zero); sizes must agree.
double relative_error(const std::vector<float>& a, const std::vector<float>& b);
// Largest relative error over every field of two results (ST_ASSERT on different shapes).
double max_relative_error(const LayerResult& a, const LayerResult& b);

// For GPU tests: without a usable CUDA device, prints "SKIPPED: no CUDA device (why)" and exits with
// kSkipReturnCode, which CTest's SKIP_RETURN_CODE reports as skipped.
inline constexpr int kSkipReturnCode = 77;
void skip_without_gpu();

}  // namespace scaletwin::exec::cuda_testing
