// The CPU backend's memory, element-wise helpers and kernel dispatch (see cpu_backend.hpp).
#include "exec/cpu/cpu_backend.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <cstdlib>
#include <cstring>
#include <new>

#include "core/error.hpp"
#include "exec/cpu/dnnl_kernels.hpp"

namespace scaletwin::exec {

struct CpuBackend::Impl {
  cpu::DnnlContext ctx;
  int block = -1;  // activation_block(), asked once
};

CpuBackend::CpuBackend(int threads) : impl_(std::make_unique<Impl>()) {
  if (threads > 0) set_threads(threads);
}
CpuBackend::~CpuBackend() = default;

void CpuBackend::set_threads(int threads) {
  ST_ASSERT(threads > 0, "thread count must be positive");
  omp_set_num_threads(threads);
}
int CpuBackend::threads() const { return omp_get_max_threads(); }

std::string CpuBackend::name() const {
  const dnnl_version_t* v = dnnl_version();
  return fmt::format("cpu (oneDNN {}.{}.{}, {} threads)", v->major, v->minor, v->patch, threads());
}

Buffer CpuBackend::alloc(int64_t floats) {
  ST_ASSERT(floats >= 0, "negative allocation");
  const size_t bytes = (static_cast<size_t>(floats) * sizeof(float) + 63) / 64 * 64;
  if (bytes == 0) return Buffer(nullptr, 0, nullptr);
  auto* data = static_cast<float*>(std::aligned_alloc(64, bytes));
  if (!data) throw SystemError(fmt::format("cannot allocate {} bytes of host memory", bytes));
  std::memset(data, 0, bytes);
  return Buffer(data, floats, [](float* p) { std::free(p); });
}

void CpuBackend::upload(float* device_dst, const float* host_src, int64_t n) {
  if (n > 0 && device_dst != host_src) std::memcpy(device_dst, host_src, n * sizeof(float));
}
void CpuBackend::download(float* host_dst, const float* device_src, int64_t n) {
  if (n > 0 && host_dst != device_src) std::memcpy(host_dst, device_src, n * sizeof(float));
}
void CpuBackend::synchronize() { impl_->ctx.stream.wait(); }

std::unique_ptr<LayerKernel> CpuBackend::make_layer(const LayerDesc& desc) {
  ST_ASSERT(desc.layer != nullptr && desc.batch > 0, "kernel without a layer or batch");
  using models::LayerKind;
  switch (desc.layer->kind) {
    case LayerKind::kConv:
      return cpu::make_conv_kernel(impl_->ctx, desc);
    case LayerKind::kFullyConnected:
      return cpu::make_fc_kernel(impl_->ctx, desc);
    case LayerKind::kBatchNorm:
      return cpu::make_batchnorm_kernel(impl_->ctx, desc);
    case LayerKind::kAvgPool:
    case LayerKind::kGlobalAvgPool:
      return cpu::make_pool_kernel(impl_->ctx, desc);
    case LayerKind::kRelu:
      return cpu::make_relu_kernel(impl_->ctx, desc);
    case LayerKind::kAdd:  // element-wise: inputs and output share one layout
      return cpu::make_plain_kernel(desc);
    case LayerKind::kDropPath:  // dropout's kernel, one draw per sample
      return cpu::make_plain_kernel(desc);
    case LayerKind::kSigmoid:
    case LayerKind::kSilu:
    case LayerKind::kHardSwish:
    case LayerKind::kMul:
      return cpu::make_activation_kernel(desc);
    case LayerKind::kMaxPool:
    case LayerKind::kConcat:
    case LayerKind::kFlatten:
    case LayerKind::kDropout:
    case LayerKind::kSoftmaxCrossEntropy:
      for (size_t k = 0; k < desc.in_blocks.size(); ++k)
        ST_ASSERT(desc.in_blocks[k] == 0 || (desc.in_shapes[k].h == 1 && desc.in_shapes[k].w == 1),
                  "blocked input to a plain kernel at " + desc.layer->name);
      return cpu::make_plain_kernel(desc);
    case LayerKind::kInput:
      break;
  }
  ST_ASSERT(false, "no kernel for layer " + desc.layer->name);
  return nullptr;
}

int CpuBackend::activation_block() const {
  if (impl_->block < 0) impl_->block = cpu::preferred_block(impl_->ctx);
  return impl_->block;
}

void CpuBackend::copy(float* dst, const float* src, int64_t n) {
  if (n > 0 && dst != src) std::memcpy(dst, src, n * sizeof(float));
}
void CpuBackend::fill(float* dst, float value, int64_t n) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) dst[i] = value;
}
void CpuBackend::add(float* dst, const float* src, int64_t n) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) dst[i] += src[i];
}
void CpuBackend::scale(float* dst, float factor, int64_t n) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) dst[i] *= factor;
}
double CpuBackend::sum_squares(const float* x, int64_t n) {
  double sum = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : sum)
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[i]) * static_cast<double>(x[i]);
  return sum;
}
void CpuBackend::copy_2d(float* dst, int64_t dst_ld, const float* src, int64_t src_ld, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) std::memcpy(dst + r * dst_ld, src + r * src_ld, cols * sizeof(float));
}
void CpuBackend::sgd_update(float* weights, const float* grads, float* momentum, int64_t n, const SgdStep& step) {
  const float lr = step.learning_rate, mu = step.momentum, wd = step.weight_decay;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    const float g = grads[i] + wd * weights[i];
    momentum[i] = mu * momentum[i] + g;
    weights[i] -= lr * momentum[i];
  }
}

}  // namespace scaletwin::exec
