// Batch normalization (training with batch statistics and running-statistics update, or evaluation with the
// running statistics), pooling (max, average, global average) and ReLU on oneDNN primitives. Batch norm and
// pooling take plain or blocked activations (LayerDesc::in_blocks); ReLU is element-wise, any layout.
#include <optional>
#include <vector>

#include "core/error.hpp"
#include "exec/cpu/dnnl_kernels.hpp"

namespace scaletwin::exec::cpu {
namespace {

using dnnl::memory;
using dnnl::prop_kind;

class BatchNormKernel : public LayerKernel {
 public:
  BatchNormKernel(const DnnlContext& ctx, const LayerDesc& desc) : ctx_(ctx) {
    using namespace dnnl;
    const models::Shape& s = desc.in_shapes.at(0);
    channels_ = s.c;
    count_ = desc.batch * s.h * s.w;
    momentum_ = static_cast<float>(desc.layer->bn_momentum);
    training_ = desc.training;
    ST_ASSERT(desc.in_blocks.empty() || desc.in_blocks[0] == desc.out_block, "batch norm changing the layout");
    data_md_ = activation_md(nchw_dims(desc.batch, s), desc.out_block);
    stat_md_ = plain_md({channels_});
    scale_shift_md_ = plain_md({2, channels_});
    const float eps = static_cast<float>(desc.layer->bn_eps);
    if (training_) {
      const auto flags = normalization_flags::use_scale_shift;
      const batch_normalization_forward::primitive_desc fwd({prop_kind::forward_training, data_md_, eps, flags},
                                                            ctx.engine);
      fwd_ = batch_normalization_forward(fwd);
      bwd_ = batch_normalization_backward(batch_normalization_backward::primitive_desc(
          {prop_kind::backward, data_md_, data_md_, eps, flags}, ctx.engine, fwd));
      mean_.resize(channels_);
      var_.resize(channels_);
    } else {
      const auto flags = normalization_flags::use_scale_shift | normalization_flags::use_global_stats;
      fwd_ = batch_normalization_forward(batch_normalization_forward::primitive_desc(
          {prop_kind::forward_inference, data_md_, eps, flags}, ctx.engine));
    }
  }

  void forward(const LayerArgs& a) override {
    const float* mean = training_ ? mean_.data() : a.state;
    const float* var = training_ ? var_.data() : a.state + channels_;
    fwd_.execute(ctx_.stream, {{DNNL_ARG_SRC, wrap(ctx_, data_md_, a.inputs[0])},
                               {DNNL_ARG_DST, wrap(ctx_, data_md_, a.output)},
                               {DNNL_ARG_SCALE_SHIFT, wrap(ctx_, scale_shift_md_, a.weights)},
                               {DNNL_ARG_MEAN, wrap(ctx_, stat_md_, mean)},
                               {DNNL_ARG_VARIANCE, wrap(ctx_, stat_md_, var)}});
    if (training_ && a.state != nullptr) {
      ctx_.stream.wait();
      update_running(a.state);
    }
  }

  // One primitive gives both gradients: it runs here (backward_weight comes first), backward_input is a no-op.
  void backward_weight(const LayerArgs& a) override {
    ST_ASSERT(training_, "backward of a batchnorm kernel built for evaluation");
    float* d_src = a.d_inputs.empty() ? nullptr : a.d_inputs[0];
    if (d_src == nullptr) {
      scratch_.resize(static_cast<size_t>(count_ * channels_));
      d_src = scratch_.data();
    }
    bwd_->execute(ctx_.stream, {{DNNL_ARG_SRC, wrap(ctx_, data_md_, a.inputs[0])},
                                {DNNL_ARG_MEAN, wrap(ctx_, stat_md_, mean_.data())},
                                {DNNL_ARG_VARIANCE, wrap(ctx_, stat_md_, var_.data())},
                                {DNNL_ARG_DIFF_DST, wrap(ctx_, data_md_, a.d_output)},
                                {DNNL_ARG_SCALE_SHIFT, wrap(ctx_, scale_shift_md_, a.weights)},
                                {DNNL_ARG_DIFF_SRC, wrap(ctx_, data_md_, d_src)},
                                {DNNL_ARG_DIFF_SCALE_SHIFT, wrap(ctx_, scale_shift_md_, a.d_weights)}});
  }
  void backward_input(const LayerArgs&) override {}

 private:
  // running = (1 - momentum) * running + momentum * batch, with the unbiased batch variance (as PyTorch).
  void update_running(float* state) const {
    const float unbias = count_ > 1 ? static_cast<float>(count_) / static_cast<float>(count_ - 1) : 1.0f;
    for (int64_t c = 0; c < channels_; ++c) {
      state[c] = (1 - momentum_) * state[c] + momentum_ * mean_[c];
      state[channels_ + c] = (1 - momentum_) * state[channels_ + c] + momentum_ * var_[c] * unbias;
    }
  }

  DnnlContext ctx_;
  int64_t channels_ = 0, count_ = 0;
  float momentum_ = 0.1f;
  bool training_ = true;
  memory::desc data_md_, stat_md_, scale_shift_md_;
  dnnl::batch_normalization_forward fwd_;
  std::optional<dnnl::batch_normalization_backward> bwd_;
  std::vector<float> mean_, var_, scratch_;
};

class PoolKernel : public LayerKernel {
 public:
  PoolKernel(const DnnlContext& ctx, const LayerDesc& desc) : ctx_(ctx) {
    using namespace dnnl;
    const models::Layer& layer = *desc.layer;
    const models::Shape& in = desc.in_shapes.at(0);
    src_md_ = activation_md(nchw_dims(desc.batch, in), desc.in_blocks.empty() ? 0 : desc.in_blocks[0]);
    dst_md_ = activation_md(nchw_dims(desc.batch, desc.out_shape), desc.out_block);
    models::PoolParams p = layer.pool;
    if (layer.kind == models::LayerKind::kGlobalAvgPool) p = {in.h, in.w, 1, 1, 0, 0, false, true};
    const auto alg = layer.kind == models::LayerKind::kMaxPool ? algorithm::pooling_max
                     : p.count_include_pad                     ? algorithm::pooling_avg_include_padding
                                                               : algorithm::pooling_avg_exclude_padding;
    const memory::dims strides{p.stride_h, p.stride_w}, kernel{p.kernel_h, p.kernel_w}, pad_l{p.pad_h, p.pad_w};
    const memory::dims pad_r{right_padding(in.h, desc.out_shape.h, p.kernel_h, p.stride_h, p.pad_h),
                             right_padding(in.w, desc.out_shape.w, p.kernel_w, p.stride_w, p.pad_w)};
    const auto prop = desc.training ? prop_kind::forward_training : prop_kind::forward_inference;
    const pooling_forward::primitive_desc fwd({prop, alg, src_md_, dst_md_, strides, kernel, pad_l, pad_r}, ctx.engine);
    fwd_ = pooling_forward(fwd);
    if (desc.training) {
      bwd_ = pooling_backward(
          pooling_backward::primitive_desc({alg, src_md_, dst_md_, strides, kernel, pad_l, pad_r}, ctx.engine, fwd));
      if (alg == algorithm::pooling_max) {
        workspace_ = memory(fwd.workspace_desc(), ctx.engine);
      }
    }
  }

  void forward(const LayerArgs& a) override {
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, wrap(ctx_, src_md_, a.inputs[0])},
                                         {DNNL_ARG_DST, wrap(ctx_, dst_md_, a.output)}};
    if (workspace_) args.emplace(DNNL_ARG_WORKSPACE, *workspace_);
    fwd_.execute(ctx_.stream, args);
  }
  void backward_weight(const LayerArgs&) override {}
  void backward_input(const LayerArgs& a) override {
    if (a.d_inputs.empty() || a.d_inputs[0] == nullptr) return;
    ST_ASSERT(bwd_.has_value(), "backward of a pooling kernel built for evaluation");
    std::unordered_map<int, memory> args{{DNNL_ARG_DIFF_DST, wrap(ctx_, dst_md_, a.d_output)},
                                         {DNNL_ARG_DIFF_SRC, wrap(ctx_, src_md_, a.d_inputs[0])}};
    if (workspace_) args.emplace(DNNL_ARG_WORKSPACE, *workspace_);
    bwd_->execute(ctx_.stream, args);
  }

 private:
  DnnlContext ctx_;
  memory::desc src_md_, dst_md_;
  dnnl::pooling_forward fwd_;
  std::optional<dnnl::pooling_backward> bwd_;
  std::optional<memory> workspace_;
};

class ReluKernel : public LayerKernel {
 public:
  ReluKernel(const DnnlContext& ctx, const LayerDesc& desc) : ctx_(ctx) {
    using namespace dnnl;
    md_ = plain_md({desc.batch * desc.out_shape.elements()});
    const auto prop = desc.training ? prop_kind::forward_training : prop_kind::forward_inference;
    const eltwise_forward::primitive_desc fwd({prop, algorithm::eltwise_relu, md_, 0.0f, 0.0f}, ctx.engine);
    fwd_ = eltwise_forward(fwd);
    if (desc.training) {
      bwd_ = eltwise_backward(
          eltwise_backward::primitive_desc({algorithm::eltwise_relu, md_, md_, 0.0f, 0.0f}, ctx.engine, fwd));
    }
  }
  void forward(const LayerArgs& a) override {
    fwd_.execute(ctx_.stream,
                 {{DNNL_ARG_SRC, wrap(ctx_, md_, a.inputs[0])}, {DNNL_ARG_DST, wrap(ctx_, md_, a.output)}});
  }
  void backward_weight(const LayerArgs&) override {}
  void backward_input(const LayerArgs& a) override {
    if (a.d_inputs.empty() || a.d_inputs[0] == nullptr) return;
    ST_ASSERT(bwd_.has_value(), "backward of a relu kernel built for evaluation");
    bwd_->execute(ctx_.stream, {{DNNL_ARG_SRC, wrap(ctx_, md_, a.inputs[0])},
                                {DNNL_ARG_DIFF_DST, wrap(ctx_, md_, a.d_output)},
                                {DNNL_ARG_DIFF_SRC, wrap(ctx_, md_, a.d_inputs[0])}});
  }

 private:
  DnnlContext ctx_;
  memory::desc md_;
  dnnl::eltwise_forward fwd_;
  std::optional<dnnl::eltwise_backward> bwd_;
};

}  // namespace

std::unique_ptr<LayerKernel> make_batchnorm_kernel(const DnnlContext& ctx, const LayerDesc& desc) {
  return std::make_unique<BatchNormKernel>(ctx, desc);
}
std::unique_ptr<LayerKernel> make_pool_kernel(const DnnlContext& ctx, const LayerDesc& desc) {
  return std::make_unique<PoolKernel>(ctx, desc);
}
std::unique_ptr<LayerKernel> make_relu_kernel(const DnnlContext& ctx, const LayerDesc& desc) {
  return std::make_unique<ReluKernel>(ctx, desc);
}

}  // namespace scaletwin::exec::cpu
