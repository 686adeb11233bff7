// Host-side set-up of the CUDA backend, without a GPU: cuDNN descriptor parameters from real models, the cuBLAS
// GEMMs of a fully connected layer (run by a column-major host GEMM against the layer's definition), the
// workspace policy, the device-memory planner (ResNet-50 on a 12 GB K80 and a 141 GB H200) and the device-side
// dropout hash against the shared one.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>

#include <random>

#include "core/error.hpp"
#include "exec/cuda/dropout_hash.hpp"
#include "exec/cuda/layer_plan.hpp"
#include "exec/cuda/memory_plan.hpp"
#include "models/zoo.hpp"

namespace {

using namespace scaletwin;
using namespace scaletwin::exec;
using namespace scaletwin::exec::cuda;
using models::LayerKind;

LayerDesc desc_of(const models::Model& m, int layer, int64_t batch, bool training = true) {
  LayerDesc d;
  d.layer = &m.layers[layer];
  for (int in : m.layers[layer].inputs) d.in_shapes.push_back(m.layers[in].out);
  d.out_shape = m.layers[layer].out;
  d.batch = batch;
  d.training = training;
  return d;
}

// C (m × n, ldc) = op(A) · op(B) + beta · C, column-major, as cublasSgemm computes it.
void host_gemm(const GemmCall& g, const std::vector<float>& a, const std::vector<float>& b, std::vector<float>& c) {
  for (int i = 0; i < g.m; ++i)
    for (int j = 0; j < g.n; ++j) {
      double s = 0.0;
      for (int l = 0; l < g.k; ++l) {
        const float av = g.transpose_a ? a[l + i * g.lda] : a[i + l * g.lda];
        const float bv = g.transpose_b ? b[j + l * g.ldb] : b[l + j * g.ldb];
        s += static_cast<double>(av) * bv;
      }
      c[i + j * g.ldc] = static_cast<float>(s);
    }
}

constexpr int64_t kGB = 1000 * 1000 * 1000;
constexpr int64_t kK80Bytes = 12 * kGB;    // spec: one GK210, 12 GB
constexpr int64_t kH200Bytes = 141 * kGB;  // H200 SXM: 141 GB HBM3e
constexpr int64_t kWorkspace = int64_t{1} << 30;

}  // namespace

TEST_CASE("cuDNN descriptors of ResNet-50's stem: NCHW strides, 7×7 filters, padding 3, stride 2") {
  const models::Model m = models::make_builtin_model("resnet50");
  const int stem = 1;
  REQUIRE(m.layers[stem].kind == LayerKind::kConv);
  const ConvPlan p = plan_conv(desc_of(m, stem, 64));
  REQUIRE(p.x == TensorDims{64, 3, 224, 224, 3 * 224 * 224, 224 * 224, 224, 1});
  REQUIRE(p.y == TensorDims{64, 64, 112, 112, 64 * 112 * 112, 112 * 112, 112, 1});
  REQUIRE(p.w == FilterDims{64, 3, 7, 7});
  REQUIRE((p.pad_h == 3 && p.pad_w == 3 && p.stride_h == 2 && p.stride_w == 2));
  REQUIRE((p.dilation_h == 1 && p.groups == 1 && !p.has_bias));
  REQUIRE(p.weight_count == 64 * 3 * 7 * 7);
  REQUIRE(p.bias == TensorDims{1, 64, 1, 1, 64, 1, 1, 1});
}

TEST_CASE("every convolution, pooling, batch norm and fc layer of the built-in models plans for cuDNN / cuBLAS") {
  for (const std::string& name : models::builtin_model_names()) {
    const models::Model m = models::make_builtin_model(name);
    int planned = 0;
    for (int i = 1; i < static_cast<int>(m.layers.size()); ++i) {
      const LayerDesc d = desc_of(m, i, 8);
      INFO(name << " layer " << m.layers[i].name);
      switch (m.layers[i].kind) {
        case LayerKind::kConv: {
          const ConvPlan p = plan_conv(d);
          REQUIRE(p.y.elements() == 8 * m.layers[i].out.elements());
          REQUIRE(p.w.c * p.groups == d.in_shapes[0].c);
          break;
        }
        case LayerKind::kMaxPool:
        case LayerKind::kAvgPool:
        case LayerKind::kGlobalAvgPool: {
          const PoolPlan p = plan_pool(d);
          REQUIRE((p.y.h == m.layers[i].out.h && p.y.w == m.layers[i].out.w && p.y.c == p.x.c));
          if (m.layers[i].kind == LayerKind::kGlobalAvgPool)
            REQUIRE((p.window_h == p.x.h && p.window_w == p.x.w && p.mode == PoolMode::kAverageIncludePad));
          break;
        }
        case LayerKind::kBatchNorm: {
          const BatchNormPlan p = plan_batchnorm(d);
          REQUIRE(p.count == 8 * d.in_shapes[0].h * d.in_shapes[0].w);
          REQUIRE(p.param == TensorDims{1, p.x.c, 1, 1, p.x.c, 1, 1, 1});
          break;
        }
        case LayerKind::kFullyConnected: {
          const FcPlan p = plan_fc(d);
          REQUIRE(int64_t{p.in} * p.out + (p.has_bias ? p.out : 0) == m.layers[i].params);
          break;
        }
        default: continue;
      }
      ++planned;
    }
    REQUIRE(planned > 3);
  }
}

TEST_CASE("layers cuDNN cannot express are refused by name: ceil-mode pooling, tensors past 2^31 elements") {
  models::Layer pool;
  pool.name = "ceil_pool";
  pool.kind = LayerKind::kMaxPool;
  pool.pool = {3, 3, 2, 2, 0, 0, true, true};
  LayerDesc d{&pool, {{8, 8, 8}}, {8, 4, 4}, 2, true};  // ceil((8 − 3) / 2) + 1 = 4; floor gives 3
  REQUIRE_THROWS_WITH(plan_pool(d), Catch::Contains("ceil_pool") && Catch::Contains("ceil-mode"));
  pool.pool.ceil_mode = false;
  d.out_shape = {8, 3, 3};
  REQUIRE(plan_pool(d).y.h == 3);
  models::Layer relu_like;
  relu_like.name = "huge";
  relu_like.kind = LayerKind::kConv;
  relu_like.conv = {64, 1, 1, 1, 1, 0, 0, 1, 1, 1, false};
  const LayerDesc huge{&relu_like, {{64, 224, 224}}, {64, 224, 224}, 1024, true};  // 3.3e9 elements
  REQUIRE_THROWS_AS(plan_conv(huge), InputError);
}

TEST_CASE("the fc layer's three cuBLAS GEMMs compute y = W x + b, dx = Wᵀ dy and dW = dyᵀ x") {
  models::Layer fc;
  fc.name = "fc";
  fc.kind = LayerKind::kFullyConnected;
  fc.fc = {5, true};
  const LayerDesc d{&fc, {{3, 2, 2}}, {5, 1, 1}, 4, true};
  const FcPlan p = plan_fc(d);
  REQUIRE((p.batch == 4 && p.in == 12 && p.out == 5 && p.has_bias));
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> x(4 * 12), w(5 * 12), dy(4 * 5);
  for (auto* v : {&x, &w, &dy})
    for (float& e : *v) e = u(rng);
  std::vector<float> y(4 * 5), dx(4 * 12), dw(5 * 12);
  host_gemm(p.forward, w, x, y);
  host_gemm(p.backward_input, w, dy, dx);
  host_gemm(p.backward_weight, x, dy, dw);
  for (int n = 0; n < 4; ++n)
    for (int o = 0; o < 5; ++o) {
      double s = 0.0;
      for (int i = 0; i < 12; ++i) s += static_cast<double>(w[o * 12 + i]) * x[n * 12 + i];
      REQUIRE(y[n * 5 + o] == Approx(s).margin(1e-6));
    }
  for (int n = 0; n < 4; ++n)
    for (int i = 0; i < 12; ++i) {
      double s = 0.0;
      for (int o = 0; o < 5; ++o) s += static_cast<double>(w[o * 12 + i]) * dy[n * 5 + o];
      REQUIRE(dx[n * 12 + i] == Approx(s).margin(1e-6));
    }
  for (int o = 0; o < 5; ++o)
    for (int i = 0; i < 12; ++i) {
      double s = 0.0;
      for (int n = 0; n < 4; ++n) s += static_cast<double>(dy[n * 5 + o]) * x[n * 12 + i];
      REQUIRE(dw[o * 12 + i] == Approx(s).margin(1e-6));
    }
}

TEST_CASE("convolution algorithms are searched once per shape: ResNet-50's 53 convolutions have 23 distinct keys") {
  const models::Model m = models::make_builtin_model("resnet50");
  std::map<ConvShapeKey, std::vector<std::string>> by_key;
  int convs = 0;
  for (size_t i = 0; i < m.layers.size(); ++i) {
    if (m.layers[i].kind != models::LayerKind::kConv) continue;
    ++convs;
    by_key[conv_shape_key(plan_conv(desc_of(m, static_cast<int>(i), 32)), true)].push_back(m.layers[i].name);
  }
  CHECK(convs == 53);
  // The stem, then per stage the distinct 1×1 / 3×3 geometries (a stage's first block, its other blocks, the
  // projection shortcut; stage 1's shortcut has the shape of its blocks' last 1×1): 1 + 4 + 6 + 6 + 6.
  CHECK(by_key.size() == 23);
  // Same geometry, different layers: one key. A different batch, stride or training flag: another.
  int stem = 0;
  while (m.layers[static_cast<size_t>(stem)].kind != models::LayerKind::kConv) ++stem;
  const ConvPlan p = plan_conv(desc_of(m, stem, 32));
  CHECK(conv_shape_key(p, true) == conv_shape_key(plan_conv(desc_of(m, stem, 32)), true));
  CHECK(conv_shape_key(p, true) != conv_shape_key(p, false));
  CHECK(conv_shape_key(p, true) != conv_shape_key(plan_conv(desc_of(m, stem, 16)), true));
  ConvPlan strided = p;
  strided.stride_h = 1;
  CHECK(conv_shape_key(p, true) != conv_shape_key(strided, true));
}

TEST_CASE("workspace policy: the first algorithm within the limit, else the one that needs least") {
  constexpr int64_t kMiB = int64_t{1} << 20;
  REQUIRE(workspace_limit_bytes(0, 80 * kGB) == 1024 * kMiB);
  REQUIRE(workspace_limit_bytes(0, 400 * kMiB) == 50 * kMiB);
  REQUIRE(workspace_limit_bytes(0, 40 * kMiB) == 16 * kMiB);
  REQUIRE(workspace_limit_bytes(3 * kMiB, 80 * kGB) == 3 * kMiB);
  const std::vector<AlgorithmOption> options{{7, 900 * kMiB, true}, {1, 10 * kMiB, false}, {2, 30 * kMiB, true},
                                             {0, 0, true}};
  REQUIRE(choose_algorithm(options, 1024 * kMiB) == 0);
  REQUIRE(choose_algorithm(options, 100 * kMiB) == 2);  // option 1 failed in cuDNN
  REQUIRE(choose_algorithm(options, 20 * kMiB) == 3);
  const std::vector<AlgorithmOption> greedy{{5, 900 * kMiB, true}, {6, 300 * kMiB, true}, {4, 10, false}};
  REQUIRE(choose_algorithm(greedy, kMiB) == 1);  // none fits: the smallest that works
  REQUIRE_THROWS_AS(choose_algorithm({{4, 10, false}}, kMiB), InternalError);
}

TEST_CASE("memory planner: the executor's allocations for ResNet-50, refused on a 12 GB K80 and a 141 GB H200 "
          "when too large") {
  // Network keeps every layer's output and its gradient (exec/network.cpp): for ResNet-50 that is 150.8 MB per
  // sample each, so batch 64 needs about 21.9 GB and does not fit a K80 (12 GB) with this executor; batch 16 does.
  const models::Model m = models::make_builtin_model("resnet50");
  int64_t outputs_bytes_per_sample = 0;
  for (const models::Layer& l : m.layers) outputs_bytes_per_sample += l.activation_bytes;
  const MemoryEstimate e64 = estimate_training_memory(m, 64, kWorkspace);
  REQUIRE(e64.weights_bytes == 4 * int64_t{25557032});
  REQUIRE(e64.gradients_bytes == e64.weights_bytes);
  REQUIRE(e64.momentum_bytes == e64.weights_bytes);
  REQUIRE(e64.activations_bytes == 64 * outputs_bytes_per_sample);
  REQUIRE(e64.activation_gradients_bytes == 64 * (outputs_bytes_per_sample - 4 * 3 * 224 * 224));  // not the input
  REQUIRE(e64.scratch_bytes == 2 * 64 * 64 * 112 * 112 * 4);  // two inputs (add) × the largest activation
  REQUIRE(e64.workspace_bytes == kWorkspace);
  REQUIRE(e64.context_bytes == kContextAllowanceBytes);
  REQUIRE(e64.total_bytes() > kK80Bytes);
  REQUIRE(e64.total_bytes() < kH200Bytes);
  REQUIRE_NOTHROW(check_fits(m, 16, kWorkspace, kK80Bytes, "Tesla K80"));
  REQUIRE_NOTHROW(check_fits(m, 64, kWorkspace, kH200Bytes, "NVIDIA H200"));
  const int64_t k80 = max_batch_that_fits(m, kWorkspace, kK80Bytes);
  const int64_t h200 = max_batch_that_fits(m, kWorkspace, kH200Bytes);
  REQUIRE((k80 >= 16 && k80 < 64));
  REQUIRE(h200 > 10 * k80);
  REQUIRE(estimate_training_memory(m, k80, kWorkspace).total_bytes() <= kK80Bytes);
  REQUIRE(estimate_training_memory(m, k80 + 1, kWorkspace).total_bytes() > kK80Bytes);
  REQUIRE_THROWS_WITH(check_fits(m, 64, kWorkspace, kK80Bytes, "Tesla K80"),
                      Catch::Contains("Tesla K80") && Catch::Contains("use a batch of at most " + std::to_string(k80)));
  REQUIRE_THROWS_AS(check_fits(m, 4096, kWorkspace, kH200Bytes, "NVIDIA H200"), InputError);
  REQUIRE_THROWS_WITH(check_fits(m, 4096, kWorkspace, kH200Bytes, "NVIDIA H200"),
                      Catch::Contains("resnet50") && Catch::Contains("batch 4096") &&
                          Catch::Contains("use a batch of at most " + std::to_string(h200)));
  REQUIRE(max_batch_that_fits(m, kWorkspace, kGB / 2) == 0);  // below the context allowance
  REQUIRE_THROWS_WITH(check_fits(m, 1, kWorkspace, kGB / 2, "tiny"), Catch::Contains("not fit even at batch 1"));
}

TEST_CASE("mixed precision: a layer's output gradient is cast once for its two backward ops and again after "
          "any other op") {
  HalfScratchState state;
  int conv = 0, fc = 0;  // two kernels
  float dy[4] = {}, other_dy[4] = {};
  // A step's backward: fc's backward_weight casts its dy, its backward_input finds it, then conv's two ops.
  REQUIRE_FALSE(state.begin(&fc, dy));
  state.holds(dy);
  REQUIRE(state.begin(&fc, dy));
  state.holds(dy);
  REQUIRE_FALSE(state.begin(&conv, dy));  // another kernel's y_offset: cast
  state.holds(dy);
  REQUIRE_FALSE(state.begin(&conv, other_dy));  // another gradient
  state.holds(other_dy);
  REQUIRE(state.begin(&conv, other_dy));
  state.holds(other_dy);
  // The next step's forward of the same kernel overwrites y_offset with its output: the next backward casts.
  REQUIRE_FALSE(state.begin(&conv, nullptr));
  REQUIRE_FALSE(state.begin(&conv, other_dy));
  state.holds(other_dy);
  // Another kernel's op in between (fc's forward) takes the scratch.
  REQUIRE_FALSE(state.begin(&fc, nullptr));
  REQUIRE_FALSE(state.begin(&conv, other_dy));
  // An op that asks for no gradient never finds one.
  state.holds(dy);
  REQUIRE_FALSE(state.begin(&conv, nullptr));
}

TEST_CASE("mixed precision: the half scratch holds an op's three 2-byte operands, 256-byte aligned, and the "
          "memory planner counts the largest") {
  const HalfScratchLayout l = half_scratch_layout(1000, 1, 129);
  REQUIRE(l.w_offset == 1024);          // 1000 rounded up to 128 elements (256 bytes)
  REQUIRE(l.y_offset == 1024 + 128);
  REQUIRE(l.elements == 1024 + 128 + 256);
  REQUIRE(half_scratch_layout(0, 0, 0) == HalfScratchLayout{});
  // ResNet-50's stem convolution at batch 64: x 64·3·224², w 64·3·7·7, y 64·64·112², from the kernel's own plan.
  const models::Model m = models::make_builtin_model("resnet50");
  const HalfScratchLayout conv = half_scratch_layout(plan_conv(desc_of(m, 1, 64)));
  REQUIRE(conv.w_offset == 64 * 3 * 224 * 224);
  REQUIRE(conv.y_offset - conv.w_offset == 9472);  // 9408 weights, aligned
  REQUIRE(conv.elements - conv.y_offset == int64_t{64} * 64 * 112 * 112);
  // fp32 allocates none; bf16 / fp16 the largest op's (each layer's own kernel plan here, the layout's geometry in
  // the planner), 2 bytes each.
  int64_t largest = 0;
  for (size_t i = 0; i < m.layers.size(); ++i) {
    if (m.layers[i].kind == LayerKind::kConv)
      largest = std::max(largest, half_scratch_layout(plan_conv(desc_of(m, static_cast<int>(i), 64))).elements);
    if (m.layers[i].kind == LayerKind::kFullyConnected) {
      const HalfScratchLayout gemm = half_scratch_layout(plan_fc(desc_of(m, static_cast<int>(i), 64)));
      REQUIRE(gemm.w_offset == 64 * 2048);
      REQUIRE(gemm.y_offset - gemm.w_offset == 2048 * 1000);
      REQUIRE(gemm.elements - gemm.y_offset == 64 * 1000);  // a multiple of 128 already
      largest = std::max(largest, gemm.elements);
    }
  }
  REQUIRE(largest > conv.elements);  // layer 1's 1×1 expansion, 64 → 256 channels at 56², has more
  REQUIRE(estimate_training_memory(m, 64, kWorkspace).half_scratch_bytes == 0);
  const MemoryEstimate half = estimate_training_memory(m, 64, kWorkspace, true);
  REQUIRE(half.half_scratch_bytes == 2 * largest);
  REQUIRE(half.total_bytes() == estimate_training_memory(m, 64, kWorkspace).total_bytes() + 2 * largest);
  REQUIRE(max_batch_that_fits(m, kWorkspace, kK80Bytes, true) <= max_batch_that_fits(m, kWorkspace, kK80Bytes));
  REQUIRE_THROWS_WITH(check_fits(m, 64, kWorkspace, kK80Bytes, "Tesla K80", true),
                      Catch::Contains("half-precision copies"));
}

TEST_CASE("the device-side dropout hash equals the shared dropout_keep bit for bit") {
  for (uint64_t seed : {0ull, 1ull, 12345ull, 0xFFFFFFFFFFFFFFFFull})
    for (uint64_t i = 0; i < 5000; ++i)
      for (double rate : {0.0, 0.1, 0.5, 0.9}) REQUIRE(dropout_keep_hd(seed, i, rate) == dropout_keep(seed, i, rate));
}
