// The naive reference Backend of test_cuda_support.hpp: host memory, every layer as the plain loops of its
// definition in exec/backend.hpp, sums in double. Slow and obviously right; it only runs on test-sized layers.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "core/error.hpp"
#include "test_cuda_support.hpp"

namespace scaletwin::exec::cuda_testing {
namespace {

using models::LayerKind;

// Window geometry shared by convolution and pooling: output position o, tap t → input position.
struct Axis {
  int64_t in = 1, out = 1, stride = 1, pad = 0, dilation = 1, window = 1;
  int64_t at(int64_t o, int64_t t) const { return o * stride - pad + t * dilation; }
  bool inside(int64_t i) const { return i >= 0 && i < in; }
};

class ConvRef : public LayerKernel {
 public:
  explicit ConvRef(const LayerDesc& d) : d_(d) {
    const auto& p = d.layer->conv;
    const auto& in = d.in_shapes[0];
    h_ = {in.h, d.out_shape.h, p.stride_h, p.pad_h, p.dilation_h, p.kernel_h};
    w_ = {in.w, d.out_shape.w, p.stride_w, p.pad_w, p.dilation_w, p.kernel_w};
    cin_ = in.c / p.groups;
    kout_ = d.out_shape.c / p.groups;
    weights_ = d.out_shape.c * cin_ * p.kernel_h * p.kernel_w;
  }
  void forward(const LayerArgs& a) override { visit(a, 0); }
  void backward_weight(const LayerArgs& a) override {
    std::fill(a.d_weights, a.d_weights + weights_ + (d_.layer->conv.bias ? d_.out_shape.c : 0), 0.0f);
    visit(a, 1);
  }
  void backward_input(const LayerArgs& a) override {
    if (a.d_inputs[0] == nullptr) return;
    std::fill(a.d_inputs[0], a.d_inputs[0] + d_.batch * d_.in_shapes[0].elements(), 0.0f);
    visit(a, 2);
  }

 private:
  // mode 0: y = conv(x) + b; 1: dW, db; 2: dx. Every (sample, filter, output position, tap) once.
  void visit(const LayerArgs& a, int mode) const {
    const auto& in = d_.in_shapes[0];
    const auto& out = d_.out_shape;
    const bool bias = d_.layer->conv.bias;
    for (int64_t n = 0; n < d_.batch; ++n)
      for (int64_t k = 0; k < out.c; ++k)
        for (int64_t oy = 0; oy < out.h; ++oy)
          for (int64_t ox = 0; ox < out.w; ++ox) {
            const int64_t yi = ((n * out.c + k) * out.h + oy) * out.w + ox;
            const int64_t group = k / kout_;
            double sum = 0.0;
            for (int64_t c = 0; c < cin_; ++c)
              for (int64_t r = 0; r < h_.window; ++r)
                for (int64_t s = 0; s < w_.window; ++s) {
                  const int64_t iy = h_.at(oy, r), ix = w_.at(ox, s);
                  if (!h_.inside(iy) || !w_.inside(ix)) continue;
                  const int64_t xi = ((n * in.c + group * cin_ + c) * in.h + iy) * in.w + ix;
                  const int64_t wi = ((k * cin_ + c) * h_.window + r) * w_.window + s;
                  if (mode == 0) sum += static_cast<double>(a.inputs[0][xi]) * a.weights[wi];
                  if (mode == 1) a.d_weights[wi] += a.inputs[0][xi] * a.d_output[yi];
                  if (mode == 2) a.d_inputs[0][xi] += a.weights[wi] * a.d_output[yi];
                }
            if (mode == 0) a.output[yi] = static_cast<float>(sum + (bias ? a.weights[weights_ + k] : 0.0));
            if (mode == 1 && bias) a.d_weights[weights_ + k] += a.d_output[yi];
          }
  }
  LayerDesc d_;
  Axis h_, w_;
  int64_t cin_ = 0, kout_ = 0, weights_ = 0;
};

class FcRef : public LayerKernel {
 public:
  explicit FcRef(const LayerDesc& d)
      : d_(d), in_(d.in_shapes[0].elements()), out_(d.out_shape.elements()), bias_(d.layer->fc.bias) {}
  void forward(const LayerArgs& a) override {
    for (int64_t n = 0; n < d_.batch; ++n)
      for (int64_t o = 0; o < out_; ++o) {
        double s = bias_ ? a.weights[out_ * in_ + o] : 0.0;
        for (int64_t i = 0; i < in_; ++i) s += static_cast<double>(a.weights[o * in_ + i]) * a.inputs[0][n * in_ + i];
        a.output[n * out_ + o] = static_cast<float>(s);
      }
  }
  void backward_weight(const LayerArgs& a) override {
    for (int64_t o = 0; o < out_; ++o) {
      for (int64_t i = 0; i < in_; ++i) {
        double s = 0.0;
        for (int64_t n = 0; n < d_.batch; ++n) s += static_cast<double>(a.d_output[n * out_ + o]) * a.inputs[0][n * in_ + i];
        a.d_weights[o * in_ + i] = static_cast<float>(s);
      }
      if (!bias_) continue;
      double s = 0.0;
      for (int64_t n = 0; n < d_.batch; ++n) s += a.d_output[n * out_ + o];
      a.d_weights[out_ * in_ + o] = static_cast<float>(s);
    }
  }
  void backward_input(const LayerArgs& a) override {
    if (a.d_inputs[0] == nullptr) return;
    for (int64_t n = 0; n < d_.batch; ++n)
      for (int64_t i = 0; i < in_; ++i) {
        double s = 0.0;
        for (int64_t o = 0; o < out_; ++o) s += static_cast<double>(a.weights[o * in_ + i]) * a.d_output[n * out_ + o];
        a.d_inputs[0][n * in_ + i] = static_cast<float>(s);
      }
  }

 private:
  LayerDesc d_;
  int64_t in_, out_;
  bool bias_;
};

class BatchNormRef : public LayerKernel {
 public:
  explicit BatchNormRef(const LayerDesc& d)
      : d_(d), c_(d.in_shapes[0].c), hw_(d.in_shapes[0].h * d.in_shapes[0].w), mean_(c_), var_(c_) {}
  float& x(const float* base, int64_t n, int64_t c, int64_t i) const {
    return const_cast<float*>(base)[(n * c_ + c) * hw_ + i];
  }
  void forward(const LayerArgs& a) override {
    const double eps = d_.layer->bn_eps, m = d_.layer->bn_momentum, count = static_cast<double>(d_.batch * hw_);
    for (int64_t c = 0; c < c_; ++c) {
      double mean = a.state ? a.state[c] : 0.0, var = a.state ? a.state[c_ + c] : 1.0;
      if (d_.training) {
        double s = 0.0, q = 0.0;
        for (int64_t n = 0; n < d_.batch; ++n)
          for (int64_t i = 0; i < hw_; ++i) s += x(a.inputs[0], n, c, i);
        mean = s / count;
        for (int64_t n = 0; n < d_.batch; ++n)
          for (int64_t i = 0; i < hw_; ++i) q += (x(a.inputs[0], n, c, i) - mean) * (x(a.inputs[0], n, c, i) - mean);
        var = q / count;
        mean_[c] = mean;
        var_[c] = var;
        if (a.state) {
          a.state[c] = static_cast<float>((1 - m) * a.state[c] + m * mean);
          a.state[c_ + c] = static_cast<float>((1 - m) * a.state[c_ + c] + m * var * count / (count - 1));
        }
      }
      for (int64_t n = 0; n < d_.batch; ++n)
        for (int64_t i = 0; i < hw_; ++i)
          x(a.output, n, c, i) = static_cast<float>(a.weights[c] * (x(a.inputs[0], n, c, i) - mean) /
                                                        std::sqrt(var + eps) + a.weights[c_ + c]);
    }
  }
  // dx = gamma / σ · (dy − mean(dy) − x̂ · mean(dy · x̂)); dgamma = Σ dy · x̂; dbeta = Σ dy.
  void backward_weight(const LayerArgs& a) override {
    const double count = static_cast<double>(d_.batch * hw_);
    for (int64_t c = 0; c < c_; ++c) {
      const double sigma = std::sqrt(var_[c] + d_.layer->bn_eps);
      double sum_dy = 0.0, sum_dy_xhat = 0.0;
      for (int64_t n = 0; n < d_.batch; ++n)
        for (int64_t i = 0; i < hw_; ++i) {
          sum_dy += x(a.d_output, n, c, i);
          sum_dy_xhat += x(a.d_output, n, c, i) * (x(a.inputs[0], n, c, i) - mean_[c]) / sigma;
        }
      a.d_weights[c] = static_cast<float>(sum_dy_xhat);
      a.d_weights[c_ + c] = static_cast<float>(sum_dy);
      if (a.d_inputs[0] == nullptr) continue;
      for (int64_t n = 0; n < d_.batch; ++n)
        for (int64_t i = 0; i < hw_; ++i) {
          const double xhat = (x(a.inputs[0], n, c, i) - mean_[c]) / sigma;
          x(a.d_inputs[0], n, c, i) = static_cast<float>(a.weights[c] / sigma *
                                                         (x(a.d_output, n, c, i) - sum_dy / count - xhat * sum_dy_xhat / count));
        }
    }
  }
  void backward_input(const LayerArgs&) override {}

 private:
  LayerDesc d_;
  int64_t c_, hw_;
  std::vector<double> mean_, var_;
};

class PoolRef : public LayerKernel {
 public:
  explicit PoolRef(const LayerDesc& d) : d_(d) {
    const auto& in = d.in_shapes[0];
    models::PoolParams p = d.layer->pool;
    if (d.layer->kind == LayerKind::kGlobalAvgPool) p = {in.h, in.w, 1, 1, 0, 0, false, true};
    h_ = {in.h, d.out_shape.h, p.stride_h, p.pad_h, 1, p.kernel_h};
    w_ = {in.w, d.out_shape.w, p.stride_w, p.pad_w, 1, p.kernel_w};
    max_ = d.layer->kind == LayerKind::kMaxPool;
    include_pad_ = p.count_include_pad;
  }
  void forward(const LayerArgs& a) override { visit(a, false); }
  void backward_weight(const LayerArgs&) override {}
  void backward_input(const LayerArgs& a) override {
    if (a.d_inputs[0] == nullptr) return;
    std::fill(a.d_inputs[0], a.d_inputs[0] + d_.batch * d_.in_shapes[0].elements(), 0.0f);
    visit(a, true);
  }

 private:
  void visit(const LayerArgs& a, bool backward) const {
    const int64_t planes = d_.batch * d_.in_shapes[0].c;
    for (int64_t pl = 0; pl < planes; ++pl)
      for (int64_t oy = 0; oy < h_.out; ++oy)
        for (int64_t ox = 0; ox < w_.out; ++ox) {
          const int64_t yi = (pl * h_.out + oy) * w_.out + ox;
          double sum = 0.0, best = -std::numeric_limits<double>::infinity();
          int64_t arg = -1, valid = 0;
          for (int64_t r = 0; r < h_.window; ++r)
            for (int64_t s = 0; s < w_.window; ++s) {
              const int64_t iy = h_.at(oy, r), ix = w_.at(ox, s);
              if (!h_.inside(iy) || !w_.inside(ix)) continue;
              const int64_t xi = (pl * h_.in + iy) * w_.in + ix;
              ++valid;
              sum += a.inputs[0][xi];
              if (a.inputs[0][xi] > best) best = a.inputs[0][xi], arg = xi;
            }
          const double divisor = include_pad_ ? static_cast<double>(h_.window * w_.window) : static_cast<double>(valid);
          if (!backward) {
            a.output[yi] = static_cast<float>(max_ ? best : sum / divisor);
          } else if (max_) {
            a.d_inputs[0][arg] += a.d_output[yi];
          } else {
            for (int64_t r = 0; r < h_.window; ++r)
              for (int64_t s = 0; s < w_.window; ++s) {
                const int64_t iy = h_.at(oy, r), ix = w_.at(ox, s);
                if (h_.inside(iy) && w_.inside(ix))
                  a.d_inputs[0][(pl * h_.in + iy) * w_.in + ix] += static_cast<float>(a.d_output[yi] / divisor);
              }
          }
        }
  }
  LayerDesc d_;
  Axis h_, w_;
  bool max_ = true, include_pad_ = true;
};

// relu, add, concat, flatten, dropout, softmax cross-entropy, sigmoid, silu, hardswish, mul, drop_path:
// element-wise definitions.
class ElementwiseRef : public LayerKernel {
 public:
  explicit ElementwiseRef(const LayerDesc& d) : d_(d), n_(d.batch * d.out_shape.elements()) {}
  void forward(const LayerArgs& a) override {
    switch (d_.layer->kind) {
      case LayerKind::kRelu:
        for (int64_t i = 0; i < n_; ++i) a.output[i] = std::max(a.inputs[0][i], 0.0f);
        break;
      case LayerKind::kAdd:
        for (int64_t i = 0; i < n_; ++i) {
          float s = a.inputs[0][i];
          for (size_t k = 1; k < a.inputs.size(); ++k) s += a.inputs[k][i];
          a.output[i] = s;
        }
        break;
      case LayerKind::kConcat: concat(a, true); break;
      case LayerKind::kSoftmaxCrossEntropy: softmax(a); break;
      case LayerKind::kSigmoid:
        for (int64_t i = 0; i < n_; ++i) a.output[i] = static_cast<float>(1.0 / (1.0 + std::exp(-double{a.inputs[0][i]})));
        break;
      case LayerKind::kSilu:
        for (int64_t i = 0; i < n_; ++i) {
          const double x = a.inputs[0][i];
          a.output[i] = static_cast<float>(x / (1.0 + std::exp(-x)));
        }
        break;
      case LayerKind::kHardSwish:
        for (int64_t i = 0; i < n_; ++i) {
          const double x = a.inputs[0][i];
          a.output[i] = static_cast<float>(x * std::clamp(x + 3.0, 0.0, 6.0) / 6.0);
        }
        break;
      case LayerKind::kMul:
        for (int64_t i = 0; i < n_; ++i) a.output[i] = a.inputs[0][i] * a.inputs[1][scale_index(i)];
        break;
      default: dropout(a.inputs[0], a.output, a.seed);  // flatten, dropout, drop_path
    }
  }
  void backward_weight(const LayerArgs&) override {}
  void backward_input(const LayerArgs& a) override {
    switch (d_.layer->kind) {
      case LayerKind::kRelu:
        for (int64_t i = 0; i < n_; ++i) a.d_inputs[0][i] = a.inputs[0][i] > 0.0f ? a.d_output[i] : 0.0f;
        break;
      case LayerKind::kAdd:
        for (float* d : a.d_inputs) std::memcpy(d, a.d_output, static_cast<size_t>(n_) * sizeof(float));
        break;
      case LayerKind::kConcat: concat(a, false); break;
      case LayerKind::kSoftmaxCrossEntropy: {
        const int64_t classes = d_.out_shape.elements();
        for (int64_t i = 0; i < n_; ++i) {
          const bool hit = static_cast<int64_t>(a.labels[i / classes]) == i % classes;
          a.d_inputs[0][i] = (a.output[i] - (hit ? 1.0f : 0.0f)) * a.loss_scale;
        }
        break;
      }
      case LayerKind::kSigmoid:
      case LayerKind::kSilu:
      case LayerKind::kHardSwish:
        for (int64_t i = 0; i < n_; ++i) a.d_inputs[0][i] = static_cast<float>(a.d_output[i] * slope(a.inputs[0][i]));
        break;
      case LayerKind::kMul: {
        const int64_t scales = d_.batch * d_.in_shapes[1].elements();
        std::vector<double> ds(static_cast<size_t>(scales), 0.0);
        for (int64_t i = 0; i < n_; ++i) {
          a.d_inputs[0][i] = a.d_output[i] * a.inputs[1][scale_index(i)];
          ds[static_cast<size_t>(scale_index(i))] += double{a.d_output[i]} * a.inputs[0][i];
        }
        for (int64_t j = 0; j < scales; ++j) a.d_inputs[1][j] = static_cast<float>(ds[static_cast<size_t>(j)]);
        break;
      }
      default: dropout(a.d_output, a.d_inputs[0], a.seed);
    }
  }

 private:
  // dropout draws per element; drop_path per sample (the element's sample index).
  void dropout(const float* src, float* dst, uint64_t seed) const {
    const bool masks = d_.layer->kind == LayerKind::kDropout || d_.layer->kind == LayerKind::kDropPath;
    const double rate = masks && d_.training ? d_.layer->dropout_rate : 0.0;
    const auto scale = static_cast<float>(1.0 / (1.0 - rate));
    const int64_t per_draw = d_.layer->kind == LayerKind::kDropPath ? d_.out_shape.elements() : 1;
    for (int64_t i = 0; i < n_; ++i)
      dst[i] = rate == 0.0 ? src[i]
               : dropout_keep(seed, static_cast<uint64_t>(i / per_draw), rate) ? src[i] * scale
                                                                                : 0.0f;
  }
  // mul: the scale element of output element i (the same index, or its sample's channel for a C×1×1 scale).
  int64_t scale_index(int64_t i) const {
    if (d_.in_shapes[1] == d_.in_shapes[0]) return i;
    const int64_t positions = d_.out_shape.h * d_.out_shape.w;
    return i / positions;  // NCHW: (n · C + c)
  }
  double slope(double x) const {
    const double s = 1.0 / (1.0 + std::exp(-x));
    switch (d_.layer->kind) {
      case LayerKind::kSigmoid: return s * (1.0 - s);
      case LayerKind::kSilu: return s * (1.0 + x * (1.0 - s));
      default: return x < -3.0 ? 0.0 : (x <= 3.0 ? (2.0 * x + 3.0) / 6.0 : 1.0);
    }
  }
  void concat(const LayerArgs& a, bool forward) const {
    const int64_t wide = d_.out_shape.elements();
    for (int64_t n = 0; n < d_.batch; ++n) {
      int64_t offset = n * wide;
      for (size_t k = 0; k < d_.in_shapes.size(); ++k) {
        const int64_t len = d_.in_shapes[k].elements();
        for (int64_t i = 0; i < len; ++i) {
          if (forward) a.output[offset + i] = a.inputs[k][n * len + i];
          else a.d_inputs[k][n * len + i] = a.d_output[offset + i];
        }
        offset += len;
      }
    }
  }
  void softmax(const LayerArgs& a) const {
    const int64_t classes = d_.out_shape.elements();
    for (int64_t n = 0; n < d_.batch; ++n) {
      const float* x = a.inputs[0] + n * classes;
      const double top = *std::max_element(x, x + classes);
      double sum = 0.0;
      for (int64_t c = 0; c < classes; ++c) sum += std::exp(x[c] - top);
      for (int64_t c = 0; c < classes; ++c) a.output[n * classes + c] = static_cast<float>(std::exp(x[c] - top) / sum);
    }
  }
  LayerDesc d_;
  int64_t n_;
};

class ReferenceBackend : public Backend {
 public:
  std::string name() const override { return "reference (naive host loops)"; }
  Buffer alloc(int64_t floats) override {
    if (floats == 0) return Buffer(nullptr, 0, nullptr);
    return Buffer(new float[static_cast<size_t>(floats)](), floats, [](float* p) { delete[] p; });
  }
  void upload(float* dst, const float* src, int64_t n) override { copy(dst, src, n); }
  void download(float* dst, const float* src, int64_t n) override { copy(dst, src, n); }
  void synchronize() override {}
  std::unique_ptr<LayerKernel> make_layer(const LayerDesc& d) override {
    switch (d.layer->kind) {
      case LayerKind::kConv: return std::make_unique<ConvRef>(d);
      case LayerKind::kFullyConnected: return std::make_unique<FcRef>(d);
      case LayerKind::kBatchNorm: return std::make_unique<BatchNormRef>(d);
      case LayerKind::kMaxPool:
      case LayerKind::kAvgPool:
      case LayerKind::kGlobalAvgPool: return std::make_unique<PoolRef>(d);
      case LayerKind::kInput: break;
      default: return std::make_unique<ElementwiseRef>(d);
    }
    ST_ASSERT(false, "no reference kernel for " + d.layer->name);
    return nullptr;
  }
  void copy(float* dst, const float* src, int64_t n) override {
    if (n > 0 && dst != src) std::memmove(dst, src, static_cast<size_t>(n) * sizeof(float));
  }
  void fill(float* dst, float value, int64_t n) override { std::fill(dst, dst + n, value); }
  void add(float* dst, const float* src, int64_t n) override {
    for (int64_t i = 0; i < n; ++i) dst[i] += src[i];
  }
  void scale(float* dst, float factor, int64_t n) override {
    for (int64_t i = 0; i < n; ++i) dst[i] *= factor;
  }
  void copy_2d(float* dst, int64_t dst_ld, const float* src, int64_t src_ld, int64_t rows, int64_t cols) override {
    for (int64_t r = 0; r < rows; ++r) copy(dst + r * dst_ld, src + r * src_ld, cols);
  }
  void sgd_update(float* w, const float* g, float* m, int64_t n, const SgdStep& s) override {
    for (int64_t i = 0; i < n; ++i) {
      const float gi = g[i] + s.weight_decay * w[i];
      m[i] = s.momentum * m[i] + gi;
      w[i] -= s.learning_rate * m[i];
    }
  }
};

}  // namespace

std::unique_ptr<Backend> make_reference_backend() { return std::make_unique<ReferenceBackend>(); }

}  // namespace scaletwin::exec::cuda_testing
