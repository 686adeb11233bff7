// Dynamic loss scaling for fp16 mixed precision (Micikevicius et al., "Mixed Precision Training", ICLR 2018; the
// policy of PyTorch's torch.cuda.amp.GradScaler and NVIDIA Apex). fp16 keeps 5 exponent bits: gradients below
// 2^-24 flush to zero and values above 65504 become infinite. The loss is multiplied by scale() before the backward
// pass so that small gradients survive the fp16 casts; after it, a step whose gradients are all finite is applied
// with the gradients divided by scale() and counts towards growth (the scale grows by growth_factor after
// growth_interval such steps in a row); a step with an inf or a NaN anywhere is skipped and the scale shrinks by
// backoff_factor (never below min_scale). bf16 has fp32's exponent range and needs none of this.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace scaletwin::exec {

class LossScaler {
 public:
  struct Options {
    double initial_scale = 65536.0;  // 2^16, GradScaler's default
    double growth_factor = 2.0;
    double backoff_factor = 0.5;
    int64_t growth_interval = 2000;
    double min_scale = 1.0;
  };
  LossScaler();
  explicit LossScaler(const Options& options);

  double scale() const { return scale_; }
  // After a backward pass: `finite` is whether every gradient of the step (on every worker) is finite. Returns
  // whether the step is to be applied; updates the scale.
  bool update(bool finite);
  int64_t skipped_steps() const { return skipped_; }
  int64_t applied_steps() const { return applied_; }

  // Everything update() depends on, as numbers a checkpoint keeps (exact: the scale is a power of two times the
  // initial one, the counts are far below 2^53).
  std::vector<double> state() const;
  void restore(const std::vector<double>& state);  // ST_ASSERT on a state of another size
  static constexpr size_t kStateSize = 4;

 private:
  Options options_;
  double scale_;
  int64_t good_in_a_row_ = 0, skipped_ = 0, applied_ = 0;
};

}  // namespace scaletwin::exec
