// Layers that are memory moves or cheap element-wise maps, written as plain OpenMP loops: residual add, concat
// along channels, flatten, dropout (the shared splitmix64 mask of backend.hpp) and softmax cross-entropy.
#include <algorithm>
#include <cmath>
#include <cstring>

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

class DropoutKernel : public LayerKernel {
 public:
  explicit DropoutKernel(const LayerDesc& d)
      : n_(d.batch * d.out_shape.elements()), rate_(d.layer->dropout_rate), training_(d.training) {
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
      dst[i] = dropout_keep(seed, static_cast<uint64_t>(i), rate_) ? src[i] * keep_scale : 0.0f;
  }
  int64_t n_;
  double rate_;
  bool training_;
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
      return std::make_unique<DropoutKernel>(desc);
    case LayerKind::kSoftmaxCrossEntropy:
      return std::make_unique<SoftmaxCrossEntropyKernel>(desc);
    default:
      break;
  }
  ST_ASSERT(false, "not a plain layer: " + desc.layer->name);
  return nullptr;
}

}  // namespace scaletwin::exec::cpu
