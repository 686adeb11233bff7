// The CUDA backend: device memory, element-wise helpers, kernel dispatch, and the entry points of
// exec/cuda_backend.hpp (cuda_device_available, make_cuda_backend).
#include "exec/cuda/cuda_backend_impl.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "core/error.hpp"
#include "exec/cuda/cuda_check.hpp"
#include "exec/cuda/kernels.hpp"
#include "exec/cuda/memory_plan.hpp"

namespace scaletwin::exec {

bool cuda_device_available(std::string* why) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    if (why != nullptr)
      *why = status != cudaSuccess ? fmt::format("cudaGetDeviceCount: {}", cudaGetErrorString(status))
                                   : std::string("no CUDA device is visible");
    return false;
  }
  if (why != nullptr) *why = fmt::format("{} CUDA device(s)", count);
  return true;
}

int cuda_device_count() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
}

std::unique_ptr<Backend> make_cuda_backend(int device) { return make_cuda_backend(device, CudaOptions{}); }

std::unique_ptr<Backend> make_cuda_backend(int device, const CudaOptions& options) {
  std::string why;
  if (!cuda_device_available(&why)) throw SystemError("no CUDA device was found: " + why);
  return std::make_unique<cuda::CudaBackend>(device, options);
}

void check_cuda_memory(const models::Model& model, int64_t batch, int device, const CudaOptions& options) {
  std::string why;
  if (!cuda_device_available(&why)) throw SystemError("no CUDA device was found: " + why);
  ST_CUDA_CHECK(cudaSetDevice(device));
  size_t free_bytes = 0, total_bytes = 0;
  ST_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  cudaDeviceProp prop{};
  ST_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  // free_bytes is measured once this process's CUDA context exists, and the estimate counts the context too: add
  // the allowance back so that it is not counted twice.
  const auto available = static_cast<int64_t>(free_bytes) + cuda::kContextAllowanceBytes;
  const int64_t workspace = cuda::workspace_limit_bytes(options.workspace_limit_bytes, static_cast<int64_t>(free_bytes));
  const std::string name =
      fmt::format("{} (device {}, {:.1f} GB free)", prop.name, device, static_cast<double>(free_bytes) / 1e9);
  cuda::check_fits(model, batch, workspace, std::min(available, static_cast<int64_t>(total_bytes)), name,
                   options.precision != CudaPrecision::kFp32);
}

}  // namespace scaletwin::exec

namespace scaletwin::exec::cuda {

DeviceBytes::DeviceBytes(int64_t bytes) : bytes_(bytes) {
  if (bytes > 0) ST_CUDA_CHECK(cudaMalloc(&data_, static_cast<size_t>(bytes)));
}
DeviceBytes& DeviceBytes::operator=(DeviceBytes&& o) noexcept {
  if (this != &o) {
    if (data_ != nullptr) cudaFree(data_);
    data_ = o.data_;
    bytes_ = o.bytes_;
    o.data_ = nullptr;
    o.bytes_ = 0;
  }
  return *this;
}
DeviceBytes::~DeviceBytes() {
  if (data_ != nullptr) cudaFree(data_);
}

void DeviceContext::activate() const { ST_CUDA_CHECK(cudaSetDevice(device)); }

namespace {

// Grows a buffer the stream's queued work may still use to at least `bytes`: waits for the stream, then frees it
// before allocating the larger one.
void grow(DeviceBytes& buffer, int64_t bytes, cudaStream_t stream) {
  if (bytes <= buffer.bytes()) return;
  ST_CUDA_CHECK(cudaStreamSynchronize(stream));
  buffer = DeviceBytes();
  buffer = DeviceBytes(bytes);
}

}  // namespace

void DeviceContext::reserve_workspace(int64_t bytes) { grow(workspace, bytes, stream); }

void DeviceContext::reserve_half_scratch(int64_t elements) { grow(half_scratch, 2 * elements, stream); }

TensorDesc::TensorDesc(const TensorDims& d, cudnnDataType_t type) {
  ST_CUDNN_CHECK(cudnnCreateTensorDescriptor(&desc));
  ST_CUDNN_CHECK(cudnnSetTensor4dDescriptorEx(desc, type, d.n, d.c, d.h, d.w, d.stride_n, d.stride_c,
                                              d.stride_h, d.stride_w));
}
TensorDesc::~TensorDesc() { cudnnDestroyTensorDescriptor(desc); }

CudaBackend::CudaBackend(int device, const CudaOptions& options) {
  int count = 0;
  ST_CUDA_CHECK(cudaGetDeviceCount(&count));
  if (device < 0 || device >= count)
    throw SystemError(fmt::format("CUDA device {} does not exist ({} visible)", device, count));
  ctx_.device = device;
  ctx_.options = options;
  ctx_.activate();
  cudaDeviceProp prop{};
  ST_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  device_name_ = prop.name;
  // cuDNN and cuBLAS take bf16 operands from compute capability 8.0 (Ampere) on; fp16 has tensor cores from 7.0.
  if (options.precision == CudaPrecision::kBf16 && prop.major < 8)
    throw InputError(fmt::format("bf16 mixed precision needs a GPU of compute capability 8.0 (Ampere) or later; {} "
                                 "(device {}) is {}.{}: use fp16 or fp32",
                                 prop.name, device, prop.major, prop.minor));
  ST_CUDA_CHECK(cudaStreamCreateWithFlags(&ctx_.stream, cudaStreamNonBlocking));
  ST_CUDNN_CHECK(cudnnCreate(&ctx_.cudnn));
  ST_CUDNN_CHECK(cudnnSetStream(ctx_.cudnn, ctx_.stream));
  ST_CUBLAS_CHECK(cublasCreate(&ctx_.cublas));
  ST_CUBLAS_CHECK(cublasSetStream(ctx_.cublas, ctx_.stream));
  size_t free_bytes = 0, total_bytes = 0;
  ST_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  ctx_.workspace_limit_bytes = workspace_limit_bytes(options.workspace_limit_bytes, static_cast<int64_t>(free_bytes));
}

CudaBackend::~CudaBackend() {
  cudaSetDevice(ctx_.device);
  cudaStreamSynchronize(ctx_.stream);
  ctx_.workspace = DeviceBytes();
  ctx_.half_scratch = DeviceBytes();
  sum_ = DeviceBytes();
  for (cudaEvent_t e : marks_) cudaEventDestroy(e);
  if (reference_ != nullptr) cudaEventDestroy(reference_);
  cublasDestroy(ctx_.cublas);
  cudnnDestroy(ctx_.cudnn);
  cudaStreamDestroy(ctx_.stream);
}

void CudaBackend::ensure_reference() {
  if (reference_ != nullptr) return;
  ctx_.activate();  // the stream drained, so the reference event's time is the host's now
  ST_CUDA_CHECK(cudaEventCreate(&reference_));
  ST_CUDA_CHECK(cudaEventRecord(reference_, ctx_.stream));
  ST_CUDA_CHECK(cudaEventSynchronize(reference_));
  reference_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double CudaBackend::event_time_s(cudaEvent_t completed) {
  ensure_reference();
  float ms = 0.0f;
  ST_CUDA_CHECK(cudaEventElapsedTime(&ms, reference_, completed));
  return reference_s_ + 1e-3 * static_cast<double>(ms);
}

int64_t CudaBackend::mark() {
  ensure_reference();
  ctx_.activate();
  cudaEvent_t event = nullptr;
  ST_CUDA_CHECK(cudaEventCreate(&event));
  marks_.push_back(event);
  ST_CUDA_CHECK(cudaEventRecord(event, ctx_.stream));
  return static_cast<int64_t>(marks_.size()) - 1;
}

double CudaBackend::mark_time_s(int64_t mark) {
  ST_ASSERT(mark >= 0 && mark < static_cast<int64_t>(marks_.size()), "a mark this backend did not make");
  ctx_.activate();
  const cudaEvent_t event = marks_[static_cast<size_t>(mark)];
  ST_CUDA_CHECK(cudaEventSynchronize(event));
  return event_time_s(event);
}

std::string CudaBackend::name() const {
  return fmt::format("cuda ({}, device {}, cuDNN {}, cuBLAS, {})", device_name_, ctx_.device, cudnnGetVersion(),
                     cuda_arithmetic(ctx_.options));
}

Buffer CudaBackend::alloc(int64_t floats) {
  ST_ASSERT(floats >= 0, "negative allocation");
  if (floats == 0) return Buffer(nullptr, 0, nullptr);
  ctx_.activate();
  void* data = nullptr;
  const size_t bytes = static_cast<size_t>(floats) * sizeof(float);
  const cudaError_t status = cudaMalloc(&data, bytes);
  if (status != cudaSuccess) {
    cudaGetLastError();  // clear the error: out of memory is reported, not sticky
    throw SystemError(fmt::format("cannot allocate {} bytes on CUDA device {}: {}", bytes, ctx_.device,
                                  cudaGetErrorString(status)));
  }
  ST_CUDA_CHECK(cudaMemsetAsync(data, 0, bytes, ctx_.stream));
  const int device = ctx_.device;
  return Buffer(static_cast<float*>(data), floats, [device](float* p) {
    cudaSetDevice(device);
    cudaFree(p);
  });
}

void CudaBackend::upload(float* device_dst, const float* host_src, int64_t n) {
  if (n <= 0) return;
  ctx_.activate();
  // From pageable memory the copy has left host_src when the call returns; ordered after the stream's work.
  ST_CUDA_CHECK(cudaMemcpyAsync(device_dst, host_src, static_cast<size_t>(n) * sizeof(float),
                                cudaMemcpyHostToDevice, ctx_.stream));
  ST_CUDA_CHECK(cudaStreamSynchronize(ctx_.stream));
}

void CudaBackend::download(float* host_dst, const float* device_src, int64_t n) {
  if (n <= 0) return;
  ctx_.activate();
  ST_CUDA_CHECK(cudaMemcpyAsync(host_dst, device_src, static_cast<size_t>(n) * sizeof(float),
                                cudaMemcpyDeviceToHost, ctx_.stream));
  ST_CUDA_CHECK(cudaStreamSynchronize(ctx_.stream));
}

void CudaBackend::synchronize() {
  ctx_.activate();
  ST_CUDA_CHECK(cudaStreamSynchronize(ctx_.stream));
}

std::unique_ptr<LayerKernel> CudaBackend::make_layer(const LayerDesc& desc) {
  ST_ASSERT(desc.layer != nullptr && desc.batch > 0, "kernel without a layer or batch");
  ctx_.activate();
  using models::LayerKind;
  switch (desc.layer->kind) {
    case LayerKind::kConv: return make_conv_kernel(ctx_, desc);
    case LayerKind::kFullyConnected: return make_fc_kernel(ctx_, desc);
    case LayerKind::kBatchNorm: return make_batchnorm_kernel(ctx_, desc);
    case LayerKind::kMaxPool:
    case LayerKind::kAvgPool:
    case LayerKind::kGlobalAvgPool: return make_pool_kernel(ctx_, desc);
    case LayerKind::kRelu: return make_relu_kernel(ctx_, desc);
    case LayerKind::kAdd:
    case LayerKind::kConcat:
    case LayerKind::kFlatten:
    case LayerKind::kDropout:
    case LayerKind::kSoftmaxCrossEntropy:
    case LayerKind::kSigmoid:
    case LayerKind::kSilu:
    case LayerKind::kHardSwish:
    case LayerKind::kMul:
    case LayerKind::kDropPath: return make_plain_kernel(ctx_, desc);
    case LayerKind::kInput: break;
  }
  ST_ASSERT(false, "no kernel for layer " + desc.layer->name);
  return nullptr;
}

void CudaBackend::copy(float* dst, const float* src, int64_t n) {
  if (n <= 0 || dst == src) return;
  ctx_.activate();
  ST_CUDA_CHECK(cudaMemcpyAsync(dst, src, static_cast<size_t>(n) * sizeof(float), cudaMemcpyDeviceToDevice,
                                ctx_.stream));
}
void CudaBackend::fill(float* dst, float value, int64_t n) {
  ctx_.activate();
  launch_fill(dst, value, n, ctx_.stream);
}
void CudaBackend::add(float* dst, const float* src, int64_t n) {
  ctx_.activate();
  launch_add(dst, src, n, ctx_.stream);
}
void CudaBackend::scale(float* dst, float factor, int64_t n) {
  ctx_.activate();
  launch_scale(dst, factor, n, ctx_.stream);
}
void CudaBackend::copy_2d(float* dst, int64_t dst_ld, const float* src, int64_t src_ld, int64_t rows,
                          int64_t cols) {
  if (rows <= 0 || cols <= 0) return;
  ctx_.activate();
  constexpr size_t f = sizeof(float);
  ST_CUDA_CHECK(cudaMemcpy2DAsync(dst, static_cast<size_t>(dst_ld) * f, src, static_cast<size_t>(src_ld) * f,
                                  static_cast<size_t>(cols) * f, static_cast<size_t>(rows), cudaMemcpyDeviceToDevice,
                                  ctx_.stream));
}
void CudaBackend::sgd_update(float* weights, const float* grads, float* momentum, int64_t n, const SgdStep& step) {
  ctx_.activate();
  launch_sgd_update(weights, grads, momentum, n, step.learning_rate, step.momentum, step.weight_decay, ctx_.stream);
}

double CudaBackend::sum_squares(const float* x, int64_t n) {
  ctx_.activate();
  if (sum_.bytes() == 0) sum_ = DeviceBytes(sizeof(double));
  auto* device_sum = static_cast<double*>(sum_.data());
  launch_sum_squares(x, n, device_sum, ctx_.stream);
  double host = 0.0;
  ST_CUDA_CHECK(cudaMemcpyAsync(&host, device_sum, sizeof(double), cudaMemcpyDeviceToHost, ctx_.stream));
  ST_CUDA_CHECK(cudaStreamSynchronize(ctx_.stream));
  return host;
}

}  // namespace scaletwin::exec::cuda
