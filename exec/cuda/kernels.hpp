// The CUDA backend's own kernels, for what no library call does: element-wise helpers (fill, add for reducing
// received chunks, scale), the SGD update, dropout with the shared mask of exec/backend.hpp and the gradient of
// softmax cross-entropy, the casts of mixed precision to and from 2-byte floats, a sum of squares. Each launcher
// enqueues on `stream` and checks the launch. Plain C++ declarations, so that host code includes this header
// without nvcc.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace scaletwin::exec::cuda {

// The 2-byte floating-point formats of mixed precision: bf16 (8 exponent bits, fp32's range) and fp16 (5 exponent
// bits: beyond ±65504 a value becomes ±inf, which loss scaling detects).
enum class HalfType { kBf16, kFp16 };
// *result = Σ x[i]² over [0, n), accumulated in double on the device (result: one device double, overwritten); an
// inf or NaN anywhere makes it non-finite.
void launch_sum_squares(const float* x, int64_t n, double* result, cudaStream_t stream);
// dst[i] = src[i] rounded to the nearest `type` value (ties to even); dst holds n 2-byte values.
void launch_to_half(const float* src, void* dst, int64_t n, HalfType type, cudaStream_t stream);
// dst[i] = src[i] widened to fp32 (exact).
void launch_from_half(const void* src, float* dst, int64_t n, HalfType type, cudaStream_t stream);

void launch_fill(float* dst, float value, int64_t n, cudaStream_t stream);
void launch_add(float* dst, const float* src, int64_t n, cudaStream_t stream);    // dst += src
void launch_scale(float* dst, float factor, int64_t n, cudaStream_t stream);      // dst *= factor
// g' = g + wd·w; m = mu·m + g'; w = w − lr·m, rounded operation by operation (no fused multiply-add), so that it
// equals the CPU backend's loop bit for bit.
void launch_sgd_update(float* weights, const float* grads, float* momentum, int64_t n, float learning_rate,
                       float momentum_coefficient, float weight_decay, cudaStream_t stream);
// dst[i] = dropout_keep(seed, i / per_draw, rate) ? src[i] · scale : 0 (dropout: per_draw 1; drop_path: a sample's
// elements, one draw per sample)
void launch_dropout(const float* src, float* dst, int64_t n, int64_t per_draw, uint64_t seed, double rate, float scale,
                    cudaStream_t stream);
// Activation layers (exec/cpu/activation_kernels.cpp has the formulas): y = f(x), and dx = dy · f'(x) from the
// forward's input x and output y.
enum class Activation { kSigmoid, kSilu, kHardSwish };
void launch_activation(Activation f, const float* x, float* y, int64_t n, cudaStream_t stream);
void launch_activation_grad(Activation f, const float* x, const float* y, const float* dy, float* dx, int64_t n,
                            cudaStream_t stream);
// A channel scale over `planes` planes of `positions` values (NCHW: planes = batch · C, positions = H · W; a scale
// of the tensor's own shape: positions = 1): y[p][i] = x[p][i] · s[p]. The gradient: dx[p][i] = dy[p][i] · s[p]
// (dx may be null) and ds[p] = Σ_i dy[p][i] · x[p][i] (ds may be null), summed in fp32 per plane.
void launch_channel_scale(const float* x, const float* s, float* y, int64_t planes, int64_t positions,
                          cudaStream_t stream);
void launch_channel_scale_grad(const float* x, const float* s, const float* dy, float* dx, float* ds, int64_t planes,
                               int64_t positions, cudaStream_t stream);
// d_x[n][c] = (probs[n][c] − (c == labels[n])) · loss_scale
void launch_softmax_xent_grad(const float* probs, const float* labels, float* d_x, int64_t batch, int64_t classes,
                              float loss_scale, cudaStream_t stream);

}  // namespace scaletwin::exec::cuda
