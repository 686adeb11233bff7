// scaletwin_cuda_train: trains a built-in model on synthetic data with the CUDA backend and prints images/s, the
// GPU half of the throughput comparison of scripts/gpu-check (the other half is PyTorch on the same GPU, batch and
// precision). One process, one GPU, no MPI. Each step is what the executor does: upload the host batch, forward
// with the loss read back, backward, SGD with momentum.
//
//   scaletwin_cuda_train [--model resnet50] [--batch 64] [--iterations 50] [--warmup 5] [--device 0] [--no-tf32]
//                        [--benchmark-algorithms] [--precision fp32|bf16|fp16] [--peak-tflops P]
// bf16 and fp16 are the backend's mixed precision (exec/cuda_backend.hpp); fp16 scales the loss as the trainer
// does (exec/loss_scaler.hpp: a step with overflowing gradients is skipped and counted).
// Prints "MODEL: X images/s (batch B, PRECISION, N iterations, DEVICE)", the model FLOP rate (the model's
// forward + backward FLOPs per sample, models/model.hpp, a multiply-add counting 2, times images/s) and, with
// --peak-tflops, its share of that peak (model FLOP utilisation); "images_per_sec=X" and "model_tflops=F" last.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>

#include "core/error.hpp"
#include "exec/cuda_backend.hpp"
#include "exec/loss_scaler.hpp"
#include "exec/network.hpp"
#include "exec/optimizer.hpp"
#include "models/zoo.hpp"

namespace {

using namespace scaletwin;

struct Options {
  std::string model = "resnet50";
  int64_t batch = 64, iterations = 50, warmup = 5;
  int device = 0;
  double peak_tflops = 0.0;
  exec::CudaOptions cuda;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw InputError("option " + a + " needs a value");
      return argv[++i];
    };
    if (a == "--model") o.model = value();
    else if (a == "--batch") o.batch = std::stoll(value());
    else if (a == "--iterations") o.iterations = std::stoll(value());
    else if (a == "--warmup") o.warmup = std::stoll(value());
    else if (a == "--device") o.device = std::stoi(value());
    else if (a == "--no-tf32") o.cuda.allow_tf32 = false;
    else if (a == "--peak-tflops") o.peak_tflops = std::stod(value());
    else if (a == "--benchmark-algorithms") o.cuda.benchmark_algorithms = true;
    else if (a == "--precision") {
      const std::string p = value();
      if (p == "fp32") o.cuda.precision = exec::CudaPrecision::kFp32;
      else if (p == "bf16") o.cuda.precision = exec::CudaPrecision::kBf16;
      else if (p == "fp16") o.cuda.precision = exec::CudaPrecision::kFp16;
      else throw InputError("--precision: fp32, bf16 or fp16 (got \"" + p + "\")");
    }
    else throw InputError("unknown option " + a + " (see the comment at the top of exec/cuda/train_bench.cpp)");
  }
  if (o.batch < 1 || o.iterations < 1 || o.warmup < 0) throw InputError("batch and iterations must be positive");
  return o;
}

int run(const Options& o) {
  const models::Model model = models::make_builtin_model(o.model);
  exec::check_cuda_memory(model, o.batch, o.device, o.cuda);  // refuses before allocating
  auto backend = exec::make_cuda_backend(o.device, o.cuda);
  exec::Network net(*backend, model, {o.batch, 1, 1, {}});
  exec::Sgd sgd(*backend, net.param_count(), 0.9f, 1e-4f);
  std::mt19937_64 rng(7);
  std::normal_distribution<float> pixel(0.0f, 1.0f);
  std::vector<float> images(static_cast<size_t>(o.batch * model.input.elements())), labels(static_cast<size_t>(o.batch));
  for (float& x : images) x = pixel(rng);
  for (float& l : labels) l = static_cast<float>(rng() % static_cast<uint64_t>(model.classes));
  double first_loss = 0.0, last_loss = 0.0;
  std::optional<exec::LossScaler> scaler;
  if (o.cuda.precision == exec::CudaPrecision::kFp16) scaler.emplace();
  auto start = std::chrono::steady_clock::now();
  for (int64_t it = 0; it < o.warmup + o.iterations; ++it) {
    if (it == o.warmup) {
      backend->synchronize();
      start = std::chrono::steady_clock::now();
    }
    const exec::LossStats loss = net.forward(images.data(), labels.data(), o.batch, true);
    if (!scaler) {
      net.backward();
      sgd.step(net.params(), net.grads(), 0.01f);
    } else {  // as the trainer: the mean loss times the scale, then unscale, or skip an overflowing step
      const auto s = static_cast<float>(scaler->scale());
      net.backward({}, s / static_cast<float>(o.batch));
      const bool finite = std::isfinite(backend->sum_squares(net.grads(), net.param_count()));
      if (finite) backend->scale(net.grads(), 1.0f / s, net.param_count());
      if (scaler->update(finite)) sgd.step(net.params(), net.grads(), 0.01f);
    }
    if (it == 0) first_loss = loss.mean_loss();
    last_loss = loss.mean_loss();
  }
  backend->synchronize();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double images_per_sec = static_cast<double>(o.batch * o.iterations) / seconds;
  const std::string precision = exec::cuda_arithmetic(o.cuda);
  std::printf("%s: %.1f images/s (batch %lld, %s, %lld iterations after %lld warm-up, %s); loss %.3f -> %.3f\n",
              o.model.c_str(), images_per_sec, static_cast<long long>(o.batch), precision.c_str(),
              static_cast<long long>(o.iterations), static_cast<long long>(o.warmup), backend->name().c_str(),
              first_loss, last_loss);
  if (scaler)
    std::printf("loss scale %.0f at the end, %lld of %lld steps skipped for overflowing gradients\n",
                scaler->scale(), static_cast<long long>(scaler->skipped_steps()),
                static_cast<long long>(o.warmup + o.iterations));
  const double tflops = images_per_sec * (model.fwd_flops_per_sample() + model.bwd_flops_per_sample()) / 1e12;
  std::printf("model FLOP rate: %.1f TFLOP/s (%.2f GFLOP per image, forward + backward)", tflops,
              (model.fwd_flops_per_sample() + model.bwd_flops_per_sample()) / 1e9);
  if (o.peak_tflops > 0) std::printf(", %.1f%% of %.0f TFLOP/s", 100.0 * tflops / o.peak_tflops, o.peak_tflops);
  std::printf("\nimages_per_sec=%.1f\nmodel_tflops=%.2f\n", images_per_sec, tflops);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse(argc, argv));
  } catch (const InputError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return kExitBadInput;
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "error: a number was expected (%s)\n", e.what());
    return kExitBadInput;
  } catch (const std::out_of_range& e) {
    std::fprintf(stderr, "error: a number out of range (%s)\n", e.what());
    return kExitBadInput;
  } catch (const SystemError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return kExitSystem;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "internal error: %s\n", e.what());
    return kExitInternal;
  }
}
