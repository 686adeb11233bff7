// The layer cases, the layer runner and the error measures of test_cuda_support.hpp.
#include "test_cuda_support.hpp"

#include <algorithm>
#include <cmath>
#include <random>

#include "core/error.hpp"

namespace scaletwin::exec::cuda_testing {

using models::LayerKind;
using models::Shape;

namespace {

LayerCase make(std::string title, LayerKind kind, std::vector<Shape> in, Shape out, bool training = true) {
  LayerCase c;
  c.title = std::move(title);
  c.layer.kind = kind;
  c.layer.name = c.title;
  c.in_shapes = std::move(in);
  c.out = out;
  c.layer.out = out;
  c.training = training;
  return c;
}

LayerCase conv(std::string title, Shape in, Shape out, models::ConvParams p) {
  LayerCase c = make(std::move(title), LayerKind::kConv, {in}, out);
  c.layer.conv = p;
  return c;
}

LayerCase pool(std::string title, LayerKind kind, Shape in, Shape out, models::PoolParams p) {
  LayerCase c = make(std::move(title), kind, {in}, out);
  c.layer.pool = p;
  return c;
}

int64_t param_count(const LayerCase& c) {
  const models::Layer& l = c.layer;
  const Shape& in = c.in_shapes.at(0);
  switch (l.kind) {
    case LayerKind::kConv:
      return c.out.c * (in.c / l.conv.groups) * l.conv.kernel_h * l.conv.kernel_w + (l.conv.bias ? c.out.c : 0);
    case LayerKind::kFullyConnected: return c.out.c * in.elements() + (l.fc.bias ? c.out.c : 0);
    case LayerKind::kBatchNorm: return 2 * in.c;
    default: return 0;
  }
}

std::vector<float> uniform(int64_t n, std::mt19937_64& rng, float lo, float hi) {
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = u(rng);
  return v;
}

// Distinct values 0.01 apart, shuffled: max pooling and ReLU then have no ties and no zeros.
std::vector<float> distinct(int64_t n, std::mt19937_64& rng) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = 0.01f * static_cast<float>(i - n / 2) + 0.005f;
  std::shuffle(v.begin(), v.end(), rng);
  return v;
}

}  // namespace

std::vector<LayerCase> layer_cases() {
  std::vector<LayerCase> cases;
  cases.push_back(conv("conv 3x3 pad 1 bias", {3, 8, 8}, {4, 8, 8}, {4, 3, 3, 1, 1, 1, 1, 1, 1, 1, true}));
  cases.push_back(conv("conv 3x3 stride 2 groups 2 dilation 1x2 bias", {4, 7, 6}, {4, 4, 2},
                       {4, 3, 3, 2, 2, 1, 1, 1, 2, 2, true}));
  cases.push_back(conv("conv 1x1 stride 2 no bias", {8, 6, 6}, {6, 3, 3}, {6, 1, 1, 2, 2, 0, 0, 1, 1, 1, false}));
  cases.push_back(conv("conv 7x7 stride 2 pad 3 (stem)", {3, 16, 16}, {8, 8, 8}, {8, 7, 7, 2, 2, 3, 3, 1, 1, 1, false}));
  LayerCase fc = make("fc with bias on a 3-d input", LayerKind::kFullyConnected, {{4, 3, 3}}, {5, 1, 1});
  fc.layer.fc = {5, true};
  cases.push_back(fc);
  LayerCase fc2 = make("fc without bias", LayerKind::kFullyConnected, {{10, 1, 1}}, {7, 1, 1});
  fc2.layer.fc = {7, false};
  fc2.batch = 5;
  cases.push_back(fc2);
  LayerCase bn = make("batchnorm training", LayerKind::kBatchNorm, {{3, 4, 4}}, {3, 4, 4});
  bn.batch = 3;
  cases.push_back(bn);
  LayerCase bn_eval = make("batchnorm inference", LayerKind::kBatchNorm, {{3, 4, 4}}, {3, 4, 4}, false);
  bn_eval.layer.bn_eps = 1e-3;
  cases.push_back(bn_eval);
  cases.push_back(make("relu", LayerKind::kRelu, {{3, 4, 4}}, {3, 4, 4}));
  cases.push_back(pool("max pool 3 stride 2 pad 1", LayerKind::kMaxPool, {2, 8, 8}, {2, 4, 4},
                       {3, 3, 2, 2, 1, 1, false, true}));
  cases.push_back(pool("average pool 3 stride 2 pad 1, padding counted", LayerKind::kAvgPool, {2, 8, 8}, {2, 4, 4},
                       {3, 3, 2, 2, 1, 1, false, true}));
  cases.push_back(pool("average pool 3 stride 2 pad 1, padding not counted", LayerKind::kAvgPool, {2, 8, 8},
                       {2, 4, 4}, {3, 3, 2, 2, 1, 1, false, false}));
  cases.push_back(make("global average pool", LayerKind::kGlobalAvgPool, {{4, 5, 5}}, {4, 1, 1}));
  cases.push_back(make("add of three inputs", LayerKind::kAdd, {{2, 3, 3}, {2, 3, 3}, {2, 3, 3}}, {2, 3, 3}));
  cases.push_back(make("concat", LayerKind::kConcat, {{2, 3, 3}, {3, 3, 3}}, {5, 3, 3}));
  cases.push_back(make("flatten", LayerKind::kFlatten, {{2, 3, 3}}, {18, 1, 1}));
  LayerCase drop = make("dropout 0.3 training", LayerKind::kDropout, {{50, 1, 1}}, {50, 1, 1});
  drop.layer.dropout_rate = 0.3;
  cases.push_back(drop);
  LayerCase drop_eval = make("dropout inference", LayerKind::kDropout, {{50, 1, 1}}, {50, 1, 1}, false);
  drop_eval.layer.dropout_rate = 0.3;
  cases.push_back(drop_eval);
  cases.push_back(conv("depthwise conv 5x5 stride 2 pad 2", {6, 9, 9}, {6, 5, 5}, {6, 5, 5, 2, 2, 2, 2, 1, 1, 6, false}));
  cases.push_back(conv("grouped conv 3x3 (32 groups)", {64, 5, 5}, {64, 5, 5}, {64, 3, 3, 1, 1, 1, 1, 1, 1, 32, false}));
  cases.push_back(make("sigmoid", LayerKind::kSigmoid, {{3, 4, 4}}, {3, 4, 4}));
  cases.push_back(make("silu", LayerKind::kSilu, {{3, 4, 4}}, {3, 4, 4}));
  cases.push_back(make("hardswish", LayerKind::kHardSwish, {{3, 4, 4}}, {3, 4, 4}));
  cases.push_back(make("mul by a channel scale (squeeze-and-excitation)", LayerKind::kMul, {{5, 3, 4}, {5, 1, 1}},
                       {5, 3, 4}));
  cases.push_back(make("mul of two tensors", LayerKind::kMul, {{2, 3, 3}, {2, 3, 3}}, {2, 3, 3}));
  LayerCase path = make("drop_path 0.5 training", LayerKind::kDropPath, {{3, 2, 2}}, {3, 2, 2});
  path.layer.dropout_rate = 0.5;
  path.batch = 16;
  cases.push_back(path);
  LayerCase xent = make("softmax cross-entropy", LayerKind::kSoftmaxCrossEntropy, {{10, 1, 1}}, {10, 1, 1});
  xent.batch = 4;
  cases.push_back(xent);
  return cases;
}

LayerResult run_layer(Backend& backend, const LayerCase& c, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const int64_t out_n = c.batch * c.out.elements();
  const int64_t params = param_count(c);
  const bool bn = c.layer.kind == LayerKind::kBatchNorm;
  const auto upload = [&](const std::vector<float>& host) {
    Buffer b = backend.alloc(static_cast<int64_t>(host.size()));
    backend.upload(b.data(), host.data(), b.size());
    return b;
  };
  std::vector<Buffer> inputs, d_inputs;
  LayerArgs a;
  for (const Shape& s : c.in_shapes) {
    const int64_t n = c.batch * s.elements();
    inputs.push_back(upload(c.layer.kind == LayerKind::kMaxPool || c.layer.kind == LayerKind::kRelu
                                ? distinct(n, rng)
                                : uniform(n, rng, -1.0f, 1.0f)));
    d_inputs.push_back(backend.alloc(n));
    a.inputs.push_back(inputs.back().data());
    a.d_inputs.push_back(d_inputs.back().data());
  }
  std::vector<float> weights = uniform(params, rng, -0.5f, 0.5f);
  if (bn)
    for (int64_t i = 0; i < params / 2; ++i) weights[static_cast<size_t>(i)] += 1.0f;  // gamma around 1
  std::vector<float> state;
  if (bn) {
    state = uniform(params, rng, -0.2f, 0.2f);
    for (int64_t i = params / 2; i < params; ++i) state[static_cast<size_t>(i)] += 1.0f;  // variances around 1
  }
  std::vector<float> labels(static_cast<size_t>(c.batch));
  for (float& l : labels) l = static_cast<float>(rng() % static_cast<uint64_t>(c.out.elements()));
  Buffer w = upload(weights), dw = backend.alloc(params), st = upload(state), lab = upload(labels);
  Buffer out = backend.alloc(out_n), d_out = upload(uniform(out_n, rng, -1.0f, 1.0f));
  a.output = out.data();
  a.weights = params > 0 ? w.data() : nullptr;
  a.d_weights = params > 0 ? dw.data() : nullptr;
  a.state = bn ? st.data() : nullptr;
  a.d_output = d_out.data();
  a.labels = lab.data();
  a.loss_scale = 0.5f;
  a.seed = seed * 31 + 7;
  auto kernel = backend.make_layer({&c.layer, c.in_shapes, c.out, c.batch, c.training});
  kernel->forward(a);
  if (c.training) {
    kernel->backward_weight(a);
    kernel->backward_input(a);
  }
  backend.synchronize();
  const auto download = [&](const Buffer& b) {
    std::vector<float> host(static_cast<size_t>(b.size()));
    backend.download(host.data(), b.data(), b.size());
    return host;
  };
  LayerResult r;
  r.output = download(out);
  if (c.training) {
    r.d_weights = download(dw);
    for (const Buffer& d : d_inputs) r.d_inputs.push_back(download(d));
  }
  r.state = download(st);
  return r;
}

double relative_error(const std::vector<float>& a, const std::vector<float>& b) {
  ST_ASSERT(a.size() == b.size(), "comparing vectors of different sizes");
  double diff = 0.0, norm = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
    norm += static_cast<double>(b[i]) * b[i];
  }
  return norm > 0.0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

double max_relative_error(const LayerResult& a, const LayerResult& b) {
  ST_ASSERT(a.d_inputs.size() == b.d_inputs.size(), "results with different input counts");
  double worst = std::max({relative_error(a.output, b.output), relative_error(a.d_weights, b.d_weights),
                           relative_error(a.state, b.state)});
  for (size_t k = 0; k < a.d_inputs.size(); ++k) worst = std::max(worst, relative_error(a.d_inputs[k], b.d_inputs[k]));
  return worst;
}

}  // namespace scaletwin::exec::cuda_testing
