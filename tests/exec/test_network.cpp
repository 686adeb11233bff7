// Network: the flat parameter/gradient layout, whole-network gradients against finite differences on a graph
// with residual add, concat and batch norm, model-parallel fc slices against the full layers, and the
// data-parallel identity (gradients of half batches scaled by 1/global batch add up to the full batch's), and
// the hybrid scheme as plan::lower lays it out (split_model: data-parallel backbone, model-parallel head on the
// global batch) against the whole network.
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

// Hooks for two ranks running as threads of one process: gather the fc slices' outputs into the full activation,
// and sum the partial input gradients over both ranks (in place), exchanging pointers behind a barrier.
ModelParallelHooks exchange_hooks(int r, const models::Model& model, const std::map<int, FcSlice>* slices,
                                  std::barrier<>& sync, const float** shared, Backend& backend) {
  ModelParallelHooks hooks;
  hooks.gather_output = [&model, slices, &sync, shared, &backend, r](int layer, const float* slice, float* full_out,
                                                                     int64_t n) {
    shared[r] = slice;
    sync.arrive_and_wait();
    const int64_t width = model.layers[layer].out.c;
    for (int q = 0; q < 2; ++q) {
      const FcSlice& s = slices[q].at(layer);
      backend.copy_2d(full_out + s.begin, width, shared[q], s.end - s.begin, n, s.end - s.begin);
    }
    sync.arrive_and_wait();
  };
  hooks.reduce_input_gradient = [&model, &sync, shared, r](int layer, float* d_input, int64_t n) {
    const int64_t count = n * model.layers[model.layers[layer].inputs[0]].out.elements();
    shared[r] = d_input;
    sync.arrive_and_wait();
    std::vector<float> sum(shared[0], shared[0] + count);
    for (int64_t i = 0; i < count; ++i) sum[i] += shared[1][i];
    sync.arrive_and_wait();
    std::copy(sum.begin(), sum.end(), d_input);
  };
  return hooks;
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
    const ModelParallelHooks hooks = exchange_hooks(r, model, slices, sync, shared, backend);
    rank_loss[r] = net.forward(data.images.data(), data.labels.data(), 6, true, &hooks).mean_loss();
    net.backward({}, 0.0f, &hooks);
    rank_params[r] = net.download_params();
    rank_grads[r].resize(rank_params[r].size());
    backend.download(rank_grads[r].data(), net.grads(), net.param_count());
    // Each segment of this rank against the matching rows of the full network.
    for (const ParamSegment& s : net.segments()) {
      const ParamSegment* f = full.segment_of(s.layer);
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
        for (int64_t k = 0; k < s.length; ++k)
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

TEST_CASE("hybrid as the plan lowers it: data-parallel backbone, model-parallel head on the global batch") {
  // Two ranks with 3 samples each; the head (fc1 → relu → fc2 → loss) runs on all 6, each rank on its neurons.
  const models::Model model = mlp_head();
  const int first = model.index_of("fc1");
  const SplitModel split = split_model(model, first);
  REQUIRE(split.backbone.layers.size() == static_cast<size_t>(first));
  REQUIRE(split.head.layers.size() == model.layers.size() - first + 1);
  const int head_fc1 = 1, head_fc2 = split.head.index_of("fc2");
  const Dataset data = make_synthetic(model.input, 10, 6, 4);
  CpuBackend full_backend(1);
  Network full(full_backend, model, options(6, 11));
  const double full_loss = full.forward(data.images.data(), data.labels.data(), 6, true).mean_loss();
  full.backward();
  const std::vector<float> full_params = full.download_params();
  std::vector<float> full_grads(full_params.size());
  full_backend.download(full_grads.data(), full.grads(), full.param_count());

  const std::map<int, FcSlice> slices[2] = {{{head_fc1, {0, 12}}, {head_fc2, {0, 5}}},
                                            {{head_fc1, {12, 20}}, {head_fc2, {5, 10}}}};
  std::barrier sync(2);
  const float* shared[2] = {nullptr, nullptr};
  const float* features[2] = {nullptr, nullptr};
  std::vector<float> backbone_grads[2];
  double head_loss[2] = {0, 0};
  auto run_rank = [&](int r) {
    CpuBackend backend(1);
    Network backbone(backend, split.backbone, options(3, 11));
    NetworkOptions head_options = options(6, 11, slices[r]);
    head_options.input_gradient = true;
    Network head(backend, split.head, head_options);
    const ModelParallelHooks hooks = exchange_hooks(r, split.head, slices, sync, shared, backend);
    const int64_t feature_size = split.head.input.elements();
    backbone.forward(data.image(3 * r), nullptr, 3, true);
    features[r] = backbone.output(first - 1);
    sync.arrive_and_wait();  // all-gather of the backbone outputs: the head's input is the global batch
    for (int q = 0; q < 2; ++q) backend.copy(head.input_buffer() + 3 * q * feature_size, features[q], 3 * feature_size);
    sync.arrive_and_wait();
    head_loss[r] = head.forward(nullptr, data.labels.data(), 6, true, &hooks).mean_loss();
    head.backward({}, 0.0f, &hooks);  // input gradient summed over ranks by the hook: keep this rank's rows
    backend.copy(backbone.seed_gradient(), head.input_gradient() + 3 * r * feature_size, 3 * feature_size);
    backbone.backward();
    backbone_grads[r].assign(backbone.grads(), backbone.grads() + backbone.param_count());
    const std::vector<float> head_params = head.download_params();
    for (const ParamSegment& s : head.segments()) {
      REQUIRE(s.model_parallel);
      const std::string& name = split.head.layers[s.layer].name;
      const ParamSegment* f = full.segment_of(model.index_of(name));
      const FcSlice& slice = slices[r].at(s.layer);
      const int64_t row = split.head.layers[split.head.layers[s.layer].inputs[0]].out.elements();
      const int64_t weights = (slice.end - slice.begin) * row;
      for (int64_t k = 0; k < s.length; ++k) {
        const int64_t at = k < weights ? slice.begin * row + k
                                       : model.layers[model.index_of(name)].out.c * row + slice.begin + (k - weights);
        CHECK(head_params[s.offset + k] == full_params[f->offset + at]);
        CHECK(head.grads()[s.offset + k] == Approx(full_grads[f->offset + at]).margin(1e-6).epsilon(1e-4));
      }
    }
  };
  std::thread other(run_rank, 1);
  run_rank(0);
  other.join();
  CHECK(head_loss[0] == Approx(full_loss).epsilon(1e-5));
  CHECK(head_loss[1] == Approx(full_loss).epsilon(1e-5));
  // Backbone gradients summed over the ranks (the data-parallel all-reduce) equal the full network's.
  const ParamSegment* conv = full.segment_of(model.index_of("conv"));
  REQUIRE(backbone_grads[0].size() == static_cast<size_t>(conv->length));
  for (int64_t k = 0; k < conv->length; ++k)
    CHECK(backbone_grads[0][k] + backbone_grads[1][k] ==
          Approx(full_grads[conv->offset + k]).margin(1e-6).epsilon(1e-4));
}
