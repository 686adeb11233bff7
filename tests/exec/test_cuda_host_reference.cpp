// The naive reference backend of the CUDA tests equals the CPU (oneDNN) backend on every layer case, forward and
// backward, and on the element-wise helpers: so the GPU tests, which compare the CUDA backend with the reference
// where oneDNN is absent, compare it with the CPU backend's semantics.
#include <catch2/catch.hpp>

#include <random>

#include "exec/cpu/cpu_backend.hpp"
#include "test_cuda_support.hpp"

using namespace scaletwin::exec;
using namespace scaletwin::exec::cuda_testing;

TEST_CASE("reference backend equals the CPU backend on every layer case, forward and backward") {
  CpuBackend cpu(1);
  auto reference = make_reference_backend();
  for (const LayerCase& c : layer_cases()) {
    INFO(c.title);
    const LayerResult want = run_layer(cpu, c, 11);
    const LayerResult got = run_layer(*reference, c, 11);
    REQUIRE(max_relative_error(got, want) < 1e-5);
    double norm = 0.0;
    for (float v : want.output) norm += std::abs(v);
    REQUIRE(norm > 0.0);  // the comparison is not between zeros
  }
}

TEST_CASE("reference backend's element-wise helpers and SGD equal the CPU backend's exactly") {
  CpuBackend cpu(1);
  auto reference = make_reference_backend();
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> w(300), g(300), m(300);
  for (auto* v : {&w, &g, &m})
    for (float& e : *v) e = u(rng);
  std::vector<float> w2 = w, m2 = m;
  const SgdStep step{0.1f, 0.9f, 1e-4f};
  cpu.sgd_update(w.data(), g.data(), m.data(), 300, step);
  reference->sgd_update(w2.data(), g.data(), m2.data(), 300, step);
  REQUIRE(w == w2);
  REQUIRE(m == m2);
  std::vector<float> a = g, b = g;
  cpu.add(a.data(), w.data(), 300);
  reference->add(b.data(), w.data(), 300);
  cpu.scale(a.data(), 0.3f, 300);
  reference->scale(b.data(), 0.3f, 300);
  cpu.copy_2d(a.data(), 30, w.data(), 20, 5, 7);
  reference->copy_2d(b.data(), 30, w.data(), 20, 5, 7);
  REQUIRE(a == b);
}
