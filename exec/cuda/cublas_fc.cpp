// Fully connected layers (and model-parallel slices of them, which are just narrower layers) on cuBLAS SGEMM,
// with the three GEMMs of layer_plan.hpp; the bias is a rank-1 GEMM update in forward and a GEMV in backward,
// against a vector of ones. In mixed precision (CudaPrecision kBf16, kFp16) the three GEMMs are cublasGemmEx on
// 2-byte copies of their two operands (the context's half scratch, half_scratch_layout) with fp32 accumulation and
// an fp32 result written straight into the layer's buffer; the bias stays fp32.
#include "core/error.hpp"
#include "exec/cuda/cuda_check.hpp"
#include "exec/cuda/device_context.hpp"
#include "exec/cuda/kernels.hpp"

namespace scaletwin::exec::cuda {
namespace {

cublasOperation_t op(bool transpose) { return transpose ? CUBLAS_OP_T : CUBLAS_OP_N; }

void gemm(cublasHandle_t handle, const GemmCall& g, const float* a, const float* b, float* c, float beta) {
  const float one = 1.0f;
  ST_CUBLAS_CHECK(cublasSgemm(handle, op(g.transpose_a), op(g.transpose_b), g.m, g.n, g.k, &one, a, g.lda, b, g.ldb,
                              &beta, c, g.ldc));
}

// C (fp32) = op(A) · op(B) with A and B 2-byte values of `type` on the tensor cores, accumulated in fp32.
void gemm_half(cublasHandle_t handle, const GemmCall& g, cudaDataType_t type, const void* a, const void* b, float* c) {
  const float one = 1.0f, zero = 0.0f;
  ST_CUBLAS_CHECK(cublasGemmEx(handle, op(g.transpose_a), op(g.transpose_b), g.m, g.n, g.k, &one, a, type, g.lda, b,
                               type, g.ldb, &zero, c, CUDA_R_32F, g.ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

class FcKernel : public LayerKernel {
 public:
  FcKernel(DeviceContext& ctx, const LayerDesc& desc)
      : ctx_(ctx), plan_(plan_fc(desc)), training_(desc.training), scratch_(half_scratch_layout(plan_)) {
    if (ctx.half()) ctx.reserve_half_scratch(scratch_.elements);
    if (plan_.has_bias) {
      ones_ = DeviceBytes(int64_t{plan_.batch} * static_cast<int64_t>(sizeof(float)));
      launch_fill(ones_.floats(), 1.0f, plan_.batch, ctx.stream);
    }
  }

  void forward(const LayerArgs& a) override {
    ctx_.activate();
    if (ctx_.half()) {
      ctx_.half_state.begin(this, nullptr);
      gemm_half(ctx_.cublas, plan_.forward, ctx_.cublas_half_type(),
                ctx_.to_half(a.weights, scratch_.w_offset, weight_count()), ctx_.to_half(a.inputs[0], 0, x_count()),
                a.output);
    } else {
      gemm(ctx_.cublas, plan_.forward, a.weights, a.inputs[0], a.output, 0.0f);
    }
    if (plan_.has_bias) {  // Y^T (out × N) += bias (out × 1) · ones^T (1 × N)
      const GemmCall rank1{false, false, plan_.out, plan_.batch, 1, plan_.out, 1, plan_.out};
      gemm(ctx_.cublas, rank1, bias(a.weights), ones_.floats(), a.output, 1.0f);
    }
  }

  void backward_weight(const LayerArgs& a) override {
    ST_ASSERT(training_, "backward of an fc kernel built for evaluation");
    ctx_.activate();
    if (ctx_.half()) {
      const void* dy = ctx_.output_gradient_to_half(this, a.d_output, scratch_.y_offset, y_count());
      gemm_half(ctx_.cublas, plan_.backward_weight, ctx_.cublas_half_type(), ctx_.to_half(a.inputs[0], 0, x_count()),
                dy, a.d_weights);
    } else {
      gemm(ctx_.cublas, plan_.backward_weight, a.inputs[0], a.d_output, a.d_weights, 0.0f);
    }
    if (plan_.has_bias) {  // db = dY^T (out × N) · ones
      const float one = 1.0f, zero = 0.0f;
      ST_CUBLAS_CHECK(cublasSgemv(ctx_.cublas, CUBLAS_OP_N, plan_.out, plan_.batch, &one, a.d_output, plan_.out,
                                  ones_.floats(), 1, &zero, a.d_weights + weight_count(), 1));
    }
  }

  void backward_input(const LayerArgs& a) override {
    if (a.d_inputs.empty() || a.d_inputs[0] == nullptr) return;
    ST_ASSERT(training_, "backward of an fc kernel built for evaluation");
    ctx_.activate();
    if (ctx_.half()) {
      const void* dy = ctx_.output_gradient_to_half(this, a.d_output, scratch_.y_offset, y_count());
      gemm_half(ctx_.cublas, plan_.backward_input, ctx_.cublas_half_type(),
                ctx_.to_half(a.weights, scratch_.w_offset, weight_count()), dy, a.d_inputs[0]);
    } else {
      gemm(ctx_.cublas, plan_.backward_input, a.weights, a.d_output, a.d_inputs[0], 0.0f);
    }
  }

 private:
  int64_t weight_count() const { return int64_t{plan_.out} * plan_.in; }
  int64_t x_count() const { return int64_t{plan_.batch} * plan_.in; }
  int64_t y_count() const { return int64_t{plan_.batch} * plan_.out; }
  const float* bias(const float* weights) const { return weights + weight_count(); }

  DeviceContext& ctx_;
  FcPlan plan_;
  bool training_;
  HalfScratchLayout scratch_;
  DeviceBytes ones_;
};

}  // namespace

std::unique_ptr<LayerKernel> make_fc_kernel(DeviceContext& ctx, const LayerDesc& desc) {
  return std::make_unique<FcKernel>(ctx, desc);
}

}  // namespace scaletwin::exec::cuda
