// Finite-difference gradient checks of single layer kernels (see test_layers_support.hpp).
#include "test_layers_support.hpp"

#include <cmath>

#include "exec/cpu/cpu_backend.hpp"

namespace scaletwin::exec::testing {

using models::LayerKind;

int64_t weight_count(const LayerCase& c) {
  const models::Layer& l = c.layer;
  const models::Shape& in = c.in_shapes.at(0);
  switch (l.kind) {
    case LayerKind::kConv:
      return c.out.c * (in.c / l.conv.groups) * l.conv.kernel_h * l.conv.kernel_w + (l.conv.bias ? c.out.c : 0);
    case LayerKind::kFullyConnected:
      return c.out.c * in.elements() + (l.fc.bias ? c.out.c : 0);
    case LayerKind::kBatchNorm:
      return 2 * in.c;
    default:
      return 0;
  }
}

std::vector<float> random_vector(int64_t n, std::mt19937_64& rng, float lo, float hi) {
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = u(rng);
  return v;
}

namespace {

struct Run {
  std::unique_ptr<LayerKernel> kernel;
  std::vector<float> out;
};

LayerArgs make_args(LayerCase& c, std::vector<float>& out) {
  LayerArgs a;
  for (auto& in : c.inputs) a.inputs.push_back(in.data());
  a.output = out.data();
  a.weights = c.weights.empty() ? nullptr : c.weights.data();
  a.labels = c.labels.empty() ? nullptr : c.labels.data();
  a.loss_scale = 0.5f;
  a.seed = 99;
  return a;
}

// f = Σ out · R, or for softmax cross-entropy loss_scale · Σ −log p[label] (what its backward differentiates).
double objective(const LayerCase& c, const std::vector<float>& out, const std::vector<float>& r) {
  double f = 0.0;
  if (c.layer.kind == LayerKind::kSoftmaxCrossEntropy) {
    const int64_t classes = c.out.elements();
    for (int64_t n = 0; n < c.batch; ++n) f -= 0.5 * std::log(static_cast<double>(out[n * classes + c.labels[n]]));
    return f;
  }
  for (size_t i = 0; i < out.size(); ++i) f += static_cast<double>(out[i]) * r[i];
  return f;
}

double relative_error(const std::vector<double>& a, const std::vector<double>& n, double& norm) {
  double diff = 0.0, ref = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff += (a[i] - n[i]) * (a[i] - n[i]);
    ref += n[i] * n[i];
  }
  norm = std::sqrt(ref);
  return std::sqrt(diff) / std::max(norm, 1e-12);
}

}  // namespace

std::vector<float> run_forward(Backend& backend, LayerCase& c, bool training, float* state) {
  auto kernel = backend.make_layer({&c.layer, c.in_shapes, c.out, c.batch, training});
  std::vector<float> out(static_cast<size_t>(c.batch * c.out.elements()));
  LayerArgs a = make_args(c, out);
  a.state = state;
  kernel->forward(a);
  return out;
}

GradientCheck check_gradients(LayerCase c, double eps, uint64_t seed) {
  std::mt19937_64 rng(seed);
  CpuBackend backend(1);
  for (size_t k = 0; k < c.in_shapes.size(); ++k)
    if (c.inputs.size() <= k) c.inputs.push_back(random_vector(c.batch * c.in_shapes[k].elements(), rng));
  if (c.weights.empty() && weight_count(c) > 0) c.weights = random_vector(weight_count(c), rng, -0.5f, 0.5f);
  const std::vector<float> r = random_vector(c.batch * c.out.elements(), rng);

  // Analytic gradients.
  auto kernel = backend.make_layer({&c.layer, c.in_shapes, c.out, c.batch, true});
  std::vector<float> out(r.size());
  LayerArgs a = make_args(c, out);
  std::vector<std::vector<float>> d_in;
  for (auto& in : c.inputs) d_in.emplace_back(in.size(), 0.0f);
  std::vector<float> d_w(c.weights.size(), 0.0f);
  kernel->forward(a);
  a.d_output = r.data();
  for (auto& d : d_in) a.d_inputs.push_back(d.data());
  a.d_weights = d_w.empty() ? nullptr : d_w.data();
  kernel->backward_weight(a);
  kernel->backward_input(a);

  // Numeric gradients, perturbing every element (the cases are small).
  auto f_at = [&](float& x, double delta) {
    const float saved = x;
    x = static_cast<float>(saved + delta);
    LayerArgs fa = make_args(c, out);
    kernel->forward(fa);
    x = saved;
    return objective(c, out, r);
  };
  auto numeric = [&](std::vector<float>& v) {
    std::vector<double> g;
    for (float& x : v) g.push_back((f_at(x, eps) - f_at(x, -eps)) / (2 * eps));
    return g;
  };
  GradientCheck result;
  std::vector<double> all_a, all_n;
  for (size_t k = 0; k < c.inputs.size(); ++k) {
    const std::vector<double> n = numeric(c.inputs[k]);
    all_n.insert(all_n.end(), n.begin(), n.end());
    all_a.insert(all_a.end(), d_in[k].begin(), d_in[k].end());
  }
  result.input_error = relative_error(all_a, all_n, result.input_norm);
  if (!c.weights.empty()) {
    const std::vector<double> n = numeric(c.weights);
    const std::vector<double> an(d_w.begin(), d_w.end());
    result.weight_error = relative_error(an, n, result.weight_norm);
  }
  return result;
}

}  // namespace scaletwin::exec::testing
