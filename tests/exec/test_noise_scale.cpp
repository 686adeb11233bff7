// The gradient noise scale estimators (exec/train/noise_scale.hpp) on gradients drawn from a known distribution:
// per-sample gradients G + e with e ~ N(0, s² I) in d dimensions, so |G|² and tr(Σ) = d s² are known.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "exec/train/noise_scale.hpp"

namespace scaletwin::exec {

namespace {

double sum_sq(const std::vector<double>& v) {
  double s = 0.0;
  for (double x : v) s += x * x;
  return s;
}

// A window of `iterations` data-parallel steps of P workers with b samples each, as the trainer fills it.
NoiseScaleWindow simulate(const std::vector<double>& G, double sigma, int P, int b, int iterations, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0.0, sigma);
  const size_t d = G.size();
  NoiseScaleWindow w;
  for (int it = 0; it < iterations; ++it) {
    std::vector<double> global(d, 0.0);
    std::vector<double> small_sq(static_cast<size_t>(P));
    for (int p = 0; p < P; ++p) {
      std::vector<double> mean(d, 0.0);
      for (int s = 0; s < b; ++s)
        for (size_t k = 0; k < d; ++k) mean[k] += (G[k] + noise(rng)) / b;
      small_sq[static_cast<size_t>(p)] = sum_sq(mean);
      for (size_t k = 0; k < d; ++k) global[k] += mean[k] / P;
    }
    const double big = sum_sq(global);
    for (int p = 0; p < P; ++p) w.add({small_sq[static_cast<size_t>(p)], big, 1.0});
  }
  return w;
}

}  // namespace

TEST_CASE("noise scale: the estimates recover |G|², tr(Σ) and B_simple of a known distribution") {
  const size_t d = 200;
  std::vector<double> G(d);
  for (size_t k = 0; k < d; ++k) G[k] = 0.05 * std::sin(0.37 * static_cast<double>(k) + 1.0);
  const double sigma = 0.4;
  const double true_g2 = sum_sq(G), true_trace = static_cast<double>(d) * sigma * sigma;
  for (auto [P, b] : {std::pair{2, 16}, std::pair{4, 8}, std::pair{2, 64}}) {
    const NoiseScaleWindow w = simulate(G, sigma, P, b, 400, 11u + static_cast<uint64_t>(P * b));
    const auto est = estimate_noise_scale(w, b, static_cast<double>(P * b));
    REQUIRE(est);
    INFO("P " << P << ", b " << b << ": |G|² " << est->gradient_sq << " (true " << true_g2 << "), tr " << est->trace_sigma
              << " (true " << true_trace << ")");
    CHECK(est->trace_sigma == Approx(true_trace).epsilon(0.05));
    CHECK(est->gradient_sq == Approx(true_g2).epsilon(0.25));
    REQUIRE(est->b_simple);
    CHECK(*est->b_simple == Approx(true_trace / true_g2).epsilon(0.3));
  }
}

TEST_CASE("noise scale: an empty window has no estimate, and a gradient lost in the noise no B_simple") {
  CHECK_FALSE(estimate_noise_scale({}, 8, 16));
  // |g_B|² below what the noise alone would give: the |G|² estimate is negative, B_simple undefined.
  const auto est = estimate_noise_scale({10.0, 4.0, 1.0}, 8, 16);
  REQUIRE(est);
  CHECK(est->gradient_sq < 0.0);
  CHECK_FALSE(est->b_simple);
}

}  // namespace scaletwin::exec
