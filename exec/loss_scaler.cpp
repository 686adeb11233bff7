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

std::vector<double> LossScaler::state() const {
  return {scale_, static_cast<double>(good_in_a_row_), static_cast<double>(skipped_), static_cast<double>(applied_)};
}

void LossScaler::restore(const std::vector<double>& state) {
  ST_ASSERT(state.size() == kStateSize, "loss scaler state of another size");
  scale_ = state[0];
  good_in_a_row_ = static_cast<int64_t>(state[1]);
  skipped_ = static_cast<int64_t>(state[2]);
  applied_ = static_cast<int64_t>(state[3]);
}

}  // namespace scaletwin::exec
