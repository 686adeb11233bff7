// Layers that are memory moves or cheap element-wise maps, written as plain OpenMP loops: residual add, concat
// along channels, flatten, dropout and drop_path (the shared splitmix64 mask of backend.hpp), softmax cross-entropy and max
// pooling.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/error.hpp"
#include "exec/cpu/dnnl_kernels.hpp"

namespace scaletwin::exec::cpu {
namespace {

void copy_floats(float* dst, const float* src, int64_t n) { std::memcpy(dst, src, n * sizeof(float)); }

class AddKernel : public LayerKernel {
 public:
  explicit AddKernel(const LayerDesc& d) : n_(d.batch * d.out_shape.elements()) {}
  void forward(const LayerArgs& a) override {
    const int inputs = static_cast<int>(a.inputs.size());
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n_; ++i) {
      float sum = a.inputs[0][i];
      for (int k = 1; k < inputs; ++k) sum += a.inputs[k][i];
      a.output[i] = sum;
    }
  }
  void backward_weight(const LayerArgs&) override {}
  void backward_input(const LayerArgs& a) override {
    for (float* d : a.d_inputs)
      if (d != nullptr) copy_floats(d, a.d_output, n_);
  }

 private:
  int64_t n_;
};

class ConcatKernel : public LayerKernel {
 public:
  explicit ConcatKernel(const LayerDesc& d) : batch_(d.batch), out_per_sample_(d.out_shape.elements()) {
    for (const models::Shape& s : d.in_shapes) in_per_sample_.push_back(s.elements());
  }
  void forward(const LayerArgs& a) override { move(a, true); }
  void backward_weight(const LayerArgs&) override {}
  void backward_input(const LayerArgs& a) override { move(a, false); }

 private:
  // Samples are independent: sample n of the output holds sample n of every input, one after the other.
  void move(const LayerArgs& a, bool forward) const {
#pragma omp parallel for schedule(static)
    for (int64_t n = 0; n < batch_; ++n) {
      int64_t offset = n * out_per_sample_;
      for (size_t k = 0; k < in_per_sample_.size(); ++k) {
        const int64_t len = in_per_sample_[k];
        if (forward) {
          copy_floats(a.output + offset, a.inputs[k] + n * len, len);
        } else if (a.d_inputs[k] != nullptr) {
          copy_floats(a.d_inputs[k] + n * len, a.d_output + offset, len);
        }
        offset += len;
      }
    }
  }
  int64_t batch_, out_per_sample_;
  std::vector<int64_t> in_per_sample_;
};

class FlattenKernel : public LayerKernel {
 public:
  explicit FlattenKernel(const LayerDesc& d) : n_(d.batch * d.out_shape.elements()) {}
  void forward(const LayerArgs& a) override { copy_floats(a.output, a.inputs[0], n_); }
  void backward_weight(const LayerArgs&) override {}
  void backward_input(const LayerArgs& a) override {
    if (a.d_inputs[0] != nullptr) copy_floats(a.d_inputs[0], a.d_output, n_);
  }

 private:
  int64_t n_;
};

// dropout draws a mask value per element, drop_path (stochastic depth) one per sample: element i uses draw
// i / per_draw.
class DropoutKernel : public LayerKernel {
 public:
  explicit DropoutKernel(const LayerDesc& d)
      : n_(d.batch * d.out_shape.elements()),
        per_draw_(d.layer->kind == models::LayerKind::kDropPath ? d.out_shape.elements() : 1),
        rate_(d.layer->dropout_rate),
        training_(d.training) {
    ST_ASSERT(rate_ >= 0.0 && rate_ < 1.0, "dropout rate outside [0, 1)");
  }
  void forward(const LayerArgs& a) override { apply(a.inputs[0], a.output, a.seed); }
  void backward_weight(const LayerArgs&) override {}
  void backward_input(const LayerArgs& a) override {
    if (a.d_inputs[0] != nullptr) apply(a.d_output, a.d_inputs[0], a.seed);
  }

 private:
  void apply(const float* src, float* dst, uint64_t seed) const {
    if (!training_ || rate_ == 0.0) {
      copy_floats(dst, src, n_);
      return;
    }
    const float keep_scale = static_cast<float>(1.0 / (1.0 - rate_));
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n_; ++i)
      dst[i] = dropout_keep(seed, static_cast<uint64_t>(i / per_draw_), rate_) ? src[i] * keep_scale : 0.0f;
  }
  int64_t n_, per_draw_;
  double rate_;
  bool training_;
};

// Max pooling on NCHW, one (sample, channel) plane per OpenMP task: oneDNN 2.6's pooling on plain layouts with
// few channels (lenet5's 6) took longer than the convolutions around it. Padding (right padding covers ceil mode)
// never wins; the forward records the arg-max (first maximum in row-major window order) of each output, and the
// backward sends each output gradient to it.
class MaxPoolKernel : public LayerKernel {
 public:
  explicit MaxPoolKernel(const LayerDesc& d)
      : planes_(d.batch * d.in_shapes.at(0).c),
        in_h_(d.in_shapes.at(0).h),
        in_w_(d.in_shapes.at(0).w),
        out_h_(d.out_shape.h),
        out_w_(d.out_shape.w),
        p_(d.layer->pool),
        argmax_(static_cast<size_t>(planes_ * out_h_ * out_w_), -1) {}
  void forward(const LayerArgs& a) override {
#pragma omp parallel for schedule(static)
    for (int64_t plane = 0; plane < planes_; ++plane) {
      const float* x = a.inputs[0] + plane * in_h_ * in_w_;
      float* y = a.output + plane * out_h_ * out_w_;
      int32_t* arg = argmax_.data() + plane * out_h_ * out_w_;
      for (int64_t oh = 0; oh < out_h_; ++oh) {
        const int64_t h0 = std::max<int64_t>(oh * p_.stride_h - p_.pad_h, 0);
        const int64_t h1 = std::min<int64_t>(oh * p_.stride_h - p_.pad_h + p_.kernel_h, in_h_);
        for (int64_t ow = 0; ow < out_w_; ++ow) {
          const int64_t w0 = std::max<int64_t>(ow * p_.stride_w - p_.pad_w, 0);
          const int64_t w1 = std::min<int64_t>(ow * p_.stride_w - p_.pad_w + p_.kernel_w, in_w_);
          if (h0 >= h1 || w0 >= w1) {  // a window wholly in the padding
            y[oh * out_w_ + ow] = 0.0f;
            arg[oh * out_w_ + ow] = -1;
            continue;
          }
          int64_t best = h0 * in_w_ + w0;
          float top = x[best];
          for (int64_t h = h0; h < h1; ++h) {
            for (int64_t w = w0; w < w1; ++w) {
              const float v = x[h * in_w_ + w];
              best = v > top ? h * in_w_ + w : best;
              top = v > top ? v : top;
            }
          }
          y[oh * out_w_ + ow] = top;
          arg[oh * out_w_ + ow] = static_cast<int32_t>(best);
        }
      }
    }
  }
  void backward_weight(const LayerArgs&) override {}
  void backward_input(const LayerArgs& a) override {
    if (a.d_inputs.empty() || a.d_inputs[0] == nullptr) return;
#pragma omp parallel for schedule(static)
    for (int64_t plane = 0; plane < planes_; ++plane) {
      float* dx = a.d_inputs[0] + plane * in_h_ * in_w_;
      const float* dy = a.d_output + plane * out_h_ * out_w_;
      const int32_t* arg = argmax_.data() + plane * out_h_ * out_w_;
      std::fill(dx, dx + in_h_ * in_w_, 0.0f);
      for (int64_t o = 0; o < out_h_ * out_w_; ++o)
        if (arg[o] >= 0) dx[arg[o]] += dy[o];
    }
  }

 private:
  int64_t planes_, in_h_, in_w_, out_h_, out_w_;
  models::PoolParams p_;
  std::vector<int32_t> argmax_;
};

class SoftmaxCrossEntropyKernel : public LayerKernel {
 public:
  explicit SoftmaxCrossEntropyKernel(const LayerDesc& d) : batch_(d.batch), classes_(d.out_shape.elements()) {
    ST_ASSERT(d.in_shapes.at(0).elements() == classes_, "softmax cross-entropy changes the class count");
  }
  void forward(const LayerArgs& a) override {
#pragma omp parallel for schedule(static)
    for (int64_t n = 0; n < batch_; ++n) {
      const float* x = a.inputs[0] + n * classes_;
      float* y = a.output + n * classes_;
      const float top = *std::max_element(x, x + classes_);
      double sum = 0.0;
      for (int64_t c = 0; c < classes_; ++c) sum += std::exp(static_cast<double>(x[c] - top));
      for (int64_t c = 0; c < classes_; ++c) y[c] = static_cast<float>(std::exp(static_cast<double>(x[c] - top)) / sum);
    }
  }
  void backward_weight(const LayerArgs&) override {}
  void backward_input(const LayerArgs& a) override {
    if (a.d_inputs[0] == nullptr) return;
    ST_ASSERT(a.labels != nullptr, "softmax cross-entropy backward without labels");
#pragma omp parallel for schedule(static)
    for (int64_t n = 0; n < batch_; ++n) {
      const auto label = static_cast<int64_t>(a.labels[n]);
      for (int64_t c = 0; c < classes_; ++c) {
        const float target = c == label ? 1.0f : 0.0f;
        a.d_inputs[0][n * classes_ + c] = (a.output[n * classes_ + c] - target) * a.loss_scale;
      }
    }
  }

 private:
  int64_t batch_, classes_;
};

}  // namespace

std::unique_ptr<LayerKernel> make_plain_kernel(const LayerDesc& desc) {
  using models::LayerKind;
  switch (desc.layer->kind) {
    case LayerKind::kAdd:
      return std::make_unique<AddKernel>(desc);
    case LayerKind::kConcat:
      return std::make_unique<ConcatKernel>(desc);
    case LayerKind::kFlatten:
      return std::make_unique<FlattenKernel>(desc);
    case LayerKind::kDropout:
    case LayerKind::kDropPath:  // element-wise: any layout (a sample's elements are contiguous in both)
      return std::make_unique<DropoutKernel>(desc);
    case LayerKind::kSoftmaxCrossEntropy:
      return std::make_unique<SoftmaxCrossEntropyKernel>(desc);
    case LayerKind::kMaxPool:
      return std::make_unique<MaxPoolKernel>(desc);
    default:
      break;
  }
  ST_ASSERT(false, "not a plain layer: " + desc.layer->name);
  return nullptr;
}

}  // namespace scaletwin::exec::cpu
