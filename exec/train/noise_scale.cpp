// The gradient noise scale estimators of McCandlish et al. 2018, appendix A.1 (see noise_scale.hpp).
#include "exec/train/noise_scale.hpp"

#include "core/error.hpp"

namespace scaletwin::exec {

std::optional<NoiseScale> estimate_noise_scale(const NoiseScaleWindow& w, double b, double B) {
  ST_ASSERT(b > 0 && B > b, "the noise scale needs a global batch larger than the per-worker batch");
  if (w.samples <= 0) return std::nullopt;
  const double small = w.small_sq / w.samples, big = w.big_sq / w.samples;
  NoiseScale out;
  out.gradient_sq = (B * big - b * small) / (B - b);
  out.trace_sigma = (small - big) / (1.0 / b - 1.0 / B);
  if (out.gradient_sq > 0.0) out.b_simple = out.trace_sigma / out.gradient_sq;
  return out;
}

}  // namespace scaletwin::exec
