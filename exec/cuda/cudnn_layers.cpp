// Batch normalization (spatial: per channel over N·H·W), pooling (max, average with or without the padding
// counted, global average) and ReLU on cuDNN 9, with the semantics of exec/backend.hpp: batch statistics and a
// running update with the unbiased variance when training, running statistics otherwise.
#include "core/error.hpp"
#include "exec/cuda/cuda_check.hpp"
#include "exec/cuda/device_context.hpp"

namespace scaletwin::exec::cuda {
namespace {

class BatchNormKernel : public LayerKernel {
 public:
  BatchNormKernel(DeviceContext& ctx, const LayerDesc& desc)
      : ctx_(ctx), plan_(plan_batchnorm(desc)), x_(plan_.x), param_(plan_.param), training_(desc.training) {
    ST_ASSERT(plan_.eps >= CUDNN_BN_MIN_EPSILON, "batch-norm epsilon below cuDNN's minimum at " + desc.layer->name);
    if (training_) saved_ = DeviceBytes(2 * int64_t{plan_.x.c} * static_cast<int64_t>(sizeof(float)));
  }

  void forward(const LayerArgs& a) override {
    ctx_.activate();
    const float one = 1.0f, zero = 0.0f;
    const int64_t c = plan_.x.c;
    const float* gamma = a.weights;
    const float* beta = a.weights + c;
    if (training_) {
      // Null running statistics are allowed by cuDNN: nothing is updated then (as the CPU backend).
      float* mean = a.state;
      float* var = a.state != nullptr ? a.state + c : nullptr;
      ST_CUDNN_CHECK(cudnnBatchNormalizationForwardTraining(
          ctx_.cudnn, CUDNN_BATCHNORM_SPATIAL, &one, &zero, x_.desc, a.inputs[0], x_.desc, a.output, param_.desc,
          gamma, beta, plan_.momentum, mean, var, plan_.eps, saved_.floats(), saved_.floats() + c));
    } else {
      ST_ASSERT(a.state != nullptr, "batch-norm inference without running statistics");
      ST_CUDNN_CHECK(cudnnBatchNormalizationForwardInference(ctx_.cudnn, CUDNN_BATCHNORM_SPATIAL, &one, &zero,
                                                             x_.desc, a.inputs[0], x_.desc, a.output, param_.desc,
                                                             gamma, beta, a.state, a.state + c, plan_.eps));
    }
  }

  // One call gives both gradients: it runs here (backward_weight comes first), backward_input is a no-op.
  void backward_weight(const LayerArgs& a) override {
    ST_ASSERT(training_, "backward of a batchnorm kernel built for evaluation");
    ctx_.activate();
    float* d_x = a.d_inputs.empty() ? nullptr : a.d_inputs[0];
    if (d_x == nullptr) {
      if (scratch_.bytes() == 0) scratch_ = DeviceBytes(plan_.x.elements() * static_cast<int64_t>(sizeof(float)));
      d_x = scratch_.floats();
    }
    const float one = 1.0f, zero = 0.0f;
    const int64_t c = plan_.x.c;
    ST_CUDNN_CHECK(cudnnBatchNormalizationBackward(ctx_.cudnn, CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one, &zero,
                                                   x_.desc, a.inputs[0], x_.desc, a.d_output, x_.desc, d_x,
                                                   param_.desc, a.weights, a.d_weights, a.d_weights + c, plan_.eps,
                                                   saved_.floats(), saved_.floats() + c));
  }
  void backward_input(const LayerArgs&) override {}

 private:
  DeviceContext& ctx_;
  BatchNormPlan plan_;
  TensorDesc x_, param_;
  bool training_;
  DeviceBytes saved_;    // the batch mean and inverse standard deviation of the last training forward
  DeviceBytes scratch_;  // d_x when the caller wants none
};

cudnnPoolingMode_t pooling_mode(PoolMode mode) {
  switch (mode) {
    case PoolMode::kMax: return CUDNN_POOLING_MAX_DETERMINISTIC;
    case PoolMode::kAverageIncludePad: return CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING;
    case PoolMode::kAverageExcludePad: return CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
  }
  return CUDNN_POOLING_MAX_DETERMINISTIC;
}

class PoolKernel : public LayerKernel {
 public:
  PoolKernel(DeviceContext& ctx, const LayerDesc& desc)
      : ctx_(ctx), plan_(plan_pool(desc)), x_(plan_.x), y_(plan_.y), training_(desc.training) {
    ST_CUDNN_CHECK(cudnnCreatePoolingDescriptor(&pool_));
    ST_CUDNN_CHECK(cudnnSetPooling2dDescriptor(pool_, pooling_mode(plan_.mode), CUDNN_NOT_PROPAGATE_NAN,
                                               plan_.window_h, plan_.window_w, plan_.pad_h, plan_.pad_w,
                                               plan_.stride_h, plan_.stride_w));
  }
  ~PoolKernel() override { cudnnDestroyPoolingDescriptor(pool_); }

  void forward(const LayerArgs& a) override {
    ctx_.activate();
    const float one = 1.0f, zero = 0.0f;
    ST_CUDNN_CHECK(cudnnPoolingForward(ctx_.cudnn, pool_, &one, x_.desc, a.inputs[0], &zero, y_.desc, a.output));
  }
  void backward_weight(const LayerArgs&) override {}
  // cuDNN finds the arg-max again from the forward output (LayerArgs::output) and input.
  void backward_input(const LayerArgs& a) override {
    if (a.d_inputs.empty() || a.d_inputs[0] == nullptr) return;
    ST_ASSERT(training_, "backward of a pooling kernel built for evaluation");
    ctx_.activate();
    const float one = 1.0f, zero = 0.0f;
    ST_CUDNN_CHECK(cudnnPoolingBackward(ctx_.cudnn, pool_, &one, y_.desc, a.output, y_.desc, a.d_output, x_.desc,
                                        a.inputs[0], &zero, x_.desc, a.d_inputs[0]));
  }

 private:
  DeviceContext& ctx_;
  PoolPlan plan_;
  TensorDesc x_, y_;
  bool training_;
  cudnnPoolingDescriptor_t pool_ = nullptr;
};

class ReluKernel : public LayerKernel {
 public:
  ReluKernel(DeviceContext& ctx, const LayerDesc& desc)
      : ctx_(ctx),
        t_(packed_nchw(desc.batch, desc.out_shape.c, desc.out_shape.h, desc.out_shape.w, desc.layer->name)),
        training_(desc.training) {
    ST_CUDNN_CHECK(cudnnCreateActivationDescriptor(&act_));
    ST_CUDNN_CHECK(cudnnSetActivationDescriptor(act_, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0));
  }
  ~ReluKernel() override { cudnnDestroyActivationDescriptor(act_); }

  void forward(const LayerArgs& a) override {
    ctx_.activate();
    const float one = 1.0f, zero = 0.0f;
    ST_CUDNN_CHECK(cudnnActivationForward(ctx_.cudnn, act_, &one, t_.desc, a.inputs[0], &zero, t_.desc, a.output));
  }
  void backward_weight(const LayerArgs&) override {}
  void backward_input(const LayerArgs& a) override {
    if (a.d_inputs.empty() || a.d_inputs[0] == nullptr) return;
    ST_ASSERT(training_, "backward of a relu kernel built for evaluation");
    ctx_.activate();
    const float one = 1.0f, zero = 0.0f;
    ST_CUDNN_CHECK(cudnnActivationBackward(ctx_.cudnn, act_, &one, t_.desc, a.output, t_.desc, a.d_output, t_.desc,
                                           a.inputs[0], &zero, t_.desc, a.d_inputs[0]));
  }

 private:
  DeviceContext& ctx_;
  TensorDesc t_;
  bool training_;
  cudnnActivationDescriptor_t act_ = nullptr;
};

}  // namespace

std::unique_ptr<LayerKernel> make_batchnorm_kernel(DeviceContext& ctx, const LayerDesc& desc) {
  return std::make_unique<BatchNormKernel>(ctx, desc);
}
std::unique_ptr<LayerKernel> make_pool_kernel(DeviceContext& ctx, const LayerDesc& desc) {
  return std::make_unique<PoolKernel>(ctx, desc);
}
std::unique_ptr<LayerKernel> make_relu_kernel(DeviceContext& ctx, const LayerDesc& desc) {
  return std::make_unique<ReluKernel>(ctx, desc);
}

}  // namespace scaletwin::exec::cuda
