// The CUDA backend's own kernels (see kernels.hpp): grid-stride loops over 64-bit indices.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "exec/cuda/cuda_check.hpp"
#include "exec/cuda/dropout_hash.hpp"
#include "exec/cuda/kernels.hpp"

namespace scaletwin::exec::cuda {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 65535 * 32 ? (blocks > 0 ? blocks : 1) : 65535 * 32);
}

#define ST_GRID_LOOP(i, n) \
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < (n); i += int64_t{blockDim.x} * gridDim.x)

__global__ void fill_kernel(float* dst, float value, int64_t n) {
  ST_GRID_LOOP(i, n) dst[i] = value;
}
__global__ void add_kernel(float* dst, const float* src, int64_t n) {
  ST_GRID_LOOP(i, n) dst[i] = __fadd_rn(dst[i], src[i]);
}
__global__ void scale_kernel(float* dst, float factor, int64_t n) {
  ST_GRID_LOOP(i, n) dst[i] = __fmul_rn(dst[i], factor);
}
__global__ void sgd_kernel(float* w, const float* g, float* m, int64_t n, float lr, float mu, float wd) {
  ST_GRID_LOOP(i, n) {
    const float gi = __fadd_rn(g[i], __fmul_rn(wd, w[i]));
    const float mi = __fadd_rn(__fmul_rn(mu, m[i]), gi);
    m[i] = mi;
    w[i] = __fsub_rn(w[i], __fmul_rn(lr, mi));
  }
}
__global__ void dropout_kernel(const float* src, float* dst, int64_t n, int64_t per_draw, uint64_t seed, double rate,
                               float scale) {
  ST_GRID_LOOP(i, n) {
    const bool keep = dropout_keep_hd(seed, static_cast<uint64_t>(i / per_draw), rate);
    dst[i] = keep ? __fmul_rn(src[i], scale) : 0.0f;
  }
}
__global__ void xent_grad_kernel(const float* probs, const float* labels, float* d_x, int64_t batch, int64_t classes,
                                 float loss_scale) {
  ST_GRID_LOOP(i, batch * classes) {
    const int64_t sample = i / classes, c = i % classes;
    const float target = static_cast<int64_t>(labels[sample]) == c ? 1.0f : 0.0f;
    d_x[i] = __fmul_rn(__fsub_rn(probs[i], target), loss_scale);
  }
}

// Each block sums its grid-stride share in double, reduces it in shared memory, and adds it to *result.
__global__ void sum_squares_kernel(const float* x, int64_t n, double* result) {
  __shared__ double partial[kThreads];
  double s = 0.0;
  ST_GRID_LOOP(i, n) s += static_cast<double>(x[i]) * static_cast<double>(x[i]);
  partial[threadIdx.x] = s;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(result, partial[0]);
}
__global__ void to_bf16_kernel(const float* src, __nv_bfloat16* dst, int64_t n) {
  ST_GRID_LOOP(i, n) dst[i] = __float2bfloat16_rn(src[i]);
}
__global__ void to_fp16_kernel(const float* src, __half* dst, int64_t n) {
  ST_GRID_LOOP(i, n) dst[i] = __float2half_rn(src[i]);
}
__global__ void from_bf16_kernel(const __nv_bfloat16* src, float* dst, int64_t n) {
  ST_GRID_LOOP(i, n) dst[i] = __bfloat162float(src[i]);
}
__global__ void from_fp16_kernel(const __half* src, float* dst, int64_t n) {
  ST_GRID_LOOP(i, n) dst[i] = __half2float(src[i]);
}

__device__ float activation_value(Activation f, float x) {
  switch (f) {
    case Activation::kSigmoid: return 1.0f / (1.0f + expf(-x));
    case Activation::kSilu: return x / (1.0f + expf(-x));
    default: return x * fminf(fmaxf(x + 3.0f, 0.0f), 6.0f) / 6.0f;
  }
}
__device__ float activation_slope(Activation f, float x, float y) {
  switch (f) {
    case Activation::kSigmoid: return y * (1.0f - y);
    case Activation::kSilu: {
      const float s = 1.0f / (1.0f + expf(-x));
      return s * (1.0f + x * (1.0f - s));
    }
    default: return x < -3.0f ? 0.0f : (x <= 3.0f ? (2.0f * x + 3.0f) / 6.0f : 1.0f);
  }
}
__global__ void activation_kernel(Activation f, const float* x, float* y, int64_t n) {
  ST_GRID_LOOP(i, n) y[i] = activation_value(f, x[i]);
}
__global__ void activation_grad_kernel(Activation f, const float* x, const float* y, const float* dy, float* dx,
                                       int64_t n) {
  ST_GRID_LOOP(i, n) dx[i] = dy[i] * activation_slope(f, x[i], y[i]);
}
__global__ void channel_scale_kernel(const float* x, const float* s, float* y, int64_t planes, int64_t positions) {
  ST_GRID_LOOP(i, planes * positions) y[i] = x[i] * s[i / positions];
}
__global__ void scale_input_grad_kernel(const float* s, const float* dy, float* dx, int64_t planes, int64_t positions) {
  ST_GRID_LOOP(i, planes * positions) dx[i] = dy[i] * s[i / positions];
}
// A block per plane (grid-stride over the planes): each thread sums a strided share, then a shared-memory tree.
__global__ void scale_grad_kernel(const float* x, const float* dy, float* ds, int64_t planes, int64_t positions) {
  __shared__ float partial[kThreads];
  for (int64_t plane = blockIdx.x; plane < planes; plane += gridDim.x) {
    float sum = 0.0f;
    for (int64_t i = threadIdx.x; i < positions; i += blockDim.x)
      sum += dy[plane * positions + i] * x[plane * positions + i];
    partial[threadIdx.x] = sum;
    __syncthreads();
    for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
      if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
      __syncthreads();
    }
    if (threadIdx.x == 0) ds[plane] = partial[0];
    __syncthreads();
  }
}
void check_launch() { ST_CUDA_CHECK(cudaGetLastError()); }

}  // namespace

void launch_fill(float* dst, float value, int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  fill_kernel<<<blocks_for(n), kThreads, 0, stream>>>(dst, value, n);
  check_launch();
}
void launch_add(float* dst, const float* src, int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  add_kernel<<<blocks_for(n), kThreads, 0, stream>>>(dst, src, n);
  check_launch();
}
void launch_scale(float* dst, float factor, int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  scale_kernel<<<blocks_for(n), kThreads, 0, stream>>>(dst, factor, n);
  check_launch();
}
void launch_sgd_update(float* weights, const float* grads, float* momentum, int64_t n, float learning_rate,
                       float momentum_coefficient, float weight_decay, cudaStream_t stream) {
  if (n <= 0) return;
  sgd_kernel<<<blocks_for(n), kThreads, 0, stream>>>(weights, grads, momentum, n, learning_rate,
                                                      momentum_coefficient, weight_decay);
  check_launch();
}
void launch_dropout(const float* src, float* dst, int64_t n, int64_t per_draw, uint64_t seed, double rate, float scale,
                    cudaStream_t stream) {
  if (n <= 0) return;
  dropout_kernel<<<blocks_for(n), kThreads, 0, stream>>>(src, dst, n, per_draw, seed, rate, scale);
  check_launch();
}
void launch_activation(Activation f, const float* x, float* y, int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  activation_kernel<<<blocks_for(n), kThreads, 0, stream>>>(f, x, y, n);
  check_launch();
}
void launch_activation_grad(Activation f, const float* x, const float* y, const float* dy, float* dx, int64_t n,
                            cudaStream_t stream) {
  if (n <= 0) return;
  activation_grad_kernel<<<blocks_for(n), kThreads, 0, stream>>>(f, x, y, dy, dx, n);
  check_launch();
}
void launch_channel_scale(const float* x, const float* s, float* y, int64_t planes, int64_t positions,
                          cudaStream_t stream) {
  if (planes * positions <= 0) return;
  channel_scale_kernel<<<blocks_for(planes * positions), kThreads, 0, stream>>>(x, s, y, planes, positions);
  check_launch();
}
void launch_channel_scale_grad(const float* x, const float* s, const float* dy, float* dx, float* ds, int64_t planes,
                               int64_t positions, cudaStream_t stream) {
  if (planes * positions <= 0) return;
  if (dx != nullptr) {
    scale_input_grad_kernel<<<blocks_for(planes * positions), kThreads, 0, stream>>>(s, dy, dx, planes, positions);
    check_launch();
  }
  if (ds == nullptr) return;
  if (positions == 1) {
    channel_scale_kernel<<<blocks_for(planes), kThreads, 0, stream>>>(dy, x, ds, planes, 1);  // ds = dy · x
  } else {
    const unsigned blocks = planes < 65535 * 32 ? static_cast<unsigned>(planes) : 65535 * 32;
    scale_grad_kernel<<<blocks, kThreads, 0, stream>>>(x, dy, ds, planes, positions);
  }
  check_launch();
}
void launch_softmax_xent_grad(const float* probs, const float* labels, float* d_x, int64_t batch, int64_t classes,
                              float loss_scale, cudaStream_t stream) {
  if (batch * classes <= 0) return;
  xent_grad_kernel<<<blocks_for(batch * classes), kThreads, 0, stream>>>(probs, labels, d_x, batch, classes,
                                                                         loss_scale);
  check_launch();
}

void launch_sum_squares(const float* x, int64_t n, double* result, cudaStream_t stream) {
  ST_CUDA_CHECK(cudaMemsetAsync(result, 0, sizeof(double), stream));
  if (n <= 0) return;
  const unsigned blocks = blocks_for(n) < 1024 ? blocks_for(n) : 1024;  // few atomics; each thread loops
  sum_squares_kernel<<<blocks, kThreads, 0, stream>>>(x, n, result);
  check_launch();
}
void launch_to_half(const float* src, void* dst, int64_t n, HalfType type, cudaStream_t stream) {
  if (n <= 0) return;
  if (type == HalfType::kBf16)
    to_bf16_kernel<<<blocks_for(n), kThreads, 0, stream>>>(src, static_cast<__nv_bfloat16*>(dst), n);
  else
    to_fp16_kernel<<<blocks_for(n), kThreads, 0, stream>>>(src, static_cast<__half*>(dst), n);
  check_launch();
}
void launch_from_half(const void* src, float* dst, int64_t n, HalfType type, cudaStream_t stream) {
  if (n <= 0) return;
  if (type == HalfType::kBf16)
    from_bf16_kernel<<<blocks_for(n), kThreads, 0, stream>>>(static_cast<const __nv_bfloat16*>(src), dst, n);
  else
    from_fp16_kernel<<<blocks_for(n), kThreads, 0, stream>>>(static_cast<const __half*>(src), dst, n);
  check_launch();
}

}  // namespace scaletwin::exec::cuda
