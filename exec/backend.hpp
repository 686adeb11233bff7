// The backend interface: the seam between the executor core (Network, optimizer, schedule interpreter) and a
// compute device. The CPU backend (exec/cpu/, oneDNN) implements it now; the CUDA backend (exec/cuda/, cuDNN and
// cuBLAS) implements the same interface.
//
// Conventions every backend follows:
//   - Memory is fp32 "device" memory (host memory on the CPU). A Buffer owns an allocation; kernels receive raw
//     device pointers, so slices of a buffer (one layer's gradient inside the flat gradient buffer) need no views.
//   - Activations are NCHW, contiguous, batch first. A fully connected layer reads its input as N × (C·H·W).
//   - Labels are stored as floats holding class indices 0..classes-1 (exact in fp32), so one buffer type serves all.
//   - Parameters of a layer are contiguous, weights first then bias:
//       conv:       W[out_channels][in_channels / groups][kernel_h][kernel_w], then bias[out_channels] if any
//       batchnorm:  gamma[C], then beta[C];   its non-trainable state: running_mean[C], then running_var[C]
//       fc:         W[out][in] (row = output neuron), then bias[out] if any
//   - Every call is ordered on one stream per backend; synchronize() waits for all of them (a no-op on the CPU).
//
// Per-layer kernels are created once per (layer, batch size, training/eval) and reused across iterations: the CPU
// backend builds its oneDNN primitives in make_layer. For a training step the caller runs forward on every layer,
// then for each layer in reverse order backward_weight and then backward_input, with the same LayerArgs and no
// other kernel's op between the two (the output gradient stays as it is: the CUDA kernels cast it once for both).
// A layer's weights must not change between its forward and its backward (a kernel may keep the forward's
// reordered copy of them), and its inputs and output stay in place until its backward has run.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "models/model.hpp"

namespace scaletwin::exec {

// An owning device allocation of `size` floats, zero-initialised by Backend::alloc. Move-only.
class Buffer {
 public:
  Buffer() = default;
  Buffer(float* data, int64_t size, std::function<void(float*)> release)
      : data_(data), size_(size), release_(std::move(release)) {}
  Buffer(Buffer&& other) noexcept { swap(other); }
  Buffer& operator=(Buffer&& other) noexcept {
    Buffer tmp(std::move(other));
    swap(tmp);
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() {
    if (data_ && release_) release_(data_);
  }

  float* data() const { return data_; }
  int64_t size() const { return size_; }

 private:
  void swap(Buffer& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(release_, o.release_);
  }
  float* data_ = nullptr;
  int64_t size_ = 0;
  std::function<void(float*)> release_;
};

// What a kernel is built for. The layer's kind and parameters come from `layer`; shapes are per sample.
struct LayerDesc {
  const models::Layer* layer = nullptr;
  std::vector<models::Shape> in_shapes;  // one per input
  models::Shape out_shape;               // for a model-parallel fc slice: out_shape.c = end - begin
  int64_t batch = 0;
  bool training = true;  // batchnorm: batch statistics (true) or running statistics (false);
                         // dropout: active (true) or identity (false)
  // Activation layouts, for a backend whose activation_block() is b > 0: 0 is plain NCHW, b is channels in blocks
  // of b ([n][c / b][h][w][c % b], oneDNN's nChw<b>c, channels a multiple of b). One per input (empty: all plain)
  // and one for the output; the output's gradient has the output's layout, an input's gradient the input's.
  std::vector<int> in_blocks = {};
  int out_block = 0;
};

// Device pointers for one call. Pointers a call does not need may be null; a null d_inputs[i] means "input i
// needs no gradient" (the network input) and the kernel skips it. Kernels overwrite their outputs (output,
// d_inputs, d_weights); accumulation across consumers is the caller's job.
struct LayerArgs {
  std::vector<const float*> inputs;
  float* output = nullptr;
  const float* weights = nullptr;  // this layer's parameters (layout above)
  float* state = nullptr;          // batchnorm running statistics, updated by a training forward
  const float* d_output = nullptr;
  std::vector<float*> d_inputs;
  float* d_weights = nullptr;     // same layout as weights
  const float* labels = nullptr;  // softmax cross-entropy: batch class indices as floats
  float loss_scale = 1.0f;        // softmax cross-entropy: d_logits = (softmax - onehot) * loss_scale
  uint64_t seed = 0;              // dropout: the mask is a function of (seed, element index) only
};

// A layer's kernels. Semantics per kind (forward / backward):
//   conv, fc:       y = W * x + b;       d_x and (d_W, d_b)
//   batchnorm:      y = gamma * (x - mean) / sqrt(var + eps) + beta with batch statistics when training (and
//                   running = (1 - momentum) * running + momentum * batch, unbiased variance, as PyTorch), else
//                   with the running statistics; backward (training only) gives d_x and (d_gamma, d_beta)
//   relu, max/avg pool, global avg pool, flatten: as usual (avg pool honours count_include_pad)
//   add:            y = sum of inputs;   concat: along channels, in input order
//   dropout:        y = x * mask / (1 - rate), mask[i] = dropout_keep(seed, i, rate)
//   sigmoid, silu, hardswish: element-wise (exec/cpu/activation_kernels.cpp has the formulas)
//   mul:            y = x * s, s of x's shape or C×1×1 (one scale per channel); d_x and d_s (summed over positions)
//   drop_path:      y = x * mask[n] / (1 - rate) per sample n, mask[n] = dropout_keep(seed, n, rate); identity in eval
//   softmax_cross_entropy: y = softmax(x) (probabilities, N × classes); backward_input writes
//                   d_x = (y - onehot(labels)) * loss_scale and ignores d_output. Loss and accuracy are computed by
//                   the caller from y (see exec/network.hpp).
class LayerKernel {
 public:
  virtual ~LayerKernel() = default;
  virtual void forward(const LayerArgs& args) = 0;
  // Gradient with respect to the weights; a no-op for layers without weights. Called before backward_input.
  virtual void backward_weight(const LayerArgs& args) = 0;
  virtual void backward_input(const LayerArgs& args) = 0;
};

// One step of SGD with momentum and weight decay (PyTorch's formulation):
//   g' = g + weight_decay * w;   m = momentum * m + g';   w = w - learning_rate * m
struct SgdStep {
  float learning_rate = 0.01f;
  float momentum = 0.9f;
  float weight_decay = 0.0f;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;  // "cpu (oneDNN 2.6.3, 2 threads)"

  virtual Buffer alloc(int64_t floats) = 0;  // zero-initialised
  virtual void upload(float* device_dst, const float* host_src, int64_t n) = 0;
  virtual void download(float* host_dst, const float* device_src, int64_t n) = 0;
  virtual void synchronize() = 0;

  virtual std::unique_ptr<LayerKernel> make_layer(const LayerDesc& desc) = 0;
  // The channel block b of the blocked activation layout this backend's kernels prefer, 0 for none (plain NCHW
  // only). Network keeps the activations between convolution, batch norm, the activations (ReLU, sigmoid, SiLU, hard
  // swish), add, mul, drop_path and average pooling in it
  // (see network.hpp) and tells the kernels through LayerDesc::in_blocks and out_block.
  virtual int activation_block() const { return 0; }

  // Element-wise helpers on device memory.
  virtual void copy(float* dst, const float* src, int64_t n) = 0;
  virtual void fill(float* dst, float value, int64_t n) = 0;
  virtual void add(float* dst, const float* src, int64_t n) = 0;  // dst += src (reducing received buffers)
  virtual void scale(float* dst, float factor, int64_t n) = 0;    // dst *= factor
  // Copies a rows × cols block between row-major matrices with leading dimensions (in floats) dst_ld and src_ld:
  // used to place a model-parallel fc slice's output into the full activation and to take its gradient back.
  virtual void copy_2d(float* dst, int64_t dst_ld, const float* src, int64_t src_ld, int64_t rows, int64_t cols) = 0;
  virtual void sgd_update(float* weights, const float* grads, float* momentum, int64_t n, const SgdStep& step) = 0;
  // Timing marks (run --trace): mark() is a point in this backend's stream of work, mark_time_s(m) the time, on
  // the host's steady clock (seconds, as exec::detail::now_s), at which the work reached it. A synchronous backend
  // (the CPU's) reaches a mark when it is taken: these defaults read the clock. A GPU backend records an event on
  // its stream and times it once it has completed (mark_time_s then waits for it), so a span between two marks is
  // the device's time, not the host's time to enqueue. Marks stay valid for the backend's lifetime.
  virtual int64_t mark() { return std::chrono::steady_clock::now().time_since_epoch().count(); }
  virtual double mark_time_s(int64_t mark) {
    return std::chrono::duration<double>(std::chrono::steady_clock::duration(mark)).count();
  }
  // The sum of squares of x[0, n) in double (the gradient noise scale's norms, exec/train/noise_scale.hpp). This
  // default downloads x to the host; a backend whose memory the host reads directly overrides it.
  virtual double sum_squares(const float* x, int64_t n) {
    std::vector<float> host(static_cast<size_t>(n));
    download(host.data(), x, n);
    double sum = 0.0;
    for (float v : host) sum += static_cast<double>(v) * static_cast<double>(v);
    return sum;
  }
};

// The dropout mask, shared by every backend so that they agree bit for bit: element i is kept when a
// splitmix64 hash of (seed, i), taken as a uniform number in [0, 1), is at least `rate`.
inline uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
inline bool dropout_keep(uint64_t seed, uint64_t index, double rate) {
  const double u = static_cast<double>(splitmix64(seed * 0x100000001B3ull + index) >> 11) * 0x1.0p-53;
  return u >= rate;
}

}  // namespace scaletwin::exec
