// Host-side set-up of the CUDA backend's library calls, as plain structs: what the cuDNN tensor, filter,
// convolution and pooling descriptors and the cuBLAS GEMMs of a layer are given, computed from a LayerDesc before
// any CUDA call, so that it can be tested without a GPU. Also the convolution workspace policy.
//
// Conventions (the Backend contract of exec/backend.hpp): NCHW fully packed fp32 tensors; conv weights
// K × C/groups × R × S then bias[K]; fc weights W[out][in] (row-major) then bias[out]. cuDNN's legacy API takes
// int dimensions and symmetric padding: a layer that needs more (a tensor over 2^31 − 1 elements, ceil-mode
// pooling that pads more on the right than on the left) throws InputError naming the layer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "exec/backend.hpp"

namespace scaletwin::exec::cuda {

struct TensorDims {
  int n = 1, c = 1, h = 1, w = 1;
  int stride_n = 1, stride_c = 1, stride_h = 1, stride_w = 1;
  int64_t elements() const { return int64_t{n} * c * h * w; }
  bool operator==(const TensorDims&) const = default;
};
// A packed NCHW tensor (InputError, naming `layer`, past int range).
TensorDims packed_nchw(int64_t n, int64_t c, int64_t h, int64_t w, const std::string& layer);

struct FilterDims {
  int k = 1, c = 1, r = 1, s = 1;  // c: input channels per group
  bool operator==(const FilterDims&) const = default;
};

struct ConvPlan {
  TensorDims x, y, bias;  // bias: 1 × K × 1 × 1 (unused without bias)
  FilterDims w;
  int pad_h = 0, pad_w = 0, stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1, groups = 1;
  bool has_bias = false;
  int64_t weight_count = 0;  // K · C/groups · R · S (the bias follows)
};
ConvPlan plan_conv(const LayerDesc& desc);

// What a convolution's algorithm choice depends on: its tensors' dimensions and strides, the filter, padding,
// stride, dilation, groups and whether it trains (backward algorithms too); not its name or its bias. The kernels
// of one backend with equal keys share one search (cuDNN's heuristics, or the timed runs of benchmark_algorithms),
// so ResNet-50's 16 bottleneck blocks search their few distinct shapes once each.
using ConvShapeKey = std::vector<int>;
ConvShapeKey conv_shape_key(const ConvPlan& plan, bool training);

enum class PoolMode { kMax, kAverageIncludePad, kAverageExcludePad };
struct PoolPlan {
  TensorDims x, y;
  PoolMode mode = PoolMode::kMax;
  int window_h = 1, window_w = 1, pad_h = 0, pad_w = 0, stride_h = 1, stride_w = 1;
};
PoolPlan plan_pool(const LayerDesc& desc);  // max, average and global average pooling

struct BatchNormPlan {
  TensorDims x, param;  // param: 1 × C × 1 × 1 (gamma, beta, means, variances)
  double eps = 1e-5;
  double momentum = 0.1;        // running = (1 − momentum) · running + momentum · batch (cuDNN's exponentialAverageFactor)
  int64_t count = 0;            // N · H · W: values per channel (cuDNN keeps the unbiased variance, as PyTorch)
};
BatchNormPlan plan_batchnorm(const LayerDesc& desc);

// The three GEMMs of a fully connected layer, in cuBLAS's column-major terms. With X (N × in), W (out × in) and
// Y (N × out) row-major, column-major views are X^T (in × N), W^T (in × out), Y^T (out × N):
//   forward      Y^T  = W · X^T        : gemm(op_a = T, op_b = N, m = out, n = N,   k = in,  A = W, lda = in,
//                                                                           B = X, ldb = in, C = Y, ldc = out)
//   backward-in  dX^T = W^T · dY^T     : gemm(N, N, m = in,  n = N,   k = out, A = W, lda = in, B = dY, ldb = out,
//                                                                           C = dX, ldc = in)
//   backward-w   dW^T = X^T · dY       : gemm(N, T, m = in,  n = out, k = N,   A = X, lda = in, B = dY, ldb = out,
//                                                                           C = dW, ldc = in)
//   bias         db = dY^T · 1         : gemv over Y's columns
struct GemmCall {
  bool transpose_a = false, transpose_b = false;
  int m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0;
  bool operator==(const GemmCall&) const = default;
};
struct FcPlan {
  int batch = 0, in = 0, out = 0;
  bool has_bias = false;
  GemmCall forward, backward_input, backward_weight;
};
FcPlan plan_fc(const LayerDesc& desc);

// Mixed precision (CudaPrecision kBf16, kFp16): the 2-byte copies a convolution or GEMM works on, in one scratch
// region that every kernel of a backend shares (its one stream runs one op at a time): the op's input (forward,
// backward-weight) or input gradient (backward-input) at 0, the weights or weight gradient at w_offset, the output
// or output gradient at y_offset; each part starts on a 256-byte boundary, as cuDNN and cuBLAS prefer.
struct HalfScratchLayout {
  int64_t w_offset = 0, y_offset = 0, elements = 0;  // in 2-byte elements
  bool operator==(const HalfScratchLayout&) const = default;
};
HalfScratchLayout half_scratch_layout(int64_t x_elements, int64_t w_elements, int64_t y_elements);
HalfScratchLayout half_scratch_layout(const ConvPlan& plan);  // x, K·C/groups·R·S, y
HalfScratchLayout half_scratch_layout(const FcPlan& plan);    // N·in, out·in, N·out

// What the shared half scratch holds at the running kernel's y_offset, so that a layer's output gradient is cast
// once per step, not twice: the Backend contract (backend.hpp) calls a layer's backward_weight and then its
// backward_input with the same LayerArgs and no other kernel's op between them, and neither writes over y_offset
// (they write x or dx at 0 and w or dw at w_offset). Every op of a kernel calls begin() first; another kernel's op,
// or any forward, in between makes the next one cast again.
class HalfScratchState {
 public:
  // An op of `kernel` starts that needs the 2-byte copy of `dy` (null: none). True when the scratch holds it
  // already: the same kernel's op just before this one cast that same dy.
  bool begin(const void* kernel, const void* dy) {
    const bool held = dy != nullptr && kernel == kernel_ && dy == dy_;
    kernel_ = kernel;
    dy_ = nullptr;
    return held;
  }
  // The running op leaves the copy of `dy` at its kernel's y_offset.
  void holds(const void* dy) { dy_ = dy; }

 private:
  const void* kernel_ = nullptr;
  const void* dy_ = nullptr;
};

// Workspace policy for convolutions: each convolution direction picks, among the algorithms cuDNN offers (in its
// order of preference: heuristics or measured time), the first that succeeded and needs at most the limit; when
// none fits, the one that needs least. All kernels of a backend share one workspace, sized to the largest choice.
struct AlgorithmOption {
  int algorithm = 0;
  int64_t workspace_bytes = 0;
  bool ok = true;  // cuDNN's status for it was success
  int math = 0;    // the cudnnMathType_t cuDNN evaluated it under: the descriptor must run it under the same
};
// The limit: options.workspace_limit_bytes when set, else min(1 GiB, free device memory / 8) (at least 16 MiB).
int64_t workspace_limit_bytes(int64_t requested_bytes, int64_t free_device_bytes);
// Index into `options` of the choice (ST_ASSERT: at least one ok option).
size_t choose_algorithm(const std::vector<AlgorithmOption>& options, int64_t limit_bytes);

}  // namespace scaletwin::exec::cuda
