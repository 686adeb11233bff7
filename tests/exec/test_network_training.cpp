// lenet5 (the zoo's) trains on a few hundred Fashion-MNIST samples with SGD: the loss goes down, the training
// samples become mostly right, and held-out accuracy is far above chance. Evaluation uses batches smaller than
// the network's (the remainder of the test subset), in evaluation mode. resnet18_cifar and inception_v3 (on a
// small input) exercise the remaining geometries: projection shortcuts, 1×1, 1×7 and 7×1 convolutions, concat of
// branches, average pools; a few steps on one batch must drive its loss down.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <optional>

#include "exec/cpu/cpu_backend.hpp"
#include "exec/data.hpp"
#include "exec/network.hpp"
#include "exec/optimizer.hpp"
#include "models/zoo.hpp"

using namespace scaletwin;
using namespace scaletwin::exec;

namespace {

LossStats evaluate(Network& net, const Dataset& data, int64_t first, int64_t count, int64_t batch) {
  LossStats total;
  std::vector<float> images(static_cast<size_t>(batch * data.shape.elements())), labels(static_cast<size_t>(batch));
  std::vector<int64_t> idx(static_cast<size_t>(batch));
  for (int64_t at = first; at < first + count; at += batch) {
    const int64_t n = std::min(batch, first + count - at);
    for (int64_t k = 0; k < n; ++k) idx[k] = at + k;
    gather_batch(data, idx.data(), n, images.data(), labels.data());
    const LossStats s = net.forward(images.data(), labels.data(), n, false);
    total.loss_sum += s.loss_sum;
    total.correct += s.correct;
    total.samples += s.samples;
  }
  return total;
}

}  // namespace

TEST_CASE("lenet5 trains on 512 Fashion-MNIST samples: the loss decreases") {
  const models::Model model = models::make_builtin_model("lenet5");
  const Dataset train = load_fashion_mnist(kFashionMnistDir, Split::kTrain);
  const Dataset test = load_fashion_mnist(kFashionMnistDir, Split::kTest);
  const int64_t samples = 512, batch = 32, epochs = 4;
  CpuBackend backend;
  NetworkOptions options;
  options.batch = batch;
  options.seed = 3;
  Network net(backend, model, options);
  Sgd sgd(backend, net.param_count(), 0.9f, 5e-4f);
  LrSchedule lr;
  lr.base_lr = 0.05;
  lr.reference_batch = batch;
  lr.global_batch = batch;

  std::vector<float> images(static_cast<size_t>(batch * train.shape.elements())), labels(static_cast<size_t>(batch));
  std::vector<double> epoch_loss;
  int64_t step = 0;
  for (int64_t epoch = 0; epoch < epochs; ++epoch) {
    // The first 512 training samples, shuffled per epoch.
    const std::vector<int64_t> order = epoch_permutation(samples, 1, epoch);
    LossStats stats;
    for (int64_t b = 0; b + batch <= samples; b += batch) {
      gather_batch(train, order.data() + b, batch, images.data(), labels.data());
      const LossStats s = net.forward(images.data(), labels.data(), batch, true);
      net.backward();
      sgd.step(net.params(), net.grads(), static_cast<float>(lr.lr(step++)));
      stats.loss_sum += s.loss_sum;
      stats.samples += s.samples;
    }
    epoch_loss.push_back(stats.mean_loss());
  }
  INFO("mean training loss per epoch: " << epoch_loss[0] << " " << epoch_loss[1] << " " << epoch_loss[2] << " "
                                        << epoch_loss[3]);
  CHECK(epoch_loss[0] < 2.4);
  CHECK(epoch_loss[3] < 0.6 * epoch_loss[0]);
  const LossStats seen = evaluate(net, train, 0, samples, batch);
  const LossStats held_out = evaluate(net, test, 0, 1000, 24);  // 41 batches of 24 and one of 16
  INFO("train accuracy " << seen.accuracy() << ", test accuracy " << held_out.accuracy());
  CHECK(held_out.samples == 1000);
  CHECK(seen.accuracy() > 0.65);
  CHECK(held_out.accuracy() > 0.55);  // chance is 0.1
}

namespace {

// `steps` SGD steps (momentum 0.9) on one synthetic batch of `batch`: the losses, after checking that the first
// backward gave every layer with parameters a gradient.
std::vector<double> train_one_batch(const models::Model& model, int64_t batch, int steps, float learning_rate) {
  CpuBackend backend;
  NetworkOptions options;
  options.batch = batch;
  Network net(backend, model, options);
  Sgd sgd(backend, net.param_count(), 0.9f, 0.0f);
  const Dataset data = make_synthetic(model.input, model.classes, batch, 5);
  std::vector<double> losses;
  for (int step = 0; step < steps; ++step) {
    losses.push_back(net.forward(data.images.data(), data.labels.data(), batch, true).mean_loss());
    net.backward();
    if (step == 0) {
      std::vector<float> g(static_cast<size_t>(net.param_count()));
      backend.download(g.data(), net.grads(), net.param_count());
      int64_t silent = 0;
      for (const ParamSegment& s : net.segments())
        silent += std::all_of(g.begin() + s.offset, g.begin() + s.offset + s.length, [](float v) { return v == 0; });
      CHECK(silent == 0);
    }
    sgd.step(net.params(), net.grads(), learning_rate);
  }
  return losses;
}

}  // namespace

TEST_CASE("resnet18_cifar and inception_v3 (75×75) run training steps: every layer gets a gradient, loss drops") {
  for (const auto& [name, input] : {std::pair<std::string, std::optional<models::Shape>>{"resnet18_cifar", {}},
                                    {"inception_v3", models::Shape{3, 75, 75}}}) {
    const std::vector<double> losses = train_one_batch(models::make_builtin_model(name, input), 2, 4, 0.01f);
    INFO(name << ": losses " << losses[0] << " → " << losses[3]);
    CHECK(std::isfinite(losses[0]));
    CHECK(losses[3] < losses[0]);
  }
}

// The networks of the modern reference at a small input: ResNeXt's grouped 3x3 convolutions, SE-ResNeXt's fully
// connected squeeze-and-excitation, EfficientNet's depthwise convolutions, SiLU, convolutional SE and stochastic
// depth, V2's fused blocks. Six SGD steps on one synthetic batch of 4 (stochastic depth draws new masks each step):
// the mean loss of the last two steps is below that of the first two, and every layer with parameters gets a gradient.
TEST_CASE("today's CNNs train at 32x32 on the CPU: every layer gets a gradient, the loss goes down") {
  for (const char* name : {"efficientnet_b0", "efficientnet_widese_b0", "efficientnet_b4", "efficientnet_v2_s",
                           "resnext101_32x4d", "se_resnext101_32x4d"}) {
    const std::vector<double> losses =
        train_one_batch(models::make_builtin_model(name, models::Shape{3, 32, 32}, 10), 4, 6, 0.005f);
    INFO(name << ": losses " << losses[0] << " " << losses[1] << " ... " << losses[4] << " " << losses[5]);
    CHECK(std::isfinite(losses[5]));
    CHECK(losses[4] + losses[5] < losses[0] + losses[1]);
  }
}
