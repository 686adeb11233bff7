// Convolution on cuDNN 9 (legacy API): forward, backward-data and backward-filter, each with its algorithm chosen
// once per shape (conv_shape_key: kernels of equal shapes share the search) by the workspace policy of
// layer_plan.hpp (cuDNN's heuristics, or timed runs with CudaOptions::benchmark_algorithms), and the bias through
// cudnnAddTensor / cudnnConvolutionBackwardBias.
#include <algorithm>
#include <vector>

#include "core/error.hpp"
#include "exec/cuda/cuda_check.hpp"
#include "exec/cuda/device_context.hpp"

namespace scaletwin::exec::cuda {
namespace {

template <class Perf>
std::vector<AlgorithmOption> to_options(const Perf* perf, int count) {
  std::vector<AlgorithmOption> options;
  for (int i = 0; i < count; ++i)
    options.push_back({static_cast<int>(perf[i].algo), static_cast<int64_t>(perf[i].memory),
                       perf[i].status == CUDNN_STATUS_SUCCESS});
  return options;
}

struct Choice {
  int algorithm = 0;
  int64_t workspace_bytes = 0;
};

Choice pick(const std::vector<AlgorithmOption>& options, int64_t limit) {
  const AlgorithmOption& o = options[choose_algorithm(options, limit)];
  return {o.algorithm, o.workspace_bytes};
}

class ConvKernel : public LayerKernel {
 public:
  ConvKernel(DeviceContext& ctx, const LayerDesc& desc)
      : ctx_(ctx), plan_(plan_conv(desc)), x_(plan_.x), y_(plan_.y), bias_(plan_.bias) {
    ST_CUDNN_CHECK(cudnnCreateFilterDescriptor(&w_));
    ST_CUDNN_CHECK(cudnnSetFilter4dDescriptor(w_, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, plan_.w.k, plan_.w.c,
                                              plan_.w.r, plan_.w.s));
    ST_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&conv_));
    ST_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(conv_, plan_.pad_h, plan_.pad_w, plan_.stride_h, plan_.stride_w,
                                                   plan_.dilation_h, plan_.dilation_w, CUDNN_CROSS_CORRELATION,
                                                   CUDNN_DATA_FLOAT));
    ST_CUDNN_CHECK(cudnnSetConvolutionGroupCount(conv_, plan_.groups));
    ST_CUDNN_CHECK(cudnnSetConvolutionMathType(conv_, ctx.options.allow_tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH));
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
    ST_CUDNN_CHECK(cudnnConvolutionForward(ctx_.cudnn, &one, x_.desc, a.inputs[0], w_, a.weights, conv_,
                                           static_cast<cudnnConvolutionFwdAlgo_t>(fwd_.algorithm),
                                           ctx_.workspace.data(), static_cast<size_t>(fwd_.workspace_bytes), &zero,
                                           y_.desc, a.output));
    if (plan_.has_bias)
      ST_CUDNN_CHECK(cudnnAddTensor(ctx_.cudnn, &one, bias_.desc, a.weights + plan_.weight_count, &one, y_.desc,
                                    a.output));
  }

  void backward_weight(const LayerArgs& a) override {
    ST_ASSERT(training_, "backward of a convolution kernel built for evaluation");
    ctx_.activate();
    const float one = 1.0f, zero = 0.0f;
    ST_CUDNN_CHECK(cudnnConvolutionBackwardFilter(ctx_.cudnn, &one, x_.desc, a.inputs[0], y_.desc, a.d_output,
                                                  conv_, static_cast<cudnnConvolutionBwdFilterAlgo_t>(filter_.algorithm),
                                                  ctx_.workspace.data(), static_cast<size_t>(filter_.workspace_bytes),
                                                  &zero, w_, a.d_weights));
    if (plan_.has_bias)
      ST_CUDNN_CHECK(cudnnConvolutionBackwardBias(ctx_.cudnn, &one, y_.desc, a.d_output, &zero, bias_.desc,
                                                  a.d_weights + plan_.weight_count));
  }

  void backward_input(const LayerArgs& a) override {
    if (a.d_inputs.empty() || a.d_inputs[0] == nullptr) return;
    ST_ASSERT(training_, "backward of a convolution kernel built for evaluation");
    ctx_.activate();
    const float one = 1.0f, zero = 0.0f;
    ST_CUDNN_CHECK(cudnnConvolutionBackwardData(ctx_.cudnn, &one, w_, a.weights, y_.desc, a.d_output, conv_,
                                                static_cast<cudnnConvolutionBwdDataAlgo_t>(data_.algorithm),
                                                ctx_.workspace.data(), static_cast<size_t>(data_.workspace_bytes),
                                                &zero, x_.desc, a.d_inputs[0]));
  }

 private:
  // The algorithms of this shape: searched by the first kernel that has it, reused by the others.
  void choose(bool training) {
    training_ = training;
    const ConvShapeKey key = conv_shape_key(plan_, training);
    const auto known = ctx_.conv_algorithms.find(key);
    if (known == ctx_.conv_algorithms.end()) {
      search(training);
      ctx_.conv_algorithms[key] = {fwd_.algorithm,        data_.algorithm,        filter_.algorithm,
                                   fwd_.workspace_bytes, data_.workspace_bytes, filter_.workspace_bytes};
      return;
    }
    const ConvAlgorithms& a = known->second;  // the workspace was reserved for them when they were searched
    fwd_ = {a.forward, a.forward_bytes};
    data_ = {a.backward_data, a.backward_data_bytes};
    filter_ = {a.backward_filter, a.backward_filter_bytes};
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
    fwd_ = pick(to_options(fwd, count), limit);
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
      data_ = pick(to_options(data, count), limit);
      cudnnConvolutionBwdFilterAlgoPerf_t filter[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
      if (timed)
        ST_CUDNN_CHECK(cudnnFindConvolutionBackwardFilterAlgorithm(ctx_.cudnn, x_.desc, y_.desc, conv_, w_,
                                                                   CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &count,
                                                                   filter));
      else
        ST_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(ctx_.cudnn, x_.desc, y_.desc, conv_, w_,
                                                                     CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &count,
                                                                     filter));
      filter_ = pick(to_options(filter, count), limit);
      most = std::max({most, data_.workspace_bytes, filter_.workspace_bytes});
    }
    ctx_.reserve_workspace(most);
  }

  DeviceContext& ctx_;
  ConvPlan plan_;
  TensorDesc x_, y_, bias_;
  cudnnFilterDescriptor_t w_ = nullptr;
  cudnnConvolutionDescriptor_t conv_ = nullptr;
  Choice fwd_, data_, filter_;
  bool training_ = true;
};

}  // namespace

std::unique_ptr<LayerKernel> make_conv_kernel(DeviceContext& ctx, const LayerDesc& desc) {
  return std::make_unique<ConvKernel>(ctx, desc);
}

}  // namespace scaletwin::exec::cuda
