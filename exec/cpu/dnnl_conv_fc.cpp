// Convolution (groups, stride, padding, dilation, optional bias) and fully connected layers on oneDNN
// primitives: forward, backward-data and backward-weights, each built once per kernel.
#include <optional>

#include "core/error.hpp"
#include "exec/cpu/dnnl_kernels.hpp"

namespace scaletwin::exec::cpu {
namespace {

using dnnl::memory;
using dnnl::prop_kind;

// The descriptors both layers share: src, weights, bias (empty when none), dst.
struct Mds {
  memory::desc src, weights, bias, dst;
};

// Runs the three primitives of a layer whose arguments are (src, weights, bias, dst).
template <class Fwd, class BwdData, class BwdWeights>
class WeightedKernel : public LayerKernel {
 public:
  WeightedKernel(const DnnlContext& ctx, const Mds& mds, int64_t weight_count, typename Fwd::primitive_desc fwd,
                 std::optional<typename BwdData::primitive_desc> bwd_data,
                 std::optional<typename BwdWeights::primitive_desc> bwd_weights)
      : ctx_(ctx), mds_(mds), weight_count_(weight_count), fwd_(fwd) {
    if (bwd_data) bwd_data_ = BwdData(*bwd_data);
    if (bwd_weights) bwd_weights_ = BwdWeights(*bwd_weights);
  }

  void forward(const LayerArgs& a) override {
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, wrap(ctx_, mds_.src, a.inputs[0])},
                                         {DNNL_ARG_WEIGHTS, wrap(ctx_, mds_.weights, a.weights)},
                                         {DNNL_ARG_DST, wrap(ctx_, mds_.dst, a.output)}};
    if (has_bias()) args.emplace(DNNL_ARG_BIAS, wrap(ctx_, mds_.bias, a.weights + weight_count_));
    fwd_.execute(ctx_.stream, args);
  }

  void backward_input(const LayerArgs& a) override {
    if (a.d_inputs.empty() || a.d_inputs[0] == nullptr) return;
    ST_ASSERT(bwd_data_.has_value(), "backward of a kernel built for evaluation");
    bwd_data_->execute(ctx_.stream, {{DNNL_ARG_DIFF_DST, wrap(ctx_, mds_.dst, a.d_output)},
                                     {DNNL_ARG_WEIGHTS, wrap(ctx_, mds_.weights, a.weights)},
                                     {DNNL_ARG_DIFF_SRC, wrap(ctx_, mds_.src, a.d_inputs[0])}});
  }

  void backward_weight(const LayerArgs& a) override {
    ST_ASSERT(bwd_weights_.has_value(), "backward of a kernel built for evaluation");
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, wrap(ctx_, mds_.src, a.inputs[0])},
                                         {DNNL_ARG_DIFF_DST, wrap(ctx_, mds_.dst, a.d_output)},
                                         {DNNL_ARG_DIFF_WEIGHTS, wrap(ctx_, mds_.weights, a.d_weights)}};
    if (has_bias()) args.emplace(DNNL_ARG_DIFF_BIAS, wrap(ctx_, mds_.bias, a.d_weights + weight_count_));
    bwd_weights_->execute(ctx_.stream, args);
  }

 private:
  bool has_bias() const { return !mds_.bias.is_zero(); }

  DnnlContext ctx_;
  Mds mds_;
  int64_t weight_count_;
  Fwd fwd_;
  std::optional<BwdData> bwd_data_;
  std::optional<BwdWeights> bwd_weights_;
};

}  // namespace

std::unique_ptr<LayerKernel> make_conv_kernel(const DnnlContext& ctx, const LayerDesc& desc) {
  using namespace dnnl;
  const models::ConvParams& p = desc.layer->conv;
  const models::Shape& in = desc.in_shapes.at(0);
  const models::Shape& out = desc.out_shape;
  ST_ASSERT(p.groups >= 1 && in.c % p.groups == 0 && out.c % p.groups == 0, "bad conv groups");
  Mds mds;
  mds.src = plain_md(nchw_dims(desc.batch, in));
  mds.dst = plain_md(nchw_dims(desc.batch, out));
  mds.weights = p.groups == 1 ? plain_md({out.c, in.c, p.kernel_h, p.kernel_w})
                              : plain_md({p.groups, out.c / p.groups, in.c / p.groups, p.kernel_h, p.kernel_w});
  if (p.bias) mds.bias = plain_md({out.c});
  const int64_t weight_count = out.c * (in.c / p.groups) * p.kernel_h * p.kernel_w;
  const int64_t window_h = (p.kernel_h - 1) * p.dilation_h + 1, window_w = (p.kernel_w - 1) * p.dilation_w + 1;
  const memory::dims strides{p.stride_h, p.stride_w}, dilates{p.dilation_h - 1, p.dilation_w - 1};
  const memory::dims pad_l{p.pad_h, p.pad_w};
  const memory::dims pad_r{right_padding(in.h, out.h, window_h, p.stride_h, p.pad_h),
                           right_padding(in.w, out.w, window_w, p.stride_w, p.pad_w)};
  const auto prop = desc.training ? prop_kind::forward_training : prop_kind::forward_inference;
  const convolution_forward::primitive_desc fwd(
      {prop, algorithm::convolution_direct, mds.src, mds.weights, mds.bias, mds.dst, strides, dilates, pad_l, pad_r},
      ctx.engine);
  std::optional<convolution_backward_data::primitive_desc> bwd_data;
  std::optional<convolution_backward_weights::primitive_desc> bwd_weights;
  if (desc.training) {
    bwd_data.emplace(convolution_backward_data::desc(algorithm::convolution_direct, mds.src, mds.weights, mds.dst,
                                                     strides, dilates, pad_l, pad_r),
                     ctx.engine, fwd);
    bwd_weights.emplace(convolution_backward_weights::desc(algorithm::convolution_direct, mds.src, mds.weights,
                                                           mds.bias, mds.dst, strides, dilates, pad_l, pad_r),
                        ctx.engine, fwd);
  }
  return std::make_unique<
      WeightedKernel<convolution_forward, convolution_backward_data, convolution_backward_weights>>(
      ctx, mds, weight_count, fwd, bwd_data, bwd_weights);
}

std::unique_ptr<LayerKernel> make_fc_kernel(const DnnlContext& ctx, const LayerDesc& desc) {
  using namespace dnnl;
  const int64_t in = desc.in_shapes.at(0).elements();
  const int64_t out = desc.out_shape.elements();
  Mds mds;
  mds.src = plain_md({desc.batch, in});
  mds.dst = plain_md({desc.batch, out});
  mds.weights = plain_md({out, in});
  if (desc.layer->fc.bias) mds.bias = plain_md({out});
  const auto prop = desc.training ? prop_kind::forward_training : prop_kind::forward_inference;
  const inner_product_forward::primitive_desc fwd({prop, mds.src, mds.weights, mds.bias, mds.dst}, ctx.engine);
  std::optional<inner_product_backward_data::primitive_desc> bwd_data;
  std::optional<inner_product_backward_weights::primitive_desc> bwd_weights;
  if (desc.training) {
    bwd_data.emplace(inner_product_backward_data::desc(mds.src, mds.weights, mds.dst), ctx.engine, fwd);
    bwd_weights.emplace(inner_product_backward_weights::desc(mds.src, mds.weights, mds.bias, mds.dst), ctx.engine,
                        fwd);
  }
  return std::make_unique<
      WeightedKernel<inner_product_forward, inner_product_backward_data, inner_product_backward_weights>>(
      ctx, mds, out * in, fwd, bwd_data, bwd_weights);
}

}  // namespace scaletwin::exec::cpu
