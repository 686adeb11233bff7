// Layers that are memory moves or element-wise maps: residual add (copy, then the add kernel per further input),
// concat along channels and its backward (strided cudaMemcpy2DAsync per input), flatten (a copy), dropout (the
// shared splitmix64 mask), softmax cross-entropy (cuDNN's accurate softmax forward, our gradient kernel), and the
// layers of squeeze-and-excitation networks: sigmoid, SiLU, hard swish and the channel scale (mul), our kernels;
// stochastic depth (drop_path) is dropout with one draw per sample.
#include <vector>

#include "core/error.hpp"
#include "exec/cuda/cuda_check.hpp"
#include "exec/cuda/device_context.hpp"
#include "exec/cuda/kernels.hpp"

namespace scaletwin::exec::cuda {
namespace {

void copy_floats(DeviceContext& ctx, float* dst, const float* src, int64_t n) {
  ST_CUDA_CHECK(cudaMemcpyAsync(dst, src, static_cast<size_t>(n) * sizeof(float), cudaMemcpyDeviceToDevice,
                                ctx.stream));
}

class AddKernel : public LayerKernel {
 public:
  AddKernel(DeviceContext& ctx, const LayerDesc& d) : ctx_(ctx), n_(d.batch * d.out_shape.elements()) {}
  void forward(const LayerArgs& a) override {
    ctx_.activate();
    copy_floats(ctx_, a.output, a.inputs[0], n_);
    for (size_t k = 1; k < a.inputs.size(); ++k) launch_add(a.output, a.inputs[k], n_, ctx_.stream);
  }
  void backward_weight(const LayerArgs&) override {}
  void backward_input(const LayerArgs& a) override {
    ctx_.activate();
    for (float* d : a.d_inputs)
      if (d != nullptr) copy_floats(ctx_, d, a.d_output, n_);
  }

 private:
  DeviceContext& ctx_;
  int64_t n_;
};

class ConcatKernel : public LayerKernel {
 public:
  ConcatKernel(DeviceContext& ctx, const LayerDesc& d)
      : ctx_(ctx), batch_(d.batch), out_per_sample_(d.out_shape.elements()) {
    for (const models::Shape& s : d.in_shapes) in_per_sample_.push_back(s.elements());
  }
  void forward(const LayerArgs& a) override { move(a, true); }
  void backward_weight(const LayerArgs&) override {}
  void backward_input(const LayerArgs& a) override { move(a, false); }

 private:
  // Input k is a batch × len_k matrix; in the output it is the column block [offset_k, offset_k + len_k).
  void move(const LayerArgs& a, bool forward) const {
    ctx_.activate();
    constexpr size_t f = sizeof(float);
    int64_t offset = 0;
    for (size_t k = 0; k < in_per_sample_.size(); ++k) {
      const auto len = static_cast<size_t>(in_per_sample_[k]);
      const auto wide = static_cast<size_t>(out_per_sample_);
      if (forward)
        ST_CUDA_CHECK(cudaMemcpy2DAsync(a.output + offset, wide * f, a.inputs[k], len * f, len * f,
                                        static_cast<size_t>(batch_), cudaMemcpyDeviceToDevice, ctx_.stream));
      else if (a.d_inputs[k] != nullptr)
        ST_CUDA_CHECK(cudaMemcpy2DAsync(a.d_inputs[k], len * f, a.d_output + offset, wide * f, len * f,
                                        static_cast<size_t>(batch_), cudaMemcpyDeviceToDevice, ctx_.stream));
      offset += in_per_sample_[k];
    }
  }
  DeviceContext& ctx_;
  int64_t batch_, out_per_sample_;
  std::vector<int64_t> in_per_sample_;
};

class FlattenKernel : public LayerKernel {
 public:
  FlattenKernel(DeviceContext& ctx, const LayerDesc& d) : ctx_(ctx), n_(d.batch * d.out_shape.elements()) {}
  void forward(const LayerArgs& a) override {
    ctx_.activate();
    copy_floats(ctx_, a.output, a.inputs[0], n_);
  }
  void backward_weight(const LayerArgs&) override {}
  void backward_input(const LayerArgs& a) override {
    if (a.d_inputs[0] == nullptr) return;
    ctx_.activate();
    copy_floats(ctx_, a.d_inputs[0], a.d_output, n_);
  }

 private:
  DeviceContext& ctx_;
  int64_t n_;
};

// dropout draws a mask value per element, drop_path (stochastic depth) one per sample.
class DropoutKernel : public LayerKernel {
 public:
  DropoutKernel(DeviceContext& ctx, const LayerDesc& d)
      : ctx_(ctx),
        n_(d.batch * d.out_shape.elements()),
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
    ctx_.activate();
    if (!training_ || rate_ == 0.0) {
      copy_floats(ctx_, dst, src, n_);
      return;
    }
    launch_dropout(src, dst, n_, per_draw_, seed, rate_, static_cast<float>(1.0 / (1.0 - rate_)), ctx_.stream);
  }
  DeviceContext& ctx_;
  int64_t n_, per_draw_;
  double rate_;
  bool training_;
};

class SoftmaxCrossEntropyKernel : public LayerKernel {
 public:
  SoftmaxCrossEntropyKernel(DeviceContext& ctx, const LayerDesc& d)
      : ctx_(ctx),
        batch_(d.batch),
        classes_(d.out_shape.elements()),
        t_(packed_nchw(d.batch, d.out_shape.elements(), 1, 1, d.layer->name)) {
    ST_ASSERT(d.in_shapes.at(0).elements() == classes_, "softmax cross-entropy changes the class count");
  }
  void forward(const LayerArgs& a) override {
    ctx_.activate();
    const float one = 1.0f, zero = 0.0f;
    ST_CUDNN_CHECK(cudnnSoftmaxForward(ctx_.cudnn, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_INSTANCE, &one,
                                       t_.desc, a.inputs[0], &zero, t_.desc, a.output));
  }
  void backward_weight(const LayerArgs&) override {}
  void backward_input(const LayerArgs& a) override {
    if (a.d_inputs[0] == nullptr) return;
    ST_ASSERT(a.labels != nullptr, "softmax cross-entropy backward without labels");
    ctx_.activate();
    launch_softmax_xent_grad(a.output, a.labels, a.d_inputs[0], batch_, classes_, a.loss_scale, ctx_.stream);
  }

 private:
  DeviceContext& ctx_;
  int64_t batch_, classes_;
  TensorDesc t_;
};

// sigmoid, silu, hardswish: our element-wise kernels (exec/cpu/activation_kernels.cpp has the formulas).
class ActivationKernel : public LayerKernel {
 public:
  ActivationKernel(DeviceContext& ctx, const LayerDesc& d)
      : ctx_(ctx), n_(d.batch * d.out_shape.elements()), f_(activation_of(d.layer->kind)) {}
  void forward(const LayerArgs& a) override {
    ctx_.activate();
    launch_activation(f_, a.inputs[0], a.output, n_, ctx_.stream);
  }
  void backward_weight(const LayerArgs&) override {}
  void backward_input(const LayerArgs& a) override {
    if (a.d_inputs[0] == nullptr) return;
    ctx_.activate();
    launch_activation_grad(f_, a.inputs[0], a.output, a.d_output, a.d_inputs[0], n_, ctx_.stream);
  }

 private:
  static Activation activation_of(models::LayerKind kind) {
    switch (kind) {
      case models::LayerKind::kSigmoid: return Activation::kSigmoid;
      case models::LayerKind::kSilu: return Activation::kSilu;
      default: return Activation::kHardSwish;
    }
  }
  DeviceContext& ctx_;
  int64_t n_;
  Activation f_;
};

// mul: x times a scale of its shape (positions 1) or one per channel (positions H·W), on NCHW activations.
class MulKernel : public LayerKernel {
 public:
  MulKernel(DeviceContext& ctx, const LayerDesc& d) : ctx_(ctx) {
    const bool broadcast = !(d.in_shapes.at(1) == d.in_shapes.at(0));
    positions_ = broadcast ? d.out_shape.h * d.out_shape.w : 1;
    planes_ = d.batch * d.out_shape.elements() / positions_;
  }
  void forward(const LayerArgs& a) override {
    ctx_.activate();
    launch_channel_scale(a.inputs[0], a.inputs[1], a.output, planes_, positions_, ctx_.stream);
  }
  void backward_weight(const LayerArgs&) override {}
  void backward_input(const LayerArgs& a) override {
    ctx_.activate();
    launch_channel_scale_grad(a.inputs[0], a.inputs[1], a.d_output, a.d_inputs[0], a.d_inputs[1], planes_,
                              positions_, ctx_.stream);
  }

 private:
  DeviceContext& ctx_;
  int64_t planes_ = 0, positions_ = 1;
};

}  // namespace

std::unique_ptr<LayerKernel> make_plain_kernel(DeviceContext& ctx, const LayerDesc& desc) {
  using models::LayerKind;
  switch (desc.layer->kind) {
    case LayerKind::kAdd: return std::make_unique<AddKernel>(ctx, desc);
    case LayerKind::kConcat: return std::make_unique<ConcatKernel>(ctx, desc);
    case LayerKind::kFlatten: return std::make_unique<FlattenKernel>(ctx, desc);
    case LayerKind::kDropout:
    case LayerKind::kDropPath: return std::make_unique<DropoutKernel>(ctx, desc);
    case LayerKind::kSoftmaxCrossEntropy: return std::make_unique<SoftmaxCrossEntropyKernel>(ctx, desc);
    case LayerKind::kSigmoid:
    case LayerKind::kSilu:
    case LayerKind::kHardSwish: return std::make_unique<ActivationKernel>(ctx, desc);
    case LayerKind::kMul: return std::make_unique<MulKernel>(ctx, desc);
    default: break;
  }
  ST_ASSERT(false, "not a plain layer: " + desc.layer->name);
  return nullptr;
}

}  // namespace scaletwin::exec::cuda
