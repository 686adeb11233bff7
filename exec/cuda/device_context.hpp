// Internal to the CUDA backend: what its layer kernels share (device, stream, cuDNN and cuBLAS handles, the one
// cuDNN workspace, the options) and the factories of the kernel families (cudnn_conv.cpp, cudnn_layers.cpp,
// cublas_fc.cpp, plain_layers.cpp). Everything is ordered on the one stream.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <map>
#include <memory>

#include "exec/backend.hpp"
#include "exec/cuda/kernels.hpp"
#include "exec/cuda/layer_plan.hpp"
#include "exec/cuda_backend.hpp"

namespace scaletwin::exec::cuda {

// A device allocation of bytes, freed with cudaFree.
class DeviceBytes {
 public:
  DeviceBytes() = default;
  explicit DeviceBytes(int64_t bytes);
  DeviceBytes(DeviceBytes&& o) noexcept : data_(o.data_), bytes_(o.bytes_) {
    o.data_ = nullptr;
    o.bytes_ = 0;
  }
  DeviceBytes& operator=(DeviceBytes&& o) noexcept;
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;
  ~DeviceBytes();
  void* data() const { return data_; }
  float* floats() const { return static_cast<float*>(data_); }
  int64_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  int64_t bytes_ = 0;
};

// A convolution's algorithms and their workspace sizes (backward ones only for a training kernel).
// One direction's choice: the cuDNN algorithm, its workspace, and the cudnnMathType_t cuDNN evaluated it under.
struct ConvChoice {
  int algorithm = 0;
  int64_t workspace_bytes = 0;
  int math = 0;
};

struct ConvAlgorithms {
  ConvChoice forward, backward_data, backward_filter;
};

struct DeviceContext {
  int device = 0;
  CudaOptions options;
  cudaStream_t stream = nullptr;
  cudnnHandle_t cudnn = nullptr;
  cublasHandle_t cublas = nullptr;
  int64_t workspace_limit_bytes = 0;  // per convolution direction (layer_plan.hpp's policy)
  DeviceBytes workspace;              // shared by every kernel, grown (between iterations) to the largest need
  std::map<ConvShapeKey, ConvAlgorithms> conv_algorithms;  // searched once per shape (layer_plan.hpp)
  DeviceBytes half_scratch;  // mixed precision: the 2-byte operands of the running op (half_scratch_layout)
  HalfScratchState half_state;  // which output gradient it holds (layer_plan.hpp): cast once per layer and step

  // cudaSetDevice(device): every entry point calls it, as one thread may drive several backends.
  void activate() const;
  // Grows the workspace to at least `bytes` (synchronizes the stream first when it must reallocate).
  void reserve_workspace(int64_t bytes);
  // Mixed precision: grows half_scratch to at least `elements` 2-byte values (synchronizing first, as above).
  void reserve_half_scratch(int64_t elements);
  bool half() const { return options.precision != CudaPrecision::kFp32; }
  HalfType half_type() const { return options.precision == CudaPrecision::kFp16 ? HalfType::kFp16 : HalfType::kBf16; }
  cudnnDataType_t cudnn_half_type() const {
    return options.precision == CudaPrecision::kFp16 ? CUDNN_DATA_HALF : CUDNN_DATA_BFLOAT16;
  }
  cudaDataType_t cublas_half_type() const {
    return options.precision == CudaPrecision::kFp16 ? CUDA_R_16F : CUDA_R_16BF;
  }
  // The part of half_scratch at `offset` 2-byte elements.
  void* half_at(int64_t offset) const { return static_cast<char*>(half_scratch.data()) + 2 * offset; }
  // Casts n fp32 values into half_scratch at `offset` (2-byte elements), on the stream; returns where they are.
  const void* to_half(const float* src, int64_t offset, int64_t n) const {
    void* dst = half_at(offset);
    launch_to_half(src, dst, n, half_type(), stream);
    return dst;
  }
  // An op of `kernel` needs the output gradient dy (n values) at `offset`: cast unless half_state says the
  // kernel's previous op left it there (backward_weight, then backward_input).
  const void* output_gradient_to_half(const void* kernel, const float* dy, int64_t offset, int64_t n) {
    const void* at = half_state.begin(kernel, dy) ? half_at(offset) : to_half(dy, offset, n);
    half_state.holds(dy);
    return at;
  }
};

// RAII descriptors.
struct TensorDesc {
  cudnnTensorDescriptor_t desc = nullptr;
  explicit TensorDesc(const TensorDims& dims, cudnnDataType_t type = CUDNN_DATA_FLOAT);
  ~TensorDesc();
  TensorDesc(const TensorDesc&) = delete;
  TensorDesc& operator=(const TensorDesc&) = delete;
};

std::unique_ptr<LayerKernel> make_conv_kernel(DeviceContext& ctx, const LayerDesc& desc);
std::unique_ptr<LayerKernel> make_fc_kernel(DeviceContext& ctx, const LayerDesc& desc);
std::unique_ptr<LayerKernel> make_batchnorm_kernel(DeviceContext& ctx, const LayerDesc& desc);
std::unique_ptr<LayerKernel> make_pool_kernel(DeviceContext& ctx, const LayerDesc& desc);
std::unique_ptr<LayerKernel> make_relu_kernel(DeviceContext& ctx, const LayerDesc& desc);
std::unique_ptr<LayerKernel> make_plain_kernel(DeviceContext& ctx, const LayerDesc& desc);

}  // namespace scaletwin::exec::cuda
