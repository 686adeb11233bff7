// Every layer kind's backward pass (input gradient and weight gradient) against central finite differences,
// plus forward checks against closed forms: a naive convolution, batch-norm statistics, softmax cross-entropy.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <numeric>

#include "exec/cpu/cpu_backend.hpp"
#include "test_layers_support.hpp"

namespace {

using namespace scaletwin;
using namespace scaletwin::exec;
using namespace scaletwin::exec::testing;
using models::LayerKind;
using models::Shape;

// fp32 forward passes, objective summed in double: central differences with eps ~ 5e-3 on O(1) values agree
// with the analytic gradients to about 1e-5 relative here; 2e-3 leaves room while catching any wrong term.
constexpr double kTolerance = 2e-3;

LayerCase make_case(LayerKind kind, std::vector<Shape> in, Shape out, int64_t batch = 2) {
  LayerCase c;
  c.layer.kind = kind;
  c.layer.name = "layer";
  c.in_shapes = std::move(in);
  c.out = out;
  c.batch = batch;
  return c;
}

void require_close(const GradientCheck& g, bool has_weights) {
  INFO("input error " << g.input_error << " (norm " << g.input_norm << "), weight error " << g.weight_error << " (norm "
                      << g.weight_norm << ")");
  CHECK(g.input_norm > 1e-3);
  CHECK(g.input_error < kTolerance);
  if (has_weights) {
    CHECK(g.weight_norm > 1e-3);
    CHECK(g.weight_error < kTolerance);
  }
}

// Distinct values at least 0.02 apart in random order: no ties or kinks within ±eps for max pooling and ReLU.
std::vector<float> spread_values(int64_t n, uint64_t seed, float offset = 0.0f) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = offset + 0.02f * static_cast<float>(i - n / 2);
  std::mt19937_64 rng(seed);
  std::shuffle(v.begin(), v.end(), rng);
  return v;
}

}  // namespace

TEST_CASE("conv backward matches finite differences (groups, stride, padding, dilation, bias)") {
  // 4 outputs, 3×3 kernel, stride 2, padding 1, dilation (1, 2), 2 groups: windows of 3 × 5.
  auto c = make_case(LayerKind::kConv, {{4, 7, 6}}, {4, (7 + 2 - 3) / 2 + 1, (6 + 2 - 5) / 2 + 1});
  c.layer.conv = {4, 3, 3, 2, 2, 1, 1, 1, 2, 2, true};
  require_close(check_gradients(c, 5e-3), true);
}

TEST_CASE("conv without bias, stride 1, no padding") {
  auto c = make_case(LayerKind::kConv, {{3, 5, 5}}, {2, 3, 3});
  c.layer.conv = {2, 3, 3, 1, 1, 0, 0, 1, 1, 1, false};
  require_close(check_gradients(c, 5e-3), true);
}

TEST_CASE("conv forward equals a naive convolution") {
  auto c = make_case(LayerKind::kConv, {{4, 6, 5}}, {6, 0, 0});
  c.layer.conv = {6, 3, 2, 2, 1, 1, 0, 2, 1, 2, true};
  const auto& p = c.layer.conv;
  c.out.h = (6 + 2 * p.pad_h - ((p.kernel_h - 1) * p.dilation_h + 1)) / p.stride_h + 1;
  c.out.w = (5 + 2 * p.pad_w - ((p.kernel_w - 1) * p.dilation_w + 1)) / p.stride_w + 1;
  std::mt19937_64 rng(3);
  c.inputs = {random_vector(c.batch * 4 * 6 * 5, rng)};
  c.weights = random_vector(weight_count(c), rng);
  CpuBackend backend(1);
  const std::vector<float> out = run_forward(backend, c);
  const int64_t icg = 4 / p.groups, ocg = 6 / p.groups;
  double worst = 0.0;
  for (int64_t n = 0; n < c.batch; ++n)
    for (int64_t o = 0; o < 6; ++o)
      for (int64_t y = 0; y < c.out.h; ++y)
        for (int64_t x = 0; x < c.out.w; ++x) {
          double sum = c.weights[6 * icg * 3 * 2 + o];
          const int64_t g = o / ocg;
          for (int64_t i = 0; i < icg; ++i)
            for (int64_t ky = 0; ky < 3; ++ky)
              for (int64_t kx = 0; kx < 2; ++kx) {
                const int64_t iy = y * p.stride_h - p.pad_h + ky * p.dilation_h;
                const int64_t ix = x * p.stride_w - p.pad_w + kx * p.dilation_w;
                if (iy < 0 || iy >= 6 || ix < 0 || ix >= 5) continue;
                sum += c.weights[((o * icg + i) * 3 + ky) * 2 + kx] *
                       c.inputs[0][((n * 4 + g * icg + i) * 6 + iy) * 5 + ix];
              }
          worst = std::max(worst, std::abs(sum - out[((n * 6 + o) * c.out.h + y) * c.out.w + x]));
        }
  CHECK(worst < 1e-5);
}

TEST_CASE("fully connected backward matches finite differences, on a 3-d input") {
  auto c = make_case(LayerKind::kFullyConnected, {{2, 3, 2}}, {5, 1, 1}, 3);
  c.layer.fc = {5, true};
  require_close(check_gradients(c, 5e-3), true);
}

TEST_CASE("batchnorm (training) backward matches finite differences") {
  auto c = make_case(LayerKind::kBatchNorm, {{3, 3, 2}}, {3, 3, 2}, 3);
  require_close(check_gradients(c, 5e-3), true);
}

TEST_CASE("relu backward matches finite differences") {
  auto c = make_case(LayerKind::kRelu, {{2, 4, 4}}, {2, 4, 4});
  c.inputs = {spread_values(2 * 32, 5, 0.01f)};
  require_close(check_gradients(c, 1e-3), false);
}

TEST_CASE("max pooling backward matches finite differences (padding, ceil mode)") {
  auto c = make_case(LayerKind::kMaxPool, {{2, 5, 5}}, {2, 3, 3});
  c.layer.pool = {2, 2, 2, 2, 0, 0, true, true};  // ceil mode: (5 − 2) / 2 rounded up + 1 = 3
  c.inputs = {spread_values(2 * 50, 6)};
  require_close(check_gradients(c, 1e-3), false);
  auto d = make_case(LayerKind::kMaxPool, {{2, 6, 6}}, {2, 3, 3});
  d.layer.pool = {3, 3, 2, 2, 1, 1, false, true};
  d.inputs = {spread_values(2 * 72, 7)};
  require_close(check_gradients(d, 1e-3), false);
}

TEST_CASE("average pooling backward matches finite differences, with and without padding counted") {
  for (bool include : {true, false}) {
    auto c = make_case(LayerKind::kAvgPool, {{2, 5, 5}}, {2, 3, 3});
    c.layer.pool = {3, 3, 2, 2, 1, 1, false, include};
    require_close(check_gradients(c, 5e-3), false);
  }
}

TEST_CASE("global average pooling backward matches finite differences") {
  auto c = make_case(LayerKind::kGlobalAvgPool, {{3, 4, 3}}, {3, 1, 1});
  require_close(check_gradients(c, 5e-3), false);
}

TEST_CASE("add, concat and flatten backward match finite differences") {
  require_close(check_gradients(make_case(LayerKind::kAdd, {{2, 3, 3}, {2, 3, 3}}, {2, 3, 3}), 5e-3), false);
  require_close(check_gradients(make_case(LayerKind::kConcat, {{2, 3, 3}, {1, 3, 3}}, {3, 3, 3}), 5e-3), false);
  require_close(check_gradients(make_case(LayerKind::kFlatten, {{2, 3, 3}}, {18, 1, 1}), 5e-3), false);
}

TEST_CASE("dropout backward matches finite differences and the mask keeps about 1 − rate, scaled") {
  auto c = make_case(LayerKind::kDropout, {{4, 5, 5}}, {4, 5, 5});
  c.layer.dropout_rate = 0.3;
  require_close(check_gradients(c, 5e-3), false);

  auto big = make_case(LayerKind::kDropout, {{1, 100, 100}}, {1, 100, 100}, 1);
  big.layer.dropout_rate = 0.3;
  big.inputs = {std::vector<float>(10000, 1.0f)};
  CpuBackend backend(1);
  const std::vector<float> out = run_forward(backend, big);
  const auto kept = std::count_if(out.begin(), out.end(), [](float v) { return v != 0.0f; });
  CHECK(std::abs(static_cast<double>(kept) / 10000.0 - 0.7) < 0.02);
  for (float v : out) CHECK((v == 0.0f || std::abs(v - 1.0f / 0.7f) < 1e-6));
  const std::vector<float> eval = run_forward(backend, big, false);
  CHECK(eval == big.inputs[0]);
}

TEST_CASE("softmax cross-entropy: probabilities, and its gradient matches finite differences of the loss") {
  auto c = make_case(LayerKind::kSoftmaxCrossEntropy, {{5, 1, 1}}, {5, 1, 1}, 3);
  c.labels = {0, 3, 4};
  std::mt19937_64 rng(11);
  c.inputs = {random_vector(15, rng, -2.0f, 2.0f)};
  CpuBackend backend(1);
  const std::vector<float> p = run_forward(backend, c);
  for (int n = 0; n < 3; ++n) {
    double sum = 0.0, denominator = 0.0;
    for (int k = 0; k < 5; ++k) denominator += std::exp(static_cast<double>(c.inputs[0][n * 5 + k]));
    for (int k = 0; k < 5; ++k) {
      sum += p[n * 5 + k];
      CHECK(p[n * 5 + k] == Approx(std::exp(static_cast<double>(c.inputs[0][n * 5 + k])) / denominator).epsilon(1e-5));
    }
    CHECK(sum == Approx(1.0).epsilon(1e-6));
  }
  require_close(check_gradients(c, 5e-3), false);
}

TEST_CASE("batchnorm training normalises with batch statistics and updates running statistics") {
  auto c = make_case(LayerKind::kBatchNorm, {{2, 3, 3}}, {2, 3, 3}, 4);
  c.layer.bn_momentum = 0.1;
  c.layer.bn_eps = 1e-5;
  std::mt19937_64 rng(13);
  c.inputs = {random_vector(4 * 18, rng, 1.0f, 3.0f)};
  c.weights = {1.5f, 0.5f, -0.25f, 2.0f};  // gamma (2), beta (2)
  std::vector<float> state = {0.0f, 0.0f, 1.0f, 1.0f};
  CpuBackend backend(1);
  const std::vector<float> out = run_forward(backend, c, true, state.data());
  for (int ch = 0; ch < 2; ++ch) {
    double mean = 0.0, sq = 0.0, out_mean = 0.0, out_sq = 0.0;
    for (int n = 0; n < 4; ++n)
      for (int k = 0; k < 9; ++k) {
        const double x = c.inputs[0][(n * 2 + ch) * 9 + k], y = out[(n * 2 + ch) * 9 + k];
        mean += x, sq += x * x, out_mean += y, out_sq += y * y;
      }
    mean /= 36, sq /= 36, out_mean /= 36, out_sq /= 36;
    const double var = sq - mean * mean;
    const double gamma = c.weights[ch], beta = c.weights[2 + ch];
    CHECK(out_mean == Approx(beta).margin(1e-5));
    CHECK(out_sq - out_mean * out_mean == Approx(gamma * gamma * var / (var + 1e-5)).epsilon(1e-4));
    CHECK(state[ch] == Approx(0.1 * mean).epsilon(1e-5));
    CHECK(state[2 + ch] == Approx(0.9 + 0.1 * var * 36.0 / 35.0).epsilon(1e-5));
  }
  // Evaluation uses the running statistics.
  const std::vector<float> eval = run_forward(backend, c, false, state.data());
  const double expected = (c.inputs[0][0] - state[0]) / std::sqrt(state[2] + 1e-5) * c.weights[0] + c.weights[2];
  CHECK(eval[0] == Approx(expected).epsilon(1e-5));
}

TEST_CASE("CPU backend helpers: zeroed allocation, copy, fill, add, scale, 2-d block copy") {
  CpuBackend backend(1);
  Buffer a = backend.alloc(12), b = backend.alloc(12);
  REQUIRE(a.size() == 12);
  CHECK(std::all_of(a.data(), a.data() + 12, [](float v) { return v == 0.0f; }));
  std::vector<float> host(12);
  std::iota(host.begin(), host.end(), 1.0f);
  backend.upload(a.data(), host.data(), 12);
  backend.fill(b.data(), 0.5f, 12);
  backend.add(b.data(), a.data(), 12);  // b = i + 1.5
  backend.scale(b.data(), 2.0f, 12);    // b = 2i + 3
  std::vector<float> out(12);
  backend.download(out.data(), b.data(), 12);
  for (int i = 0; i < 12; ++i) CHECK(out[i] == 2.0f * static_cast<float>(i) + 3.0f);
  // Columns [1, 3) of a 4 × 3 matrix into a 4 × 2 one, and back into column 0..1 of a fresh 4 × 3.
  Buffer narrow = backend.alloc(8), wide = backend.alloc(12);
  backend.copy_2d(narrow.data(), 2, a.data() + 1, 3, 4, 2);
  backend.copy_2d(wide.data(), 3, narrow.data(), 2, 4, 2);
  for (int r = 0; r < 4; ++r) {
    CHECK(narrow.data()[r * 2] == host[r * 3 + 1]);
    CHECK(narrow.data()[r * 2 + 1] == host[r * 3 + 2]);
    CHECK(wide.data()[r * 3] == host[r * 3 + 1]);
    CHECK(wide.data()[r * 3 + 2] == 0.0f);
  }
  backend.copy(b.data(), a.data(), 12);
  CHECK(std::equal(host.begin(), host.end(), b.data()));
  Buffer moved = std::move(a);
  CHECK(a.data() == nullptr);
  CHECK(moved.size() == 12);
  backend.set_threads(3);  // the setter overrides OMP_NUM_THREADS for this thread
  CHECK(backend.threads() == 3);
  CHECK(backend.name().find("oneDNN") != std::string::npos);
  backend.set_threads(1);
}

TEST_CASE("sigmoid, silu and hardswish backward match finite differences") {
  for (LayerKind kind : {LayerKind::kSigmoid, LayerKind::kSilu, LayerKind::kHardSwish}) {
    INFO(models::layer_kind_name(kind));
    auto c = make_case(kind, {{3, 4, 5}}, {3, 4, 5});
    // Values across hardswish's kinks at ±3 but at least 0.02 from them (eps 5e-3).
    std::vector<float> v = spread_values(2 * 60, 21, 0.013f);
    for (float& x : v) x *= 4.0f;
    c.inputs = {v};
    require_close(check_gradients(c, 5e-3), false);
  }
}

TEST_CASE("sigmoid, silu and hardswish forward equal their definitions") {
  CpuBackend backend(1);
  const std::vector<float> x = {-4.0f, -3.0f, -1.5f, 0.0f, 0.5f, 3.0f, 7.0f};
  for (LayerKind kind : {LayerKind::kSigmoid, LayerKind::kSilu, LayerKind::kHardSwish}) {
    auto c = make_case(kind, {{7, 1, 1}}, {7, 1, 1}, 1);
    c.inputs = {x};
    const std::vector<float> y = run_forward(backend, c);
    for (size_t i = 0; i < x.size(); ++i) {
      const double v = x[i], s = 1.0 / (1.0 + std::exp(-v));
      const double want = kind == LayerKind::kSigmoid ? s : kind == LayerKind::kSilu ? v * s
                                                                                     : v * std::clamp(v + 3, 0.0, 6.0) / 6;
      CHECK(y[i] == Approx(want).margin(1e-6));
    }
  }
}

TEST_CASE("mul by a channel scale and by a tensor: backward matches finite differences") {
  require_close(check_gradients(make_case(LayerKind::kMul, {{5, 3, 4}, {5, 1, 1}}, {5, 3, 4}), 5e-3), false);
  require_close(check_gradients(make_case(LayerKind::kMul, {{2, 3, 3}, {2, 3, 3}}, {2, 3, 3}), 5e-3), false);
  // The forward: each channel of each sample times its own scale.
  auto c = make_case(LayerKind::kMul, {{2, 1, 3}, {2, 1, 1}}, {2, 1, 3}, 2);
  c.inputs = {{1, 2, 3, 4, 5, 6, 1, 1, 1, 2, 2, 2}, {10, 100, -1, 0.5f}};
  CpuBackend backend(1);
  CHECK(run_forward(backend, c) == std::vector<float>{10, 20, 30, 400, 500, 600, -1, -1, -1, 1, 1, 1});
}

TEST_CASE("drop_path drops whole samples with probability rate, scales the rest, and is the identity in evaluation") {
  auto c = make_case(LayerKind::kDropPath, {{2, 3, 3}}, {2, 3, 3}, 6);
  c.layer.dropout_rate = 0.5;
  require_close(check_gradients(c, 5e-3), false);

  const int64_t batch = 4000, per_sample = 6;
  auto big = make_case(LayerKind::kDropPath, {{per_sample, 1, 1}}, {per_sample, 1, 1}, batch);
  big.layer.dropout_rate = 0.25;
  big.inputs = {std::vector<float>(static_cast<size_t>(batch * per_sample), 1.0f)};
  CpuBackend backend(1);
  const std::vector<float> out = run_forward(backend, big);
  int64_t kept = 0;
  for (int64_t n = 0; n < batch; ++n) {
    const float first = out[static_cast<size_t>(n * per_sample)];
    CHECK((first == 0.0f || std::abs(first - 1.0f / 0.75f) < 1e-6));
    for (int64_t j = 1; j < per_sample; ++j) CHECK(out[static_cast<size_t>(n * per_sample + j)] == first);
    kept += first != 0.0f;
  }
  CHECK(std::abs(static_cast<double>(kept) / batch - 0.75) < 0.03);
  CHECK(run_forward(backend, big, false) == big.inputs[0]);
}

TEST_CASE("depthwise convolution (groups = channels) backward matches finite differences") {
  auto c = make_case(LayerKind::kConv, {{4, 7, 7}}, {4, 4, 4});
  c.layer.conv = {4, 5, 5, 2, 2, 2, 2, 1, 1, 4, false};
  require_close(check_gradients(c, 5e-3), true);
}
