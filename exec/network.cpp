// Network: forward and backward through the layer graph on a Backend, over flat parameter and gradient buffers
// (see network.hpp for the layout, the initialisation and the model-parallel hooks).
#include "exec/network.hpp"

#include <cmath>

#include "core/error.hpp"
#include "exec/network_layout.hpp"

namespace scaletwin::exec {

using models::LayerKind;

struct Network::Impl {
  Backend& backend;
  models::Model model;
  NetworkOptions options;
  detail::Layout layout;
  std::vector<int> blocks;  // each layer's output layout (detail::activation_blocks)
  Buffer params, grads, state, labels, scratch;
  std::vector<Buffer> act, d_act;          // full activations and their gradients, per layer
  std::vector<Buffer> slice_out, d_slice;  // model-parallel fc slices: the kernel's own output and its gradient
  std::map<std::pair<int64_t, bool>, std::vector<std::unique_ptr<LayerKernel>>> kernels;  // (batch, training)
  std::vector<bool> written;
  std::vector<float> host_probs, host_labels_copy;
  int64_t last_n = 0;
  bool last_training = false;
  uint64_t steps = 0;

  Impl(Backend& b, const models::Model& m, NetworkOptions o) : backend(b), model(m), options(std::move(o)) {}

  std::vector<std::unique_ptr<LayerKernel>>& kernels_for(int64_t n, bool training) {
    auto& list = kernels[{n, training}];
    if (!list.empty()) return list;
    list.resize(model.layers.size());
    for (size_t i = 1; i < model.layers.size(); ++i) {
      const detail::LayerGeometry& g = layout.layers[i];
      LayerDesc desc{&model.layers[i], g.in_shapes, g.kernel_out, n, training, {}, blocks[i]};
      for (int in : model.layers[i].inputs) desc.in_blocks.push_back(blocks[in]);
      list[i] = backend.make_layer(desc);
    }
    return list;
  }

  LayerArgs args_for(size_t i) const {
    const detail::LayerGeometry& g = layout.layers[i];
    LayerArgs a;
    for (int in : model.layers[i].inputs) a.inputs.push_back(act[in].data());
    a.output = g.sliced ? slice_out[i].data() : act[i].data();
    if (g.param_count > 0) {
      a.weights = params.data() + g.param_offset;
      a.d_weights = grads.data() + g.param_offset;
    }
    if (g.state_count > 0) a.state = state.data() + g.state_offset;
    a.labels = labels.data();
    a.seed = splitmix64(options.dropout_seed ^ splitmix64(steps * 1000003ull + i));
    return a;
  }

  LossStats loss_stats(const float* host_labels, int64_t n) {
    LossStats stats;
    if (layout.loss_layer < 0) return stats;
    if (host_labels == nullptr) {  // the labels the caller placed in the label buffer
      host_labels_copy.resize(static_cast<size_t>(n));
      backend.download(host_labels_copy.data(), labels.data(), n);
      host_labels = host_labels_copy.data();
    }
    const int64_t classes = layout.layers[layout.loss_layer].out_shape.elements();
    host_probs.resize(static_cast<size_t>(n * classes));
    backend.download(host_probs.data(), act[layout.loss_layer].data(), n * classes);
    for (int64_t s = 0; s < n; ++s) {
      const float* p = host_probs.data() + s * classes;
      const auto label = static_cast<int64_t>(host_labels[s]);
      ST_ASSERT(label >= 0 && label < classes, "label outside the model's classes");
      int64_t best = 0;
      for (int64_t c = 1; c < classes; ++c)
        if (p[c] > p[best]) best = c;
      stats.loss_sum -= std::log(std::max(static_cast<double>(p[label]), 1e-30));
      stats.correct += best == label ? 1 : 0;
    }
    stats.samples = n;
    return stats;
  }

  // Where layer i's backward writes the gradient of its k-th input: straight into the producer's gradient when
  // it is the first consumer to do so, else into scratch (added afterwards). Null for the network input.
  float* input_gradient_target(int producer, size_t k) {
    if (producer == 0 && !options.input_gradient) return nullptr;
    if (!written[producer]) {
      written[producer] = true;
      return d_act[producer].data();
    }
    return scratch.data() + static_cast<int64_t>(k) * options.batch * max_elements();
  }

  int64_t max_elements() const {
    int64_t m = model.input.elements();
    for (const auto& g : layout.layers) m = std::max(m, g.out_shape.elements());
    return m;
  }
};

Network::Network(Backend& backend, const models::Model& model, NetworkOptions options)
    : impl_(std::make_unique<Impl>(backend, model, std::move(options))) {
  Impl& m = *impl_;
  ST_ASSERT(m.options.batch > 0, "network batch must be positive");
  m.layout = detail::make_layout(m.model, m.options.fc_slices);
  m.blocks = detail::activation_blocks(m.model, m.layout, backend.activation_block());
  std::vector<float> host_params, host_state;
  detail::init_params(m.model, m.layout, m.options.seed, host_params, host_state);
  m.params = backend.alloc(m.layout.param_count);
  m.grads = backend.alloc(m.layout.param_count);
  m.state = backend.alloc(m.layout.state_count);
  backend.upload(m.params.data(), host_params.data(), m.layout.param_count);
  backend.upload(m.state.data(), host_state.data(), m.layout.state_count);
  m.labels = backend.alloc(m.options.batch);
  size_t max_inputs = 1;
  const size_t count = m.model.layers.size();
  m.act.resize(count);
  m.d_act.resize(count);
  m.slice_out.resize(count);
  m.d_slice.resize(count);
  for (size_t i = 0; i < count; ++i) {
    const detail::LayerGeometry& g = m.layout.layers[i];
    m.act[i] = backend.alloc(m.options.batch * g.out_shape.elements());
    if (i > 0 || m.options.input_gradient) m.d_act[i] = backend.alloc(m.options.batch * g.out_shape.elements());
    if (g.sliced) {
      m.slice_out[i] = backend.alloc(m.options.batch * g.kernel_out.elements());
      m.d_slice[i] = backend.alloc(m.options.batch * g.kernel_out.elements());
    }
    max_inputs = std::max(max_inputs, m.model.layers[i].inputs.size());
  }
  m.scratch = backend.alloc(static_cast<int64_t>(max_inputs) * m.options.batch * m.max_elements());
}

Network::~Network() = default;

LossStats Network::forward(const float* host_images, const float* host_labels, int64_t n, bool training,
                           const ModelParallelHooks* hooks) {
  Impl& m = *impl_;
  ST_ASSERT(n > 0 && n <= m.options.batch, "forward batch outside (0, network batch]");
  if (training) ++m.steps;
  if (host_images != nullptr) m.backend.upload(m.act[0].data(), host_images, n * m.model.input.elements());
  if (host_labels != nullptr) m.backend.upload(m.labels.data(), host_labels, n);
  auto& kernels = m.kernels_for(n, training);
  for (size_t i = 1; i < m.model.layers.size(); ++i) {
    const LayerArgs args = m.args_for(i);
    kernels[i]->forward(args);
    const detail::LayerGeometry& g = m.layout.layers[i];
    if (!g.sliced) continue;
    if (hooks != nullptr && hooks->gather_output) {
      hooks->gather_output(static_cast<int>(i), args.output, m.act[i].data(), n);
    } else {
      ST_ASSERT(g.kernel_out.c == g.out_shape.c, "model-parallel slice without gather hook");
      m.backend.copy(m.act[i].data(), args.output, n * g.out_shape.c);
    }
  }
  m.last_n = n;
  m.last_training = training;
  return m.loss_stats(host_labels, n);
}

void Network::backward(const GradientReady& on_ready, float loss_scale, const ModelParallelHooks* hooks) {
  Impl& m = *impl_;
  ST_ASSERT(m.last_training && m.last_n > 0, "backward without a training forward");
  const int64_t n = m.last_n;
  auto& kernels = m.kernels_for(n, true);
  m.written.assign(m.model.layers.size(), false);
  if (m.layout.loss_layer < 0) m.written.back() = true;  // the caller seeded the last layer's output gradient
  for (size_t i = m.model.layers.size(); i-- > 1;) {
    const models::Layer& layer = m.model.layers[i];
    const detail::LayerGeometry& g = m.layout.layers[i];
    LayerArgs args = m.args_for(i);
    args.loss_scale = loss_scale > 0 ? loss_scale : 1.0f / static_cast<float>(n);
    if (layer.kind != LayerKind::kSoftmaxCrossEntropy && !m.written[i]) {
      // Not upstream of the loss: its output gradient is zero.
      m.backend.fill(m.d_act[i].data(), 0.0f, n * g.out_shape.elements());
    }
    args.d_output = m.d_act[i].data();
    if (g.sliced) {
      const int64_t width = g.kernel_out.c;
      m.backend.copy_2d(m.d_slice[i].data(), width, m.d_act[i].data() + g.slice.begin, g.out_shape.c, n, width);
      args.d_output = m.d_slice[i].data();
    }
    for (size_t k = 0; k < layer.inputs.size(); ++k)
      args.d_inputs.push_back(m.input_gradient_target(layer.inputs[k], k));
    if (g.param_count > 0) {
      kernels[i]->backward_weight(args);
      if (on_ready) on_ready(*segment_of(static_cast<int>(i)));
    }
    kernels[i]->backward_input(args);
    for (size_t k = 0; k < layer.inputs.size(); ++k) {
      float* target = args.d_inputs[k];
      if (target == nullptr) continue;
      const int producer = layer.inputs[k];
      const int64_t elements = n * m.layout.layers[producer].out_shape.elements();
      if (g.sliced) {
        if (hooks != nullptr && hooks->reduce_input_gradient) {
          hooks->reduce_input_gradient(static_cast<int>(i), target, n);
        } else {
          ST_ASSERT(g.kernel_out.c == g.out_shape.c, "model-parallel slice without reduce hook");
        }
      }
      if (target != m.d_act[producer].data()) m.backend.add(m.d_act[producer].data(), target, elements);
    }
  }
}

float* Network::params() const { return impl_->params.data(); }
float* Network::grads() const { return impl_->grads.data(); }
int64_t Network::param_count() const { return impl_->layout.param_count; }
int64_t Network::replicated_param_count() const { return impl_->layout.replicated_param_count; }
const std::vector<ParamSegment>& Network::segments() const { return impl_->layout.segments; }
const ParamSegment* Network::segment_of(int layer) const {
  for (const ParamSegment& s : impl_->layout.segments)
    if (s.layer == layer) return &s;
  return nullptr;
}
float* Network::state() const { return impl_->state.data(); }
int64_t Network::state_count() const { return impl_->layout.state_count; }
const float* Network::output(int layer) const { return impl_->act.at(layer).data(); }
const float* Network::output_gradient(int layer) const { return impl_->d_act.at(layer).data(); }
float* Network::input_buffer() const { return impl_->act[0].data(); }
float* Network::label_buffer() const { return impl_->labels.data(); }
float* Network::seed_gradient() const {
  ST_ASSERT(impl_->layout.loss_layer < 0, "a model with a loss layer seeds its own gradient");
  return impl_->d_act.back().data();
}
const float* Network::input_gradient() const {
  ST_ASSERT(impl_->options.input_gradient, "input gradient not requested in NetworkOptions");
  return impl_->d_act[0].data();
}

std::vector<float> Network::download_params() const {
  std::vector<float> host(static_cast<size_t>(param_count()));
  impl_->backend.download(host.data(), params(), param_count());
  return host;
}
void Network::upload_params(const std::vector<float>& host) {
  ST_ASSERT(static_cast<int64_t>(host.size()) == param_count(), "parameter vector of the wrong size");
  impl_->backend.upload(params(), host.data(), param_count());
}

const models::Model& Network::model() const { return impl_->model; }
Backend& Network::backend() const { return impl_->backend; }
int64_t Network::max_batch() const { return impl_->options.batch; }
uint64_t Network::steps() const { return impl_->steps; }
void Network::set_steps(uint64_t steps) { impl_->steps = steps; }

}  // namespace scaletwin::exec
