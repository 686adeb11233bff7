// Blocked activation layouts in Network (exec/network_layout.hpp, Backend::activation_block): which layers keep
// their outputs blocked, and that a residual network trained with blocked activations computes the loss,
// gradients, running statistics and updated outputs of the same network kept plain, on the CPU backend.
#include <catch2/catch.hpp>
#include <cmath>

#include "exec/cpu/cpu_backend.hpp"
#include "exec/data.hpp"
#include "exec/network.hpp"
#include "exec/network_layout.hpp"
#include "models/builder.hpp"
#include "forwarding_backend.hpp"

using namespace scaletwin;
using namespace scaletwin::exec;

namespace {

// input 3×8×8 → conv 16 → bn → relu → conv 16 → bn → add(·, relu) → relu → conv 32 stride 2 → bn → relu
// → global avg pool → flatten → fc → loss.
models::Model small_resnet() {
  models::ModelBuilder b("small_resnet", {3, 8, 8}, 5);
  const int stem = b.relu("stem_relu", b.batchnorm("stem_bn", b.conv("stem", b.input(), 16, 3, 1, 1, false)));
  const int c1 = b.batchnorm("bn1", b.conv("conv1", stem, 16, 3, 1, 1, false));
  const int sum = b.relu("relu1", b.add("add", {c1, stem}));
  const int c2 = b.relu("relu2", b.batchnorm("bn2", b.conv("conv2", sum, 32, 3, 2, 1, false)));
  const int fc = b.fc("fc", b.flatten("flat", b.global_avgpool("gap", c2)), 5);
  b.softmax_cross_entropy("loss", fc);
  return b.build();
}

// An MBConv block with squeeze-and-excitation, as EfficientNet's: input 3×8×8 → conv 16 → bn → silu
// → depthwise 3×3 (16 groups) → bn → silu → SE (pool, conv 1×1 → 4, silu, conv 1×1 → 16, sigmoid, mul)
// → conv 1×1 16 → bn → drop_path → add(·, stem) → hardswish → global avg pool → fc → loss.
models::Model small_mbconv() {
  models::ModelBuilder b("small_mbconv", {3, 8, 8}, 5);
  const int stem = b.silu("stem_silu", b.batchnorm("stem_bn", b.conv("stem", b.input(), 16, 3, 1, 1, false)));
  models::ConvParams dw;
  dw.out_channels = 16, dw.kernel_h = dw.kernel_w = 3, dw.pad_h = dw.pad_w = 1, dw.groups = 16;
  const int x = b.silu("dw_silu", b.batchnorm("dw_bn", b.conv("dw", stem, dw)));
  int s = b.silu("se_silu", b.conv("se_fc1", b.global_avgpool("se_pool", x), 4, 1, 1, 0, true));
  s = b.sigmoid("se_gate", b.conv("se_fc2", s, 16, 1, 1, 0, true));
  const int p = b.batchnorm("project_bn", b.conv("project", b.mul("se_scale", x, s), 16, 1, 1, 0, false));
  const int sum = b.hardswish("out", b.add("add", {b.drop_path("drop", p, 0.3), stem}));
  b.softmax_cross_entropy("loss", b.fc("fc", b.global_avgpool("gap", sum), 5));
  return b.build();
}

// The CPU backend with activation_block() = 0: every activation plain, as before blocked layouts.
class PlainCpuBackend : public test::ForwardingBackend {
 public:
  PlainCpuBackend() : ForwardingBackend(std::make_unique<CpuBackend>(1)) {}
  int activation_block() const override { return 0; }
};

std::vector<float> host(Backend& backend, const float* device, int64_t n) {
  std::vector<float> out(static_cast<size_t>(n));
  backend.download(out.data(), device, n);
  return out;
}

double relative_error(const std::vector<float>& got, const std::vector<float>& want) {
  REQUIRE(got.size() == want.size());
  double diff = 0.0, ref = 0.0;
  for (size_t i = 0; i < got.size(); ++i) {
    diff += (static_cast<double>(got[i]) - want[i]) * (static_cast<double>(got[i]) - want[i]);
    ref += static_cast<double>(want[i]) * want[i];
  }
  return std::sqrt(diff / std::max(ref, 1e-30));
}

}  // namespace

TEST_CASE("activation layouts: blocked inside conv, batch norm, relu, add and pooling runs, plain at the edges") {
  const models::Model model = small_resnet();
  const detail::Layout layout = detail::make_layout(model, {});
  const std::vector<int> blocks = detail::activation_blocks(model, layout, 16);
  for (size_t i = 0; i < model.layers.size(); ++i) {
    const std::string& name = model.layers[i].name;
    INFO(name);
    // gap's 32×1×1 output is the same bytes blocked or plain, so flatten may read it.
    const bool blocked = name != "input" && name != "flat" && name != "fc" && name != "loss";
    CHECK(blocks[i] == (blocked ? 16 : 0));
  }
  // Blocks of 32: only the 32-channel run after conv2 (conv2 converts from its plain input); block 0: all plain.
  const std::vector<int> blocks_32 = detail::activation_blocks(model, layout, 32);
  for (size_t i = 0; i < model.layers.size(); ++i) {
    const std::string& name = model.layers[i].name;
    INFO(name);
    CHECK(blocks_32[i] == (name == "conv2" || name == "bn2" || name == "relu2" || name == "gap" ? 32 : 0));
  }
  for (int b : detail::activation_blocks(model, layout, 0)) CHECK(b == 0);

  // A max pool consumer (a plain kernel) keeps its producer, and what shares its layout, plain.
  models::ModelBuilder b("pool_branch", {3, 8, 8}, 5);
  const int conv = b.conv("conv", b.input(), 16, 3, 1, 1, false);
  const int relu = b.relu("relu", b.batchnorm("bn", conv));
  const int fc = b.fc("fc", b.flatten("flat", b.maxpool("pool", relu, 2, 2)), 5);
  b.softmax_cross_entropy("loss", fc);
  const models::Model pooled = b.build();
  const std::vector<int> pooled_blocks = detail::activation_blocks(pooled, detail::make_layout(pooled, {}), 16);
  for (int x : pooled_blocks) CHECK(x == 0);
}

namespace {

// Trains `model` two steps with blocked activations and with plain ones: the same loss, gradients, running
// statistics and probabilities.
void check_blocked_equals_plain(const models::Model& model) {
  CpuBackend blocked_backend(1);
  PlainCpuBackend plain_backend;
  const int block = blocked_backend.activation_block();
  INFO("activation block " << block);
  CHECK((block == 0 || block == 8 || block == 16));
  REQUIRE(plain_backend.activation_block() == 0);

  NetworkOptions o;
  o.batch = 4;
  o.seed = 3;
  Network blocked(blocked_backend, model, o), plain(plain_backend, model, o);
  const Dataset data = make_synthetic(model.input, 5, 4, 9);
  for (int step = 0; step < 2; ++step) {  // the second step starts from the first's updated running statistics
    const LossStats a = blocked.forward(data.images.data(), data.labels.data(), 4, true);
    const LossStats p = plain.forward(data.images.data(), data.labels.data(), 4, true);
    CHECK(a.mean_loss() == Approx(p.mean_loss()).epsilon(1e-5));
    blocked.backward();
    plain.backward();
    const int64_t n = blocked.param_count();
    CHECK(relative_error(host(blocked_backend, blocked.grads(), n), host(plain_backend, plain.grads(), n)) < 1e-4);
    CHECK(relative_error(host(blocked_backend, blocked.state(), blocked.state_count()),
                         host(plain_backend, plain.state(), plain.state_count())) < 1e-5);
    // Plain edges: the probabilities the loss read.
    const int64_t last = static_cast<int64_t>(model.layers.size()) - 1;
    CHECK(relative_error(host(blocked_backend, blocked.output(static_cast<int>(last)), 4 * 5),
                         host(plain_backend, plain.output(static_cast<int>(last)), 4 * 5)) < 1e-5);
    std::vector<float> params = blocked.download_params();
    const std::vector<float> grads = host(blocked_backend, blocked.grads(), n);
    for (size_t i = 0; i < params.size(); ++i) params[i] -= 0.1f * grads[i];
    blocked.upload_params(params);
    plain.upload_params(params);
  }
}

}  // namespace

TEST_CASE("a residual network trains the same with blocked activations as with plain ones") {
  check_blocked_equals_plain(small_resnet());
}

TEST_CASE("an MBConv block with squeeze-and-excitation trains the same with blocked activations as with plain ones") {
  const models::Model model = small_mbconv();
  CpuBackend backend(1);
  const std::vector<int> blocks =
      detail::activation_blocks(model, detail::make_layout(model, {}), backend.activation_block());
  // The SiLU, the channel scale and stochastic depth keep the convolutions' blocked layout.
  if (backend.activation_block() > 0) {
    CHECK(blocks[model.index_of("dw_silu")] == backend.activation_block());
    CHECK(blocks[model.index_of("se_scale")] == backend.activation_block());
    CHECK(blocks[model.index_of("drop")] == backend.activation_block());
  }
  check_blocked_equals_plain(model);
}
