// Convolution on cuDNN 9 (legacy API): forward, backward-data and backward-filter, each with its algorithm chosen
// once per shape (conv_shape_key: kernels of equal shapes share the search) by the workspace policy of
// layer_plan.hpp (cuDNN's heuristics, or timed runs with CudaOptions::benchmark_algorithms), and the bias through
// cudnnAddTensor / cudnnConvolutionBackwardBias. In mixed precision (CudaPrecision kBf16, kFp16) each direction
// casts its two fp32 operands into the context's half scratch (half_scratch_layout), convolves 2-byte tensors on
// the tensor cores with fp32 accumulation (cuDNN's PSEUDO_BFLOAT16 / PSEUDO_HALF configurations) and widens the
// result into the fp32 buffer; the bias stays fp32. Each direction runs under the math type cuDNN evaluated its
// algorithm under (the perf result's mathType, as PyTorch's cuDNN convolutions do: a descriptor left at another
// math type may run a different kernel with another workspace), except that fp32 without TF32 stays FMA.
#include <algorithm>
#include <vector>

#include "core/error.hpp"
#include "exec/cuda/cuda_check.hpp"
#include "exec/cuda/device_context.hpp"
#include "exec/cuda/kernels.hpp"

namespace scaletwin::exec::cuda {
namespace {

template <class Perf>
std::vector<AlgorithmOption> to_options(const Perf* perf, int count) {
  std::vector<AlgorithmOption> options;
  for (int i = 0; i < count; ++i)
    options.push_back({static_cast<int>(perf[i].algo), static_cast<int64_t>(perf[i].memory),
                       perf[i].status == CUDNN_STATUS_SUCCESS, static_cast<int>(perf[i].mathType)});
  return options;
}

// The option choose_algorithm picks, under the math type cuDNN evaluated it with; `fma_only` (fp32 without TF32)
// keeps CUDNN_FMA_MATH whatever the entry says.
ConvChoice pick(const std::vector<AlgorithmOption>& options, int64_t limit, bool fma_only) {
  const AlgorithmOption& o = options[choose_algorithm(options, limit)];
  return {o.algorithm, o.workspace_bytes, fma_only ? static_cast<int>(CUDNN_FMA_MATH) : o.math};
}

class ConvKernel : public LayerKernel {
 public:
  ConvKernel(DeviceContext& ctx, const LayerDesc& desc)
      : ctx_(ctx),
        plan_(plan_conv(desc)),
        half_(ctx.half()),
        type_(half_ ? ctx.cudnn_half_type() : CUDNN_DATA_FLOAT),
        x_(plan_.x, type_),
        y_(plan_.y, type_),
        y32_(plan_.y),
        bias_(plan_.bias),
        scratch_(half_scratch_layout(plan_)) {
    ST_CUDNN_CHECK(cudnnCreateFilterDescriptor(&w_));
    ST_CUDNN_CHECK(cudnnSetFilter4dDescriptor(w_, type_, CUDNN_TENSOR_NCHW, plan_.w.k, plan_.w.c, plan_.w.r,
                                              plan_.w.s));
    ST_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&conv_));
    ST_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(conv_, plan_.pad_h, plan_.pad_w, plan_.stride_h, plan_.stride_w,
                                                   plan_.dilation_h, plan_.dilation_w, CUDNN_CROSS_CORRELATION,
                                                   CUDNN_DATA_FLOAT));
    ST_CUDNN_CHECK(cudnnSetConvolutionGroupCount(conv_, plan_.groups));
    // fp32 accumulation either way; tensor cores for 2-byte tensors, and for fp32 ones (TF32) when allowed.
    fma_only_ = !half_ && !ctx.options.allow_tf32;
    ST_CUDNN_CHECK(cudnnSetConvolutionMathType(
        conv_, half_ ? CUDNN_TENSOR_OP_MATH : fma_only_ ? CUDNN_FMA_MATH : CUDNN_DEFAULT_MATH));
    if (half_) ctx.reserve_half_scratch(scratch_.elements);
    int n = 0, c = 0, h = 0, w = 0;
    ST_CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(conv_, x_.desc, w_, &n, &c, &h, &w));
    ST_ASSERT(n == plan_.y.n && c == plan_.y.c && h == plan_.y.h && w == plan_.y.w,
              "cuDNN's convolution output differs from the model's shape at " + desc.layer->name);
    choose(desc.training);
  }
  ~ConvKernel() override {
    cudnnDestroyConvolutionDescriptor(conv_);
    cudnnDestroyFilterDescriptor(w_);
  }

  void forward(const LayerArgs& a) override {
    ctx_.activate();
    const float one = 1.0f, zero = 0.0f;
    const void* x = a.inputs[0];
    const void* w = a.weights;
    void* y = a.output;
    if (half_) {
      ctx_.half_state.begin(this, nullptr);
      x = ctx_.to_half(a.inputs[0], 0, plan_.x.elements());
      w = ctx_.to_half(a.weights, scratch_.w_offset, plan_.weight_count);
      y = ctx_.half_at(scratch_.y_offset);
    }
    use_math(fwd_);
    ST_CUDNN_CHECK(cudnnConvolutionForward(ctx_.cudnn, &one, x_.desc, x, w_, w, conv_,
                                           static_cast<cudnnConvolutionFwdAlgo_t>(fwd_.algorithm),
                                           ctx_.workspace.data(), static_cast<size_t>(fwd_.workspace_bytes), &zero,
                                           y_.desc, y));
    if (half_) launch_from_half(y, a.output, plan_.y.elements(), ctx_.half_type(), ctx_.stream);
    if (plan_.has_bias)
      ST_CUDNN_CHECK(cudnnAddTensor(ctx_.cudnn, &one, bias_.desc, a.weights + plan_.weight_count, &one, y32_.desc,
                                    a.output));
  }

  void backward_weight(const LayerArgs& a) override {
    ST_ASSERT(training_, "backward of a convolution kernel built for evaluation");
    ctx_.activate();
    const float one = 1.0f, zero = 0.0f;
    const void* x = a.inputs[0];
    const void* dy = a.d_output;
    void* dw = a.d_weights;
    if (half_) {
      dy = ctx_.output_gradient_to_half(this, a.d_output, scratch_.y_offset, plan_.y.elements());
      x = ctx_.to_half(a.inputs[0], 0, plan_.x.elements());
      dw = ctx_.half_at(scratch_.w_offset);
    }
    use_math(filter_);
    ST_CUDNN_CHECK(cudnnConvolutionBackwardFilter(ctx_.cudnn, &one, x_.desc, x, y_.desc, dy, conv_,
                                                  static_cast<cudnnConvolutionBwdFilterAlgo_t>(filter_.algorithm),
                                                  ctx_.workspace.data(), static_cast<size_t>(filter_.workspace_bytes),
                                                  &zero, w_, dw));
    if (half_) launch_from_half(dw, a.d_weights, plan_.weight_count, ctx_.half_type(), ctx_.stream);
    if (plan_.has_bias)
      ST_CUDNN_CHECK(cudnnConvolutionBackwardBias(ctx_.cudnn, &one, y32_.desc, a.d_output, &zero, bias_.desc,
                                                  a.d_weights + plan_.weight_count));
  }

  void backward_input(const LayerArgs& a) override {
    if (a.d_inputs.empty() || a.d_inputs[0] == nullptr) return;
    ST_ASSERT(training_, "backward of a convolution kernel built for evaluation");
    ctx_.activate();
    const float one = 1.0f, zero = 0.0f;
    const void* w = a.weights;
    const void* dy = a.d_output;
    void* dx = a.d_inputs[0];
    if (half_) {
      dy = ctx_.output_gradient_to_half(this, a.d_output, scratch_.y_offset, plan_.y.elements());
      w = ctx_.to_half(a.weights, scratch_.w_offset, plan_.weight_count);
      dx = ctx_.half_at(0);
    }
    use_math(data_);
    ST_CUDNN_CHECK(cudnnConvolutionBackwardData(ctx_.cudnn, &one, w_, w, y_.desc, dy, conv_,
                                                static_cast<cudnnConvolutionBwdDataAlgo_t>(data_.algorithm),
                                                ctx_.workspace.data(), static_cast<size_t>(data_.workspace_bytes),
                                                &zero, x_.desc, dx));
    if (half_) launch_from_half(dx, a.d_inputs[0], plan_.x.elements(), ctx_.half_type(), ctx_.stream);
  }

 private:
  void use_math(const ConvChoice& c) {
    ST_CUDNN_CHECK(cudnnSetConvolutionMathType(conv_, static_cast<cudnnMathType_t>(c.math)));
  }

  // The algorithms of this shape: searched by the first kernel that has it, reused by the others.
  void choose(bool training) {
    training_ = training;
    const ConvShapeKey key = conv_shape_key(plan_, training);
    const auto known = ctx_.conv_algorithms.find(key);
    if (known == ctx_.conv_algorithms.end()) {
      search(training);
      ctx_.conv_algorithms[key] = {fwd_, data_, filter_};
      return;
    }
    const ConvAlgorithms& a = known->second;  // the workspace was reserved for them when they were searched
    fwd_ = a.forward;
    data_ = a.backward_data;
    filter_ = a.backward_filter;
  }

  void search(bool training) {
    const int64_t limit = ctx_.workspace_limit_bytes;
    const bool timed = ctx_.options.benchmark_algorithms;
    int count = 0;
    cudnnConvolutionFwdAlgoPerf_t fwd[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    if (timed)
      ST_CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithm(ctx_.cudnn, x_.desc, w_, conv_, y_.desc,
                                                          CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &count, fwd));
    else
      ST_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(ctx_.cudnn, x_.desc, w_, conv_, y_.desc,
                                                            CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &count, fwd));
    fwd_ = pick(to_options(fwd, count), limit, fma_only_);
    int64_t most = fwd_.workspace_bytes;
    if (training) {
      cudnnConvolutionBwdDataAlgoPerf_t data[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
      if (timed)
        ST_CUDNN_CHECK(cudnnFindConvolutionBackwardDataAlgorithm(ctx_.cudnn, w_, y_.desc, conv_, x_.desc,
                                                                 CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &count, data));
      else
        ST_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(ctx_.cudnn, w_, y_.desc, conv_, x_.desc,
                                                                   CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &count,
                                                                   data));
      data_ = pick(to_options(data, count), limit, fma_only_);
      cudnnConvolutionBwdFilterAlgoPerf_t filter[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
      if (timed)
        ST_CUDNN_CHECK(cudnnFindConvolutionBackwardFilterAlgorithm(ctx_.cudnn, x_.desc, y_.desc, conv_, w_,
                                                                   CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &count,
                                                                   filter));
      else
        ST_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(ctx_.cudnn, x_.desc, y_.desc, conv_, w_,
                                                                     CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &count,
                                                                     filter));
      filter_ = pick(to_options(filter, count), limit, fma_only_);
      most = std::max({most, data_.workspace_bytes, filter_.workspace_bytes});
    }
    ctx_.reserve_workspace(most);
  }

  DeviceContext& ctx_;
  ConvPlan plan_;
  bool half_;
  cudnnDataType_t type_;  // of x, y and the filter in the convolution calls
  TensorDesc x_, y_;      // in type_
  TensorDesc y32_, bias_;  // fp32: the output buffer and the bias, for cudnnAddTensor and the bias gradient
  HalfScratchLayout scratch_;
  cudnnFilterDescriptor_t w_ = nullptr;
  cudnnConvolutionDescriptor_t conv_ = nullptr;
  ConvChoice fwd_, data_, filter_;
  bool fma_only_ = false;  // fp32 without TF32: every direction under CUDNN_FMA_MATH
  bool training_ = true;
};

}  // namespace

std::unique_ptr<LayerKernel> make_conv_kernel(DeviceContext& ctx, const LayerDesc& desc) {
  return std::make_unique<ConvKernel>(ctx, desc);
}

}  // namespace scaletwin::exec::cuda
