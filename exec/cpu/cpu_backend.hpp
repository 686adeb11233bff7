// The CPU backend: the Backend interface (exec/backend.hpp) on oneDNN 2.6 primitives, fp32.
//
// Convolution, inner product, batch normalization, average pooling and ReLU run as oneDNN primitives built once
// per kernel (layer, batch size, training/eval) and reused; max pooling, add, concat, flatten, dropout and softmax
// cross-entropy are plain OpenMP loops. "Device" memory is 64-byte-aligned host memory.
//
// Threads: oneDNN here uses the OpenMP runtime, so OMP_NUM_THREADS is honoured by default; CpuBackend(threads)
// or set_threads() overrides it for the calling thread (ranks sharing cores should each ask for their share).
#pragma once

#include <memory>
#include <string>

#include "exec/backend.hpp"

namespace scaletwin::exec {

class CpuBackend : public Backend {
 public:
  // threads <= 0: keep the OpenMP default (OMP_NUM_THREADS, or all cores).
  explicit CpuBackend(int threads = 0);
  ~CpuBackend() override;

  void set_threads(int threads);
  int threads() const;

  std::string name() const override;
  Buffer alloc(int64_t floats) override;
  void upload(float* device_dst, const float* host_src, int64_t n) override;
  void download(float* host_dst, const float* device_src, int64_t n) override;
  void synchronize() override;
  std::unique_ptr<LayerKernel> make_layer(const LayerDesc& desc) override;
  int activation_block() const override;  // what oneDNN's convolutions prefer here: 16 with AVX-512, 8 with AVX2
  void copy(float* dst, const float* src, int64_t n) override;
  void fill(float* dst, float value, int64_t n) override;
  void add(float* dst, const float* src, int64_t n) override;
  void scale(float* dst, float factor, int64_t n) override;
  double sum_squares(const float* x, int64_t n) override;
  void copy_2d(float* dst, int64_t dst_ld, const float* src, int64_t src_ld, int64_t rows, int64_t cols) override;
  void sgd_update(float* weights, const float* grads, float* momentum, int64_t n, const SgdStep& step) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace scaletwin::exec
