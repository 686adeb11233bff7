// SGD with momentum and weight decay over the flat parameter and gradient buffers of a Network, and the learning
// rate schedule for large global batches (Goyal et al. 2017, "Accurate, Large Minibatch SGD"):
//   linear scaling:    lr = base_lr · global_batch / reference_batch
//   gradual warm-up:   over the first warmup_steps, lr rises linearly from base_lr to the scaled rate
//                      (only when the scaled rate is above base_lr; otherwise there is nothing to warm up)
//   step decay:        lr is multiplied by decay_factor at each step listed in decay_steps
// The update itself (Backend::sgd_update, PyTorch's formulation):
//   g' = g + weight_decay · w;   m = momentum · m + g';   w = w − lr · m
// Weight decay applies to every parameter (biases and batch-norm gamma and beta included), as in Goyal et al.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "exec/backend.hpp"

namespace scaletwin::exec {

struct LrSchedule {
  double base_lr = 0.01;  // for reference_batch
  int64_t reference_batch = 256;
  int64_t global_batch = 256;
  std::string scaling = "linear";  // linear | sqrt | none (plan::Training::lr_scaling)
  int64_t warmup_steps = 0;
  std::vector<int64_t> decay_steps;
  double decay_factor = 0.1;

  double scaled_lr() const;
  double lr(int64_t step) const;  // step counts from 0
};

// Warm-up length in steps for `epochs` epochs of `samples_per_epoch` samples at this global batch.
int64_t warmup_steps_for(double epochs, int64_t samples_per_epoch, int64_t global_batch);

class Sgd {
 public:
  // count: floats in the parameter buffer (the momentum buffer is allocated on the backend, zeroed).
  Sgd(Backend& backend, int64_t count, float momentum, float weight_decay);

  // Updates params[offset, offset + length) from grads at the same offsets (length < 0: to the end).
  void step(float* params, const float* grads, float learning_rate, int64_t offset = 0, int64_t length = -1);

  float* momentum_buffer() const { return momentum_.data(); }
  int64_t count() const { return count_; }

 private:
  Backend& backend_;
  int64_t count_;
  float momentum_coefficient_, weight_decay_;
  Buffer momentum_;
};

}  // namespace scaletwin::exec
