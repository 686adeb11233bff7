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

// A tensor that a primitive may want in another layout than the caller's plain one: wraps the caller's pointer
// when the layouts agree, else stages through an internal buffer with a reorder.
class Staged {
 public:
  Staged() = default;
  Staged(const DnnlContext& ctx, const memory::desc& user, const memory::desc& wanted) : ctx_(&ctx), user_(user) {
    if (wanted == user) return;
    internal_ = memory(wanted, ctx.engine);
    to_internal_ = dnnl::reorder(dnnl::reorder::primitive_desc(ctx.engine, user, ctx.engine, wanted));
    to_user_ = dnnl::reorder(dnnl::reorder::primitive_desc(ctx.engine, wanted, ctx.engine, user));
  }
  // The memory to pass as an input, after reordering the caller's data into it when needed.
  memory input(const float* data) {
    if (!internal_) return wrap(*ctx_, user_, data);
    to_internal_.execute(ctx_->stream, {{DNNL_ARG_FROM, wrap(*ctx_, user_, data)}, {DNNL_ARG_TO, *internal_}});
    return *internal_;
  }
  // The memory to pass as an output; finish() copies it to the caller's buffer.
  memory output(float* data) const { return internal_ ? *internal_ : wrap(*ctx_, user_, data); }
  void finish(float* data) const {
    if (internal_)
      to_user_.execute(ctx_->stream, {{DNNL_ARG_FROM, *internal_}, {DNNL_ARG_TO, wrap(*ctx_, user_, data)}});
  }
  // The staged copy itself (valid after input()), for a second primitive that wants the same layout.
  memory staged(const float* data) const { return internal_ ? *internal_ : wrap(*ctx_, user_, data); }
  bool same_layout(const memory::desc& wanted) const {
    return internal_ ? internal_->get_desc() == wanted : wanted == user_;
  }

 private:
  const DnnlContext* ctx_ = nullptr;
  memory::desc user_;
  std::optional<memory> internal_;
  dnnl::reorder to_internal_, to_user_;
};

// Convolution with the layouts oneDNN prefers (blocked, "any"): the caller's activations already in the blocked
// layout (LayerDesc::in_blocks, out_block) are used in place; plain NCHW ones and the OIHW weights are reordered
// in and out around the primitives. The staged input and weights of the forward are reused by the
// backward (a kernel's weights do not change between a forward and its backward), and the staged output
// gradient by both backward primitives.
class ConvKernel : public LayerKernel {
 public:
  ConvKernel(const DnnlContext& ctx, const LayerDesc& desc) : ctx_(ctx) {
    using namespace dnnl;
    const models::ConvParams& p = desc.layer->conv;
    const models::Shape& in = desc.in_shapes.at(0);
    const models::Shape& out = desc.out_shape;
    ST_ASSERT(p.groups >= 1 && in.c % p.groups == 0 && out.c % p.groups == 0, "bad conv groups");
    const int in_block = desc.in_blocks.empty() ? 0 : desc.in_blocks[0];
    const memory::desc src = activation_md(nchw_dims(desc.batch, in), in_block);
    const memory::desc dst = activation_md(nchw_dims(desc.batch, out), desc.out_block);
    const memory::dims wdims = p.groups == 1
                                   ? memory::dims{out.c, in.c, p.kernel_h, p.kernel_w}
                                   : memory::dims{p.groups, out.c / p.groups, in.c / p.groups, p.kernel_h, p.kernel_w};
    const memory::desc weights = plain_md(wdims);
    if (p.bias) bias_ = plain_md({out.c});
    weight_count_ = out.c * (in.c / p.groups) * p.kernel_h * p.kernel_w;
    // Blocked activations are what the primitives prefer: given as they are. Plain ones and the weights: "any".
    const auto any = [](const memory::desc& md) {
      if (md.data.format_desc.blocking.inner_nblks > 0) return md;
      return memory::desc(md.dims(), memory::data_type::f32, memory::format_tag::any);
    };
    const int64_t window_h = (p.kernel_h - 1) * p.dilation_h + 1, window_w = (p.kernel_w - 1) * p.dilation_w + 1;
    const memory::dims strides{p.stride_h, p.stride_w}, dilates{p.dilation_h - 1, p.dilation_w - 1};
    const memory::dims pad_l{p.pad_h, p.pad_w};
    const memory::dims pad_r{right_padding(in.h, out.h, window_h, p.stride_h, p.pad_h),
                             right_padding(in.w, out.w, window_w, p.stride_w, p.pad_w)};
    const auto prop = desc.training ? prop_kind::forward_training : prop_kind::forward_inference;
    const convolution_forward::primitive_desc fwd(
        {prop, algorithm::convolution_direct, any(src), any(weights), bias_, any(dst), strides, dilates, pad_l, pad_r},
        ctx.engine);
    fwd_ = convolution_forward(fwd);
    src_ = Staged(ctx_, src, fwd.src_desc());
    weights_ = Staged(ctx_, weights, fwd.weights_desc());
    dst_ = Staged(ctx_, dst, fwd.dst_desc());
    if (!desc.training) return;
    const convolution_backward_data::primitive_desc bwd_data(
        {algorithm::convolution_direct, any(src), any(weights), any(dst), strides, dilates, pad_l, pad_r}, ctx.engine,
        fwd);
    const convolution_backward_weights::primitive_desc bwd_weights(
        {algorithm::convolution_direct, any(src), any(weights), bias_, any(dst), strides, dilates, pad_l, pad_r},
        ctx.engine, fwd);
    bwd_data_ = convolution_backward_data(bwd_data);
    bwd_weights_ = convolution_backward_weights(bwd_weights);
    d_src_ = Staged(ctx_, src, bwd_data.diff_src_desc());
    d_dst_data_ = Staged(ctx_, dst, bwd_data.diff_dst_desc());
    d_dst_weights_ = Staged(ctx_, dst, bwd_weights.diff_dst_desc());
    d_weights_ = Staged(ctx_, weights, bwd_weights.diff_weights_desc());
    weights_bwd_ = Staged(ctx_, weights, bwd_data.weights_desc());
    src_bwd_ = Staged(ctx_, src, bwd_weights.src_desc());
    reuse_weights_ = weights_.same_layout(bwd_data.weights_desc());
    reuse_src_ = src_.same_layout(bwd_weights.src_desc());
    reuse_d_dst_ = d_dst_weights_.same_layout(bwd_data.diff_dst_desc());
  }

  void forward(const LayerArgs& a) override {
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src_.input(a.inputs[0])},
                                         {DNNL_ARG_WEIGHTS, weights_.input(a.weights)},
                                         {DNNL_ARG_DST, dst_.output(a.output)}};
    if (!bias_.is_zero()) args.emplace(DNNL_ARG_BIAS, wrap(ctx_, bias_, a.weights + weight_count_));
    fwd_.execute(ctx_.stream, args);
    dst_.finish(a.output);
    d_dst_staged_ = false;
  }

  void backward_weight(const LayerArgs& a) override {
    ST_ASSERT(bwd_weights_.has_value(), "backward of a conv kernel built for evaluation");
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, reuse_src_ ? src_.staged(a.inputs[0]) : src_bwd_.input(a.inputs[0])},
        {DNNL_ARG_DIFF_DST, stage_d_dst(a.d_output)},
        {DNNL_ARG_DIFF_WEIGHTS, d_weights_.output(a.d_weights)}};
    if (!bias_.is_zero()) args.emplace(DNNL_ARG_DIFF_BIAS, wrap(ctx_, bias_, a.d_weights + weight_count_));
    bwd_weights_->execute(ctx_.stream, args);
    d_weights_.finish(a.d_weights);
  }

  void backward_input(const LayerArgs& a) override {
    if (a.d_inputs.empty() || a.d_inputs[0] == nullptr) return;
    ST_ASSERT(bwd_data_.has_value(), "backward of a conv kernel built for evaluation");
    const memory d_dst =
        reuse_d_dst_ && d_dst_staged_ ? d_dst_weights_.staged(a.d_output) : d_dst_data_.input(a.d_output);
    bwd_data_->execute(ctx_.stream,
                       {{DNNL_ARG_DIFF_DST, d_dst},
                        {DNNL_ARG_WEIGHTS, reuse_weights_ ? weights_.staged(a.weights) : weights_bwd_.input(a.weights)},
                        {DNNL_ARG_DIFF_SRC, d_src_.output(a.d_inputs[0])}});
    d_src_.finish(a.d_inputs[0]);
  }

 private:
  memory stage_d_dst(const float* d_output) {
    d_dst_staged_ = true;
    return d_dst_weights_.input(d_output);
  }

  DnnlContext ctx_;
  memory::desc bias_;
  int64_t weight_count_ = 0;
  dnnl::convolution_forward fwd_;
  std::optional<dnnl::convolution_backward_data> bwd_data_;
  std::optional<dnnl::convolution_backward_weights> bwd_weights_;
  Staged src_, weights_, dst_, d_src_, d_dst_data_, d_dst_weights_, d_weights_, weights_bwd_, src_bwd_;
  bool reuse_weights_ = false, reuse_src_ = false, reuse_d_dst_ = false, d_dst_staged_ = false;
};

}  // namespace

std::unique_ptr<LayerKernel> make_conv_kernel(const DnnlContext& ctx, const LayerDesc& desc) {
  return std::make_unique<ConvKernel>(ctx, desc);
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
    bwd_weights.emplace(inner_product_backward_weights::desc(mds.src, mds.weights, mds.bias, mds.dst), ctx.engine, fwd);
  }
  return std::make_unique<
      WeightedKernel<inner_product_forward, inner_product_backward_data, inner_product_backward_weights>>(
      ctx, mds, out * in, fwd, bwd_data, bwd_weights);
}

}  // namespace scaletwin::exec::cpu
