// Fully connected layers (and model-parallel slices of them, which are just narrower layers) on cuBLAS SGEMM,
// with the three GEMMs of layer_plan.hpp; the bias is a rank-1 GEMM update in forward and a GEMV in backward,
// against a vector of ones.
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

class FcKernel : public LayerKernel {
 public:
  FcKernel(DeviceContext& ctx, const LayerDesc& desc) : ctx_(ctx), plan_(plan_fc(desc)), training_(desc.training) {
    if (plan_.has_bias) {
      ones_ = DeviceBytes(int64_t{plan_.batch} * static_cast<int64_t>(sizeof(float)));
      launch_fill(ones_.floats(), 1.0f, plan_.batch, ctx.stream);
    }
  }

  void forward(const LayerArgs& a) override {
    ctx_.activate();
    gemm(ctx_.cublas, plan_.forward, a.weights, a.inputs[0], a.output, 0.0f);
    if (plan_.has_bias) {  // Y^T (out × N) += bias (out × 1) · ones^T (1 × N)
      const GemmCall rank1{false, false, plan_.out, plan_.batch, 1, plan_.out, 1, plan_.out};
      gemm(ctx_.cublas, rank1, bias(a.weights), ones_.floats(), a.output, 1.0f);
    }
  }

  void backward_weight(const LayerArgs& a) override {
    ST_ASSERT(training_, "backward of an fc kernel built for evaluation");
    ctx_.activate();
    gemm(ctx_.cublas, plan_.backward_weight, a.inputs[0], a.d_output, a.d_weights, 0.0f);
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
    gemm(ctx_.cublas, plan_.backward_input, a.weights, a.d_output, a.d_inputs[0], 0.0f);
  }

 private:
  int64_t weight_count() const { return int64_t{plan_.out} * plan_.in; }
  const float* bias(const float* weights) const { return weights + weight_count(); }

  DeviceContext& ctx_;
  FcPlan plan_;
  bool training_;
  DeviceBytes ones_;
};

}  // namespace

std::unique_ptr<LayerKernel> make_fc_kernel(DeviceContext& ctx, const LayerDesc& desc) {
  return std::make_unique<FcKernel>(ctx, desc);
}

}  // namespace scaletwin::exec::cuda
