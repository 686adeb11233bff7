// The layers of squeeze-and-excitation networks and EfficientNets as plain OpenMP loops: sigmoid, SiLU (swish),
// hard swish and the channel scale (mul). Stochastic depth (drop_path) is dropout with one draw per sample
// (plain_kernels.cpp).
//
// All of them map elements one to one, so they run in whatever activation layout their input has (plain NCHW or
// oneDNN's channel blocks nChw<b>c, LayerDesc::in_blocks): a sample's elements are contiguous in both, and only mul
// with a C×1×1 scale needs an element's channel, which it reads from the layout. The scale itself is 1×1, the same
// bytes in either layout.
//
//   sigmoid    y = 1 / (1 + e^-x)                    dx = dy · y · (1 − y)
//   silu       y = x · σ(x)                          dx = dy · σ(x) · (1 + x · (1 − σ(x)))
//   hardswish  y = x · min(max(x + 3, 0), 6) / 6      dx = dy · (0 for x < −3, (2x + 3) / 6 for x ≤ 3, else 1)
//   mul        y = x · s                             dx = dy · s,  ds = dy · x (summed over the positions of a
//                                                    C×1×1 scale)
#include <cmath>
#include <vector>

#include "core/error.hpp"
#include "exec/cpu/dnnl_kernels.hpp"

namespace scaletwin::exec::cpu {
namespace {

using models::LayerKind;

class ActivationKernel : public LayerKernel {
 public:
  explicit ActivationKernel(const LayerDesc& d) : kind_(d.layer->kind), n_(d.batch * d.out_shape.elements()) {}
  void forward(const LayerArgs& a) override {
    const float* x = a.inputs[0];
    float* y = a.output;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n_; ++i) y[i] = value(x[i]);
  }
  void backward_weight(const LayerArgs&) override {}
  void backward_input(const LayerArgs& a) override {
    float* dx = a.d_inputs[0];
    if (dx == nullptr) return;
    const float *x = a.inputs[0], *y = a.output, *dy = a.d_output;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n_; ++i) dx[i] = dy[i] * slope(x[i], y[i]);
  }

 private:
  float value(float x) const {
    switch (kind_) {
      case LayerKind::kSigmoid: return 1.0f / (1.0f + std::exp(-x));
      case LayerKind::kSilu: return x / (1.0f + std::exp(-x));
      default: return x * std::min(std::max(x + 3.0f, 0.0f), 6.0f) / 6.0f;  // hardswish
    }
  }
  float slope(float x, float y) const {
    switch (kind_) {
      case LayerKind::kSigmoid: return y * (1.0f - y);
      case LayerKind::kSilu: {
        const float s = 1.0f / (1.0f + std::exp(-x));
        return s * (1.0f + x * (1.0f - s));
      }
      default: return x < -3.0f ? 0.0f : (x <= 3.0f ? (2.0f * x + 3.0f) / 6.0f : 1.0f);  // hardswish
    }
  }
  LayerKind kind_;
  int64_t n_;
};

class MulKernel : public LayerKernel {
 public:
  explicit MulKernel(const LayerDesc& d)
      : batch_(d.batch),
        per_sample_(d.out_shape.elements()),
        channels_(d.out_shape.c),
        positions_(d.out_shape.h * d.out_shape.w),
        broadcast_(!(d.in_shapes.at(1) == d.in_shapes.at(0))),
        block_(d.in_blocks.empty() ? 0 : d.in_blocks[0]) {}
  void forward(const LayerArgs& a) override {
    const float *x = a.inputs[0], *s = a.inputs[1];
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < batch_ * per_sample_; ++i) a.output[i] = x[i] * s[scale_index(i)];
  }
  void backward_weight(const LayerArgs&) override {}
  void backward_input(const LayerArgs& a) override {
    const float *x = a.inputs[0], *s = a.inputs[1], *dy = a.d_output;
    if (float* dx = a.d_inputs[0]) {
#pragma omp parallel for schedule(static)
      for (int64_t i = 0; i < batch_ * per_sample_; ++i) dx[i] = dy[i] * s[scale_index(i)];
    }
    float* ds = a.d_inputs[1];
    if (ds == nullptr) return;
    if (!broadcast_) {
#pragma omp parallel for schedule(static)
      for (int64_t i = 0; i < batch_ * per_sample_; ++i) ds[i] = dy[i] * x[i];
      return;
    }
#pragma omp parallel for schedule(static)
    for (int64_t n = 0; n < batch_; ++n) {
      std::vector<double> sums(static_cast<size_t>(channels_), 0.0);
      for (int64_t j = 0; j < per_sample_; ++j) {
        const int64_t i = n * per_sample_ + j;
        sums[static_cast<size_t>(channel(j))] += static_cast<double>(dy[i]) * static_cast<double>(x[i]);
      }
      for (int64_t c = 0; c < channels_; ++c) ds[n * channels_ + c] = static_cast<float>(sums[static_cast<size_t>(c)]);
    }
  }

 private:
  // The channel of element j of a sample: plain [c][h][w], or blocked [c / b][h][w][c % b].
  int64_t channel(int64_t j) const {
    return block_ > 0 ? j / (positions_ * block_) * block_ + j % block_ : j / positions_;
  }
  int64_t scale_index(int64_t i) const {
    return broadcast_ ? i / per_sample_ * channels_ + channel(i % per_sample_) : i;
  }
  int64_t batch_, per_sample_, channels_, positions_;
  bool broadcast_;
  int block_;
};

}  // namespace

std::unique_ptr<LayerKernel> make_activation_kernel(const LayerDesc& desc) {
  switch (desc.layer->kind) {
    case LayerKind::kSigmoid:
    case LayerKind::kSilu:
    case LayerKind::kHardSwish: return std::make_unique<ActivationKernel>(desc);
    case LayerKind::kMul: return std::make_unique<MulKernel>(desc);
    default: break;
  }
  ST_ASSERT(false, "not an activation layer: " + desc.layer->name);
  return nullptr;
}

}  // namespace scaletwin::exec::cpu
