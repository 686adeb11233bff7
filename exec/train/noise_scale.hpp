// The gradient noise scale of a data-parallel run, measured for free from the gradients it already computes
// (McCandlish et al., "An Empirical Model of Large-Batch Training", 2018, appendix A.1).
//
// Each of P workers computes the mean gradient g_b of its b samples; the all-reduce gives the mean gradient g_B
// of the global batch B = P·b. With G the true gradient and Σ the per-sample covariance, E|g_b|² = |G|² + tr(Σ)/b,
// so the two norms give unbiased estimates
//   |G|²  ≈ (B |g_B|² − b |g_b|²) / (B − b),      tr(Σ) ≈ (|g_b|² − |g_B|²) / (1/b − 1/B),
// and the simple noise scale B_simple = tr(Σ) / |G|², the batch beyond which a larger batch stops paying off
// (B_crit ≈ B_simple). Each estimate is noisy: the numerator and the denominator are averaged over many
// iterations separately (the paper's exponential averages, here a plain mean over a window) before dividing.
#pragma once

#include <optional>

namespace scaletwin::exec {

struct NoiseScaleWindow {
  double small_sq = 0.0;   // Σ over (iteration, worker) of |g_b|²
  double big_sq = 0.0;     // Σ over (iteration, worker) of |g_B|² (the same on every worker)
  double samples = 0.0;    // (iteration, worker) pairs added
  void add(const NoiseScaleWindow& o) {
    small_sq += o.small_sq;
    big_sq += o.big_sq;
    samples += o.samples;
  }
};

struct NoiseScale {
  double gradient_sq = 0.0;  // |G|²
  double trace_sigma = 0.0;  // tr(Σ)
  // tr(Σ) / |G|², empty where |G|² came out non-positive (the signal lost in the noise: more iterations needed).
  std::optional<double> b_simple;
};

// The estimate from a window at per-worker batch b and global batch B (B > b > 0); nullopt when the window is empty.
std::optional<NoiseScale> estimate_noise_scale(const NoiseScaleWindow& w, double b, double B);

}  // namespace scaletwin::exec
