// Network: the flat parameter/gradient layout, whole-network gradients against finite differences on a graph
// with residual add, concat and batch norm, model-parallel fc slices against the full layers, and the
// data-parallel identity (gradients of half batches scaled by 1/global batch add up to the full batch's).
#include <barrier>
#include <catch2/catch.hpp>
#include <cmath>
#include <thread>

#include "exec/cpu/cpu_backend.hpp"
#include "exec/data.hpp"
#include "exec/network.hpp"
#include "models/builder.hpp"
#include "models/zoo.hpp"

using namespace scaletwin;
using namespace scaletwin::exec;

namespace {

NetworkOptions options(int64_t batch, uint64_t seed = 1, std::map<int, FcSlice> slices = {}) {
  NetworkOptions o;
  o.batch = batch;
  o.seed = seed;
  o.fc_slices = std::move(slices);
  return o;
}

// input 2×6×6 → conv a → bn → conv b; add(b, bn) → concat(add, bn) → avgpool → flatten → fc → loss.
// The batch norm output feeds three consumers, so its gradient accumulates through the scratch path.
models::Model small_graph() {
  models::ModelBuilder b("small", {2, 6, 6}, 3);
  int a = b.conv("a", b.input(), 4, 3, 1, 1, true);
  a = b.batchnorm("bn", a);
  const int c = b.conv("b", a, 4, 3, 1, 1, false);
  const int sum = b.add("add", {c, a});
  const int cat = b.concat("cat", {sum, a});
  const int pool = b.avgpool("pool", cat, 2, 2);
  const int fc = b.fc("fc", b.flatten("flat", pool), 3);
  b.softmax_cross_entropy("loss", fc);
  return b.build();
}

models::Model mlp_head() {
  models::ModelBuilder b("mlp", {1, 8, 8}, 10);
  int x = b.relu("r0", b.conv("conv", b.input(), 4, 3, 1, 1, true));
  x = b.relu("r1", b.fc("fc1", b.flatten("flat", x), 20));
  b.softmax_cross_entropy("loss", b.fc("fc2", x, 10));
  return b.build();
}

}  // namespace

TEST_CASE("lenet5: one flat buffer, segments last layer first, gradients ready in flat order") {
  const models::Model model = models::make_builtin_model("lenet5");
  CpuBackend backend(1);
  Network net(backend, model, options(8));
  CHECK(net.param_count() == 61706);
  CHECK(net.replicated_param_count() == net.param_count());
  int64_t offset = 0;
  int previous_layer = static_cast<int>(model.layers.size());
  for (const ParamSegment& s : net.segments()) {
    CHECK(s.offset == offset);
    CHECK(s.length == model.layers[s.layer].params);
    CHECK(s.layer < previous_layer);
    previous_layer = s.layer;
    offset += s.length;
  }
  CHECK(offset == net.param_count());
  const Dataset data = make_synthetic(model.input, 10, 8, 1);
  net.forward(data.images.data(), data.labels.data(), 8, true);
  std::vector<int64_t> ready;
  net.backward([&](const ParamSegment& s) { ready.push_back(s.offset); });
  REQUIRE(ready.size() == net.segments().size());
  for (size_t k = 0; k < ready.size(); ++k) CHECK(ready[k] == net.segments()[k].offset);
  // Same seed, same replica; another seed, another one.
  Network twin(backend, model, options(8));
  Network other(backend, model, options(8, 2));
  CHECK(twin.download_params() == Network(backend, model, options(4)).download_params());
  CHECK(twin.download_params() != other.download_params());
}

TEST_CASE("network gradients match finite differences through add, concat and a shared batch norm") {
  const models::Model model = small_graph();
  CpuBackend backend(1);
  Network net(backend, model, options(4, 5));
  const Dataset data = make_synthetic(model.input, 3, 4, 3);
  net.forward(data.images.data(), data.labels.data(), 4, true);
  net.backward();
  std::vector<float> grads(static_cast<size_t>(net.param_count()));
  backend.download(grads.data(), net.grads(), net.param_count());
  std::vector<float> params = net.download_params();
  auto loss_at = [&](size_t i, double delta) {
    const float saved = params[i];
    params[i] = static_cast<float>(saved + delta);
    net.upload_params(params);
    params[i] = saved;
    return net.forward(data.images.data(), data.labels.data(), 4, true).mean_loss();
  };
  const double eps = 5e-3;
  for (const ParamSegment& s : net.segments()) {
    double diff = 0.0, ref = 0.0;
    for (int64_t k = 0; k < s.length; k += std::max<int64_t>(1, s.length / 24)) {
      const auto i = static_cast<size_t>(s.offset + k);
      const double numeric = (loss_at(i, eps) - loss_at(i, -eps)) / (2 * eps);
      diff += (numeric - grads[i]) * (numeric - grads[i]);
      ref += numeric * numeric;
    }
    INFO("layer " << model.layers[s.layer].name << ": |numeric| " << std::sqrt(ref) << ", |error| " << std::sqrt(diff));
    CHECK(std::sqrt(ref) > 1e-4);
    CHECK(std::sqrt(diff) < 2e-3 * std::sqrt(ref));
  }
}

TEST_CASE("model-parallel fc slices on two ranks give the full network's loss and gradients") {
  const models::Model model = mlp_head();
  const int fc1 = model.index_of("fc1"), fc2 = model.index_of("fc2");
  const Dataset data = make_synthetic(model.input, 10, 6, 4);
  CpuBackend full_backend(1);
  Network full(full_backend, model, options(6, 11));
  const LossStats full_loss = full.forward(data.images.data(), data.labels.data(), 6, true);
  full.backward();
  const std::vector<float> full_params = full.download_params();
  std::vector<float> full_grads(full_params.size());
  full_backend.download(full_grads.data(), full.grads(), full.param_count());

  // Rank r holds fc1 neurons [0, 7) or [7, 20) and fc2 neurons [0, 4) or [4, 10); hooks exchange through memory.
  const std::map<int, FcSlice> slices[2] = {{{fc1, {0, 7}}, {fc2, {0, 4}}}, {{fc1, {7, 20}}, {fc2, {4, 10}}}};
  std::barrier sync(2);
  const float* shared[2] = {nullptr, nullptr};
  std::vector<float> rank_params[2], rank_grads[2];
  double rank_loss[2] = {0, 0};
  auto run_rank = [&](int r) {
    CpuBackend backend(1);
    Network net(backend, model, options(6, 11, slices[r]));
    ModelParallelHooks hooks;
    hooks.gather_output = [&](int layer, const float* slice, float* full_out, int64_t n) {
      shared[r] = slice;
      sync.arrive_and_wait();
      const int64_t width = model.layers[layer].out.c;
      for (int q = 0; q < 2; ++q) {
        const FcSlice& s = slices[q].at(layer);
        backend.copy_2d(full_out + s.begin, width, shared[q], s.end - s.begin, n, s.end - s.begin);
      }
      sync.arrive_and_wait();
    };
    hooks.reduce_input_gradient = [&](int layer, float* d_input, int64_t n) {
      const int64_t count = n * model.layers[model.layers[layer].inputs[0]].out.elements();
      shared[r] = d_input;
      sync.arrive_and_wait();
      std::vector<float> sum(shared[0], shared[0] + count);
      for (int64_t i = 0; i < count; ++i) sum[i] += shared[1][i];
      sync.arrive_and_wait();
      std::copy(sum.begin(), sum.end(), d_input);
    };
    rank_loss[r] = net.forward(data.images.data(), data.labels.data(), 6, true, &hooks).mean_loss();
    net.backward({}, 0.0f, &hooks);
    rank_params[r] = net.download_params();
    rank_grads[r].resize(rank_params[r].size());
    backend.download(rank_grads[r].data(), net.grads(), net.param_count());
    // Each segment of this rank against the matching rows of the full network.
    for (const ParamSegment& s : net.segments()) {
      const ParamSegment* f = full.segment_of(s.layer);
      int64_t first = 0;
      if (s.model_parallel) {
        const FcSlice& slice = slices[r].at(s.layer);
        const int64_t row = model.layers[model.layers[s.layer].inputs[0]].out.elements();
        const int64_t weights = (slice.end - slice.begin) * row;
        CHECK(s.length == weights + (slice.end - slice.begin));
        for (int64_t k = 0; k < s.length; ++k) {
          const int64_t at =
              k < weights ? slice.begin * row + k : model.layers[s.layer].out.c * row + slice.begin + (k - weights);
          CHECK(rank_params[r][s.offset + k] == full_params[f->offset + at]);
          CHECK(rank_grads[r][s.offset + k] == Approx(full_grads[f->offset + at]).margin(1e-6).epsilon(1e-4));
        }
      } else {
        for (int64_t k = first; k < s.length; ++k)
          CHECK(rank_grads[r][s.offset + k] == Approx(full_grads[f->offset + k]).margin(1e-6).epsilon(1e-4));
      }
    }
  };
  std::thread other(run_rank, 1);
  run_rank(0);
  other.join();
  CHECK(rank_loss[0] == Approx(full_loss.mean_loss()).epsilon(1e-5));
  CHECK(rank_loss[1] == Approx(full_loss.mean_loss()).epsilon(1e-5));
}

TEST_CASE("data parallelism: two half batches with loss scale 1/global sum to the full batch's gradient") {
  const models::Model model = models::make_builtin_model("lenet5");
  const Dataset data = make_synthetic(model.input, 10, 16, 8);
  CpuBackend backend(1);
  Network full(backend, model, options(16, 4));
  full.forward(data.images.data(), data.labels.data(), 16, true);
  full.backward();
  std::vector<float> expected(static_cast<size_t>(full.param_count())), sum(expected.size(), 0.0f);
  backend.download(expected.data(), full.grads(), full.param_count());
  Network half(backend, model, options(8, 4));
  for (int part = 0; part < 2; ++part) {
    const int64_t offset = part * 8 * model.input.elements();
    half.forward(data.images.data() + offset, data.labels.data() + part * 8, 8, true);
    half.backward({}, 1.0f / 16.0f);
    for (int64_t i = 0; i < half.param_count(); ++i) sum[i] += half.grads()[i];
  }
  double diff = 0.0, ref = 0.0;
  for (size_t i = 0; i < sum.size(); ++i) {
    diff += (sum[i] - expected[i]) * (sum[i] - expected[i]);
    ref += static_cast<double>(expected[i]) * expected[i];
  }
  CHECK(ref > 0.0);
  CHECK(std::sqrt(diff) < 1e-5 * std::sqrt(ref));
}
