// A trainable network on a Backend, built from a models::Model: parameters, activations, forward and backward.
//
// Parameters live in ONE flat buffer and their gradients in ONE flat buffer with the same layout, laid out in the
// order gradients become ready during backward (the last layer with weights first), so that a bucket of the
// data-parallel all-reduce is a contiguous slice that is complete as soon as its last layer's weight gradient is.
// Model-parallel fc slices (below) are placed after every replicated layer: [0, replicated_param_count()) is what
// data parallelism reduces. segments() gives each layer's (offset, length) in both buffers.
//
// Initialisation is deterministic from NetworkOptions::seed (std::mt19937_64 per layer, seeded with
// splitmix64(seed ^ fnv1a64(layer name)), and a Box–Muller normal), so every rank builds identical replicas and
// the parts of a split_model draw what the whole model would:
//   conv:      W ~ N(0, 2 / fan_in), fan_in = in_channels / groups · kernel_h · kernel_w  (He et al. 2015)
//   fc:        W ~ U(−1/√fan_in, 1/√fan_in), fan_in = input features                       (PyTorch's default)
//   biases 0; batchnorm gamma 1, beta 0, running mean 0, running variance 1.
// A model-parallel slice holds exactly rows [begin, end) of what the full layer would hold.
//
// Model-parallel mode (the hybrid scheme, Krizhevsky 2014): an fc layer listed in NetworkOptions::fc_slices
// computes only output neurons [begin, end) from the full input. Around it the caller moves data through
// ModelParallelHooks: after the slice's forward, gather_output fills the full N × out activation from every
// rank's slice (local slice given as N × (end − begin)); in backward the network takes the slice's columns of
// the full output gradient itself, and after the slice's input gradient (a partial sum over this rank's neurons)
// reduce_input_gradient must sum it over the group in place. Without hooks a slice must be the whole layer.
// The hybrid scheme as plan::lower schedules it (model-parallel classifier on the global batch): split_model the
// model before its first model-parallel fc; run the backbone Network on the local batch n, all-gather its output
// into the head Network's input_buffer() (P·n rows) and the labels into label_buffer() or a host array, run the
// head (NetworkOptions::input_gradient = true) with the hooks above on P·n samples, then reduce-scatter its
// input_gradient() rows (the hook for the first fc may do exactly that), copy this rank's n rows into the
// backbone's seed_gradient() and run the backbone's backward. tests/exec/test_network.cpp does this on 2 ranks.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "exec/backend.hpp"
#include "models/model.hpp"

namespace scaletwin::exec {

struct ParamSegment {
  int layer = -1;               // index in Model::layers
  int64_t offset = 0;           // in floats, into params() and grads()
  int64_t length = 0;           // floats
  bool model_parallel = false;  // a model-parallel fc slice: this rank's own, never reduced across replicas
};

struct FcSlice {
  int64_t begin = 0, end = 0;  // output neurons [begin, end)
};

struct NetworkOptions {
  int64_t batch = 32;                // the largest batch forward() accepts
  uint64_t seed = 1;                 // parameter initialisation: same seed, same replica
  uint64_t dropout_seed = 1;         // dropout masks (vary it per rank); combined with the step and the layer
  std::map<int, FcSlice> fc_slices;  // layer index → this rank's slice of a model-parallel fc layer
  bool input_gradient = false;       // also compute the gradient of the network input (input_gradient())
};

struct ModelParallelHooks {
  std::function<void(int layer, const float* slice_output, float* full_output, int64_t batch)> gather_output;
  std::function<void(int layer, float* input_gradient, int64_t batch)> reduce_input_gradient;
};

// Loss and accuracy of one forward pass (softmax cross-entropy layer; zero samples when the model has none).
struct LossStats {
  double loss_sum = 0.0;  // sum over samples of −log softmax(x)[label]
  int64_t correct = 0;    // samples whose arg-max class is the label
  int64_t samples = 0;
  double mean_loss() const { return samples ? loss_sum / static_cast<double>(samples) : 0.0; }
  double accuracy() const { return samples ? static_cast<double>(correct) / static_cast<double>(samples) : 0.0; }
};

using GradientReady = std::function<void(const ParamSegment& segment)>;

// Splits a model before layer `first` (its classifier, say) into a backbone, layers [0, first) without a loss,
// whose last layer is first − 1, and a head whose input is layer first − 1's output and whose layers are
// [first, end) (the layers of the head may only read layer first − 1 or later). For the hybrid scheme of the plan
// (plan/lower_program.cpp): the backbone runs data-parallel on the local batch, the head model-parallel on the
// global batch (fc_slices indexed in the head's numbering: head layer k is model layer first − 1 + k).
struct SplitModel {
  models::Model backbone, head;
};
SplitModel split_model(const models::Model& model, int first);

class Network {
 public:
  // The model must have shapes inferred (Layer::out) and layers in topological order with layers[0] the input.
  Network(Backend& backend, const models::Model& model, NetworkOptions options);
  ~Network();
  Network(const Network&) = delete;
  Network& operator=(const Network&) = delete;

  // Runs the forward pass on n <= options.batch samples: host images (n × input elements, NCHW) and host labels
  // (n class indices as floats). training: batch statistics, dropout. Null images: the input is already in
  // input_buffer(); null labels: they are in label_buffer() (device data, e.g. gathered from other ranks).
  LossStats forward(const float* host_images, const float* host_labels, int64_t n, bool training,
                    const ModelParallelHooks* hooks = nullptr);
  // After a training forward: fills grads() with the gradient of loss_scale · (sum of per-sample losses);
  // loss_scale <= 0 means 1/n (the mean loss). A model without a loss layer (a backbone, see split_model)
  // back-propagates the gradient the caller wrote into seed_gradient() instead. on_ready(segment) runs as soon as a
  // layer's weight gradient is complete, in flat-buffer order for the replicated layers.
  void backward(const GradientReady& on_ready = {}, float loss_scale = 0.0f, const ModelParallelHooks* hooks = nullptr);

  // Flat buffers (device memory of the backend).
  float* params() const;
  float* grads() const;
  int64_t param_count() const;
  int64_t replicated_param_count() const;  // [0, this) is reduced by data parallelism
  const std::vector<ParamSegment>& segments() const;
  const ParamSegment* segment_of(int layer) const;  // null for layers without weights
  // Batch-norm running statistics (non-trainable), contiguous, per layer mean then variance.
  float* state() const;
  int64_t state_count() const;

  // Activations and their gradients of the last pass (full outputs, n × out elements). On a backend with an
  // activation_block() (the CPU), layers inside a run of convolution, batch norm, activations, add, mul, drop_path and average pooling
  // keep them in that blocked layout (detail::activation_blocks); the input, the last layer and every output read
  // by another kind of layer (fc, flatten, loss, ...) are plain NCHW.
  const float* output(int layer) const;
  const float* output_gradient(int layer) const;
  float* input_buffer() const;          // options.batch × input elements
  float* label_buffer() const;          // options.batch labels
  float* seed_gradient() const;         // models without a loss layer: n × last layer's output elements
  const float* input_gradient() const;  // with options.input_gradient: n × input elements

  std::vector<float> download_params() const;
  void upload_params(const std::vector<float>& host);

  const models::Model& model() const;
  Backend& backend() const;
  int64_t max_batch() const;
  uint64_t steps() const;  // training forwards so far
  void set_steps(uint64_t steps);  // resuming from a checkpoint: the dropout masks continue where they were

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace scaletwin::exec
