// On a GPU: every layer of the CUDA backend, forward and backward, against the CPU (oneDNN) backend when the build
// has it and the naive reference otherwise, within fp32 tolerance (TF32 off); the element-wise helpers and the SGD
// kernel bit for bit; a ResNet-18 (CIFAR) training step through Network on both. Without a GPU each test prints
// "SKIPPED: no CUDA device" and exits 77 (CTest: skipped).
#include <catch2/catch.hpp>

#include <random>

#include "exec/cuda_backend.hpp"
#include "exec/network.hpp"
#include "models/zoo.hpp"
#include "test_cuda_support.hpp"
#ifdef SCALETWIN_TEST_CPU_BACKEND
#include "exec/cpu/cpu_backend.hpp"
#endif

using namespace scaletwin;
using namespace scaletwin::exec;
using namespace scaletwin::exec::cuda_testing;

namespace {

std::unique_ptr<Backend> make_cpu_side() {
#ifdef SCALETWIN_TEST_CPU_BACKEND
  return std::make_unique<CpuBackend>(0);
#else
  return make_reference_backend();
#endif
}

std::unique_ptr<Backend> make_gpu_side() {
  CudaOptions options;
  options.allow_tf32 = false;  // fp32 arithmetic, comparable with the CPU at fp32 tolerance
  return make_cuda_backend(0, options);
}

std::vector<float> download(Backend& b, const float* p, int64_t n) {
  std::vector<float> host(static_cast<size_t>(n));
  b.download(host.data(), p, n);
  return host;
}

}  // namespace

TEST_CASE("GPU: every layer's forward and backward match the CPU backend") {
  skip_without_gpu();
  auto gpu = make_gpu_side();
  auto cpu = make_cpu_side();
  INFO(gpu->name() << " against " << cpu->name());
  for (const LayerCase& c : layer_cases()) {
    INFO(c.title);
    const double error = max_relative_error(run_layer(*gpu, c, 21), run_layer(*cpu, c, 21));
    CHECK(error < 1e-4);
  }
}

TEST_CASE("GPU: fill, add, scale, copy_2d and the SGD kernel equal the CPU backend bit for bit") {
  skip_without_gpu();
  auto gpu = make_gpu_side();
  auto cpu = make_cpu_side();
  const int64_t n = 100003;  // not a multiple of the block size
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<std::vector<float>> host(3, std::vector<float>(static_cast<size_t>(n)));
  for (auto& v : host)
    for (float& e : v) e = u(rng);
  std::vector<Buffer> d;
  for (auto& v : host) {
    d.push_back(gpu->alloc(n));
    gpu->upload(d.back().data(), v.data(), n);
  }
  const SgdStep step{0.05f, 0.9f, 5e-4f};
  for (int iteration = 0; iteration < 3; ++iteration) {
    gpu->sgd_update(d[0].data(), d[1].data(), d[2].data(), n, step);
    cpu->sgd_update(host[0].data(), host[1].data(), host[2].data(), n, step);
  }
  REQUIRE(download(*gpu, d[0].data(), n) == host[0]);
  REQUIRE(download(*gpu, d[2].data(), n) == host[2]);
  gpu->add(d[1].data(), d[0].data(), n);
  cpu->add(host[1].data(), host[0].data(), n);
  gpu->scale(d[1].data(), 0.37f, n);
  cpu->scale(host[1].data(), 0.37f, n);
  gpu->copy_2d(d[1].data() + 5, 300, d[0].data(), 200, 100, 150);
  cpu->copy_2d(host[1].data() + 5, 300, host[0].data(), 200, 100, 150);
  REQUIRE(download(*gpu, d[1].data(), n) == host[1]);
  gpu->fill(d[1].data(), 2.5f, n);
  gpu->copy(d[0].data(), d[1].data(), n);
  REQUIRE(download(*gpu, d[0].data(), n) == std::vector<float>(static_cast<size_t>(n), 2.5f));
}

TEST_CASE("GPU: a training step of ResNet-18 (CIFAR) through Network matches the CPU backend") {
  skip_without_gpu();
  auto gpu = make_gpu_side();
  auto cpu = make_cpu_side();
  const models::Model m = models::make_builtin_model("resnet18_cifar");
  const int64_t batch = 4;
  Network on_gpu(*gpu, m, {batch, 3, 5, {}});
  Network on_cpu(*cpu, m, {batch, 3, 5, {}});
  std::mt19937_64 rng(2);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> images(static_cast<size_t>(batch * m.input.elements())), labels{1, 7, 3, 0};
  for (float& x : images) x = u(rng);
  const LossStats lg = on_gpu.forward(images.data(), labels.data(), batch, true);
  const LossStats lc = on_cpu.forward(images.data(), labels.data(), batch, true);
  REQUIRE(lg.loss_sum == Approx(lc.loss_sum).epsilon(1e-4));
  on_gpu.backward();
  on_cpu.backward();
  const std::vector<float> gg = download(*gpu, on_gpu.grads(), on_gpu.param_count());
  const std::vector<float> gc = download(*cpu, on_cpu.grads(), on_cpu.param_count());
  REQUIRE(relative_error(gg, gc) < 1e-3);
}
