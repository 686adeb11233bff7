// SGD with momentum and weight decay, and the linear-scaling warm-up schedule (see optimizer.hpp).
#include "exec/optimizer.hpp"

#include <cmath>

#include "core/error.hpp"

namespace scaletwin::exec {

double LrSchedule::scaled_lr() const {
  ST_ASSERT(reference_batch > 0 && global_batch > 0, "batch sizes must be positive");
  const double ratio = static_cast<double>(global_batch) / static_cast<double>(reference_batch);
  if (scaling == "none") return base_lr;
  if (scaling == "sqrt") return base_lr * std::sqrt(ratio);
  ST_ASSERT(scaling == "linear", "unknown learning-rate scaling " + scaling);
  return base_lr * ratio;
}

double LrSchedule::lr(int64_t step) const {
  const double target = scaled_lr();
  double rate = target;
  if (step < warmup_steps && target > base_lr) {
    rate = base_lr + (target - base_lr) * static_cast<double>(step) / static_cast<double>(warmup_steps);
  }
  for (int64_t at : decay_steps)
    if (step >= at) rate *= decay_factor;
  return rate;
}

int64_t warmup_steps_for(double epochs, int64_t samples_per_epoch, int64_t global_batch) {
  ST_ASSERT(global_batch > 0 && samples_per_epoch >= 0 && epochs >= 0, "bad warm-up arguments");
  return static_cast<int64_t>(std::llround(epochs * static_cast<double>(samples_per_epoch / global_batch)));
}

Sgd::Sgd(Backend& backend, int64_t count, float momentum, float weight_decay)
    : backend_(backend),
      count_(count),
      momentum_coefficient_(momentum),
      weight_decay_(weight_decay),
      momentum_(backend.alloc(count)) {}

void Sgd::step(float* params, const float* grads, float learning_rate, int64_t offset, int64_t length) {
  if (length < 0) length = count_ - offset;
  ST_ASSERT(offset >= 0 && offset + length <= count_, "SGD step outside the parameter buffer");
  backend_.sgd_update(params + offset, grads + offset, momentum_.data() + offset, length,
                      {learning_rate, momentum_coefficient_, weight_decay_});
}

}  // namespace scaletwin::exec
