// Internal to exec/cuda: the CUDA Backend (cuDNN 9 for convolution, batch norm, pooling, activation and softmax;
// cuBLAS for fully connected layers; kernels.cu for the rest), exposed to the NCCL communicator, which needs its
// device and stream. Users go through exec/cuda_backend.hpp.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "exec/cuda/device_context.hpp"

namespace scaletwin::exec::cuda {

class CudaBackend : public Backend {
 public:
  CudaBackend(int device, const CudaOptions& options);
  ~CudaBackend() override;

  int device() const { return ctx_.device; }
  cudaStream_t stream() const { return ctx_.stream; }
  const DeviceContext& context() const { return ctx_; }

  std::string name() const override;
  Buffer alloc(int64_t floats) override;
  void upload(float* device_dst, const float* host_src, int64_t n) override;
  void download(float* host_dst, const float* device_src, int64_t n) override;
  void synchronize() override;
  std::unique_ptr<LayerKernel> make_layer(const LayerDesc& desc) override;
  void copy(float* dst, const float* src, int64_t n) override;
  void fill(float* dst, float value, int64_t n) override;
  void add(float* dst, const float* src, int64_t n) override;
  void scale(float* dst, float factor, int64_t n) override;
  void copy_2d(float* dst, int64_t dst_ld, const float* src, int64_t src_ld, int64_t rows, int64_t cols) override;
  void sgd_update(float* weights, const float* grads, float* momentum, int64_t n, const SgdStep& step) override;
  // On the device (kernels.cu), 8 bytes back: fp16's overflow check and the noise scale's norms each step.
  double sum_squares(const float* x, int64_t n) override;
  // Events on the stream, timed against one reference event recorded on a drained stream (see Backend::mark).
  int64_t mark() override;
  double mark_time_s(int64_t mark) override;
  // The host-clock time of a completed timing event recorded on any stream of this device (the same reference).
  double event_time_s(cudaEvent_t completed);

 private:
  void ensure_reference();  // records reference_ on a drained stream, once (it waits for the stream)

  DeviceContext ctx_;
  std::string device_name_;
  std::vector<cudaEvent_t> marks_;
  DeviceBytes sum_;  // one double for sum_squares
  cudaEvent_t reference_ = nullptr;  // created by the first mark
  double reference_s_ = 0.0;         // the host's steady clock when the stream reached reference_
};

}  // namespace scaletwin::exec::cuda
