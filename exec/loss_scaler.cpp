// Dynamic loss scaling (see loss_scaler.hpp).
#include "exec/loss_scaler.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace scaletwin::exec {

LossScaler::LossScaler() : LossScaler(Options{}) {}

LossScaler::LossScaler(const Options& options) : options_(options), scale_(options.initial_scale) {
  ST_ASSERT(options.initial_scale >= options.min_scale && options.min_scale > 0.0 && options.growth_factor > 1.0 &&
                options.backoff_factor > 0.0 && options.backoff_factor < 1.0 && options.growth_interval > 0,
            "loss scaler options out of range");
}

bool LossScaler::update(bool finite) {
  if (!finite) {
    scale_ = std::max(options_.min_scale, scale_ * options_.backoff_factor);
    good_in_a_row_ = 0;
    ++skipped_;
    return false;
  }
  ++applied_;
  if (++good_in_a_row_ >= options_.growth_interval) {
    scale_ *= options_.growth_factor;
    good_in_a_row_ = 0;
  }
  return true;
}

}  // namespace scaletwin::exec
