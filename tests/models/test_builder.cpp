// ModelBuilder: closed-form costs of a conv and an fc layer, shape inference of strided, dilated, grouped and
// asymmetric convolutions and of ceil-mode pooling, and the InputErrors of impossible shapes.
#include <catch2/catch.hpp>

#include "core/error.hpp"
#include "models/builder.hpp"

using namespace scaletwin;
using namespace scaletwin::models;

namespace {

ConvParams conv(int64_t out, int64_t k, int64_t stride = 1, int64_t pad = 0, int64_t dilation = 1,
                int64_t groups = 1, bool bias = false) {
  ConvParams p;
  p.out_channels = out;
  p.kernel_h = p.kernel_w = k;
  p.stride_h = p.stride_w = stride;
  p.pad_h = p.pad_w = pad;
  p.dilation_h = p.dilation_w = dilation;
  p.groups = groups;
  p.bias = bias;
  return p;
}

// Runs `add` on a fresh builder and returns the InputError it throws.
template <typename F>
InputError error_of(F add) {
  try {
    ModelBuilder b("bad", Shape{8, 10, 10}, 10, "bad.json");
    add(b);
    b.build();
  } catch (const InputError& e) {
    return e;
  }
  FAIL("no InputError");
  return InputError("unreachable");
}

}  // namespace

TEST_CASE("builder: closed-form FLOPs and parameters of a conv layer") {
  ModelBuilder b("t", Shape{3, 32, 32}, 10);
  const Layer& l = b.model().layers[b.conv("c", b.input(), conv(16, 5, 1, 2, 1, 1, true))];
  CHECK(l.out == Shape{16, 32, 32});
  CHECK(l.params == 16 * 3 * 25 + 16);
  const double macs = 16.0 * 32 * 32 * 3 * 25;
  CHECK(l.fwd_flops == 2 * macs + 16.0 * 32 * 32);
  CHECK(l.bwd_weight_flops == 2 * macs + 16.0 * 32 * 32);
  CHECK(l.bwd_input_flops == 0.0);  // it reads the data: no input gradient
  CHECK(l.activation_bytes == 4 * 16 * 32 * 32);
  CHECK(l.weight_bytes == 4 * l.params);
  CHECK(l.layer_class() == LayerClass::kConv);
  // The same conv further down does compute its input gradient.
  const int r = b.relu("r", 1);
  const Layer& l2 = b.model().layers[b.conv("c2", r, conv(8, 3, 1, 1))];
  CHECK(l2.bwd_input_flops == 2.0 * 8 * 32 * 32 * 16 * 9);
  CHECK(l2.fwd_flops == l2.bwd_input_flops);
}

TEST_CASE("builder: closed-form FLOPs and parameters of an fc layer") {
  ModelBuilder b("t", Shape{16, 5, 5}, 120);
  const int f = b.flatten("flat", b.input());
  const Layer& l = b.model().layers[b.fc("fc", f, 120)];
  CHECK(l.out == Shape{120, 1, 1});
  CHECK(l.params == 400 * 120 + 120);
  CHECK(l.fwd_flops == 2.0 * 400 * 120 + 120);
  CHECK(l.bwd_input_flops == 2.0 * 400 * 120);
  CHECK(l.bwd_weight_flops == 2.0 * 400 * 120 + 120);
  CHECK(l.layer_class() == LayerClass::kMatmul);
  const Layer& nb = b.model().layers[b.fc("fc_nobias", b.last(), 120, false)];
  CHECK(nb.params == 120 * 120);
  CHECK(nb.fwd_flops == 2.0 * 120 * 120);
  CHECK(nb.bwd_weight_flops == 2.0 * 120 * 120);
}

TEST_CASE("builder: memory-bound layers have their documented per-element costs") {
  ModelBuilder b("t", Shape{4, 6, 6}, 4);
  const int c = b.conv("c", b.input(), conv(4, 3, 1, 1));
  const int bn_index = b.batchnorm("bn", c);
  const Layer& bn = b.model().layers[bn_index];
  CHECK(bn.params == 8);
  CHECK(bn.fwd_flops == 8.0 * 144);
  CHECK(bn.bwd_input_flops == 6.0 * 144);
  CHECK(bn.bwd_weight_flops == 3.0 * 144);
  CHECK(bn.layer_class() == LayerClass::kMemory);
  const Layer& add = b.model().layers[b.add("add", {bn_index, b.relu("r", bn_index)})];
  CHECK(add.fwd_flops == 144.0);
  CHECK(add.bwd_input_flops == 0.0);
  const Layer& mp = b.model().layers[b.maxpool("mp", b.last(), 2, 2)];
  CHECK(mp.out == Shape{4, 3, 3});
  CHECK(mp.fwd_flops == 4.0 * 36);
  CHECK(mp.bwd_input_flops == 36.0);
  const Layer& gap = b.model().layers[b.global_avgpool("gap", b.last())];
  CHECK(gap.out == Shape{4, 1, 1});
  CHECK(gap.fwd_flops == 36.0);
  b.softmax_cross_entropy("loss", b.last());
  const Model m = b.build();
  CHECK(m.layers.back().fwd_flops == 5.0 * 4);
  CHECK(m.layers.back().bwd_input_flops == 4.0);
  CHECK(m.params() == 4 * 4 * 9 + 8);
  CHECK(m.activation_bytes_per_sample() == 4 * (144 * 5 + 36 + 4 + 4));
}

TEST_CASE("builder: the activations, channel scale and stochastic depth of SE networks and EfficientNets") {
  ModelBuilder b("t", Shape{4, 6, 6}, 4);
  const int x = b.conv("c", b.input(), conv(4, 3, 1, 1));
  const Layer& sig = b.model().layers[b.sigmoid("sig", x)];
  CHECK(sig.fwd_flops == 4.0 * 144);
  CHECK(sig.bwd_input_flops == 3.0 * 144);
  const Layer& silu = b.model().layers[b.silu("silu", x)];
  CHECK(silu.fwd_flops == 5.0 * 144);
  CHECK(silu.bwd_input_flops == 9.0 * 144);
  const Layer& hs = b.model().layers[b.hardswish("hs", x)];
  CHECK(hs.fwd_flops == 4.0 * 144);
  const int gate = b.sigmoid("gate", b.global_avgpool("pool", b.model().index_of("silu")));
  const Layer& scale = b.model().layers[b.mul("scale", b.model().index_of("silu"), gate)];
  CHECK(scale.out == Shape{4, 6, 6});
  CHECK(scale.fwd_flops == 144.0);
  CHECK(scale.bwd_input_flops == 3.0 * 144);
  const Layer& same = b.model().layers[b.mul("same", b.model().index_of("sig"), b.model().index_of("hs"))];
  CHECK(same.bwd_input_flops == 2.0 * 144);
  const Layer& drop = b.model().layers[b.drop_path("drop", b.add("sum", {b.model().index_of("scale"),
                                                                          b.model().index_of("same")}), 0.25)];
  CHECK(drop.fwd_flops == 144.0);
  CHECK(drop.dropout_rate == 0.25);
  CHECK(drop.params == 0);
  CHECK(drop.layer_class() == LayerClass::kMemory);
  CHECK_THROWS_AS(b.drop_path("bad", x, 1.0), InputError);
  const int narrow = b.conv("narrow", b.input(), conv(2, 3, 1, 1));  // 2×6×6: neither x's shape nor 4×1×1
  CHECK_THROWS_AS(b.mul("bad_scale", x, narrow), InputError);
}

TEST_CASE("builder: shape inference of strided, dilated, grouped and asymmetric convolutions") {
  ModelBuilder b("t", Shape{8, 32, 32}, 10);
  CHECK(b.shape(b.conv("strided", 0, conv(16, 3, 2, 1))) == Shape{16, 16, 16});
  CHECK(b.shape(b.conv("strided7", 0, conv(16, 7, 2, 3))) == Shape{16, 16, 16});
  // Dilation 2 makes a 3×3 kernel cover 5×5: 32 − 5 + 1 = 28.
  CHECK(b.shape(b.conv("dilated", 0, conv(4, 3, 1, 0, 2))) == Shape{4, 28, 28});
  CHECK(b.shape(b.conv("dilated_pad", 0, conv(4, 3, 1, 2, 2))) == Shape{4, 32, 32});
  const int g = b.conv("grouped", 0, conv(16, 3, 1, 1, 1, 4));
  CHECK(b.shape(g) == Shape{16, 32, 32});
  CHECK(b.model().layers[g].params == 16 * (8 / 4) * 9);
  CHECK(b.model().layers[g].fwd_flops == 2.0 * 16 * 32 * 32 * 2 * 9);
  const int dw = b.conv("depthwise", 0, conv(8, 3, 1, 1, 1, 8));
  CHECK(b.model().layers[dw].params == 8 * 9);
  ConvParams p = conv(6, 1);
  p.kernel_w = 7;
  p.pad_w = 3;
  CHECK(b.shape(b.conv("one_by_seven", 0, p)) == Shape{6, 32, 32});
  p.stride_h = 2;
  CHECK(b.shape(b.conv("one_by_seven_s2", 0, p)) == Shape{6, 16, 32});
}

TEST_CASE("builder: floor and ceil mode pooling as PyTorch computes them") {
  ModelBuilder b("t", Shape{3, 112, 112}, 10);
  CHECK(b.shape(b.maxpool("floor", 0, 3, 2)) == Shape{3, 55, 55});
  CHECK(b.shape(b.maxpool("ceil", 0, 3, 2, 0, true)) == Shape{3, 56, 56});
  CHECK(b.shape(b.maxpool("pad1", 0, 3, 2, 1)) == Shape{3, 56, 56});
  ModelBuilder c("t", Shape{3, 5, 6}, 10);
  // 5 wide, kernel 2, stride 2, pad 1: ceil((5+2−2)/2)+1 = 4, but the last window would start in the right
  // padding, so PyTorch gives 3. 6 wide, kernel 3, stride 2: floor 2, ceil 3.
  CHECK(c.shape(c.maxpool("trim", 0, 2, 2, 1, true)).h == 3);
  PoolParams q;
  q.kernel_h = q.kernel_w = 3;
  q.stride_h = q.stride_w = 2;
  q.ceil_mode = true;
  CHECK(c.shape(c.avgpool("avg_ceil", 0, q)).w == 3);
  q.ceil_mode = false;
  CHECK(c.shape(c.avgpool("avg_floor", 0, q)).w == 2);
  CHECK(c.model().layers[c.last()].fwd_flops == 9.0 * 3 * 2 * 2);
}

TEST_CASE("builder: concat adds channels, flatten keeps elements") {
  ModelBuilder b("t", Shape{8, 7, 7}, 10);
  const int a = b.conv("a", 0, conv(3, 1));
  const int c = b.conv("c", 0, conv(5, 3, 1, 1));
  CHECK(b.shape(b.concat("cat", {a, c, 0})) == Shape{16, 7, 7});
  CHECK(b.shape(b.flatten("flat", b.last())) == Shape{16 * 49, 1, 1});
}

TEST_CASE("builder: impossible shapes are input errors naming the origin and the layer path") {
  auto check = [](const InputError& e, const std::string& path, const std::string& words) {
    INFO(e.what());
    CHECK(e.file() == "bad.json");
    CHECK(e.json_path() == path);
    CHECK(std::string(e.what()).find("bad.json") != std::string::npos);
    CHECK(std::string(e.what()).find(path) != std::string::npos);
    CHECK(std::string(e.what()).find(words) != std::string::npos);
  };
  check(error_of([](ModelBuilder& b) { b.conv("big", 0, conv(4, 11)); }), "/layers/0", "padded input");
  check(error_of([](ModelBuilder& b) { b.conv("dil", 0, conv(4, 3, 1, 0, 5)); }), "/layers/0", "11 effective");
  check(error_of([](ModelBuilder& b) { b.conv("g", 0, conv(12, 3, 1, 1, 1, 3)); }), "/layers/0", "groups");
  check(error_of([](ModelBuilder& b) { b.add("sum", {0, b.conv("c", 0, conv(4, 1))}); }), "/layers/1",
        "same shape");
  check(error_of([](ModelBuilder& b) { b.conv("zero", 0, conv(0, 1)); }), "/layers/0", "out_channels >= 1");
  check(error_of([](ModelBuilder& b) { b.maxpool("p", 0, 3, 0); }), "/layers/0", "stride");
  check(error_of([](ModelBuilder& b) { b.maxpool("p", 0, 2, 2, 2); }), "/layers/0", "half the kernel");
  check(error_of([](ModelBuilder& b) {
          b.relu("dangling", 0);
          b.relu("r", 0);
        }),
        "/layers/0", "never used");
  check(error_of([](ModelBuilder& b) {
          b.relu("r", 0);
          b.relu("r", 1);
        }),
        "/layers/1/name", "not used before");
  check(error_of([](ModelBuilder& b) { b.softmax_cross_entropy("loss", 0); }), "/layers/0", "classes");
  check(error_of([](ModelBuilder& b) { b.dropout("d", 0, 1.0); }), "/layers/0", "rate");
  check(error_of([](ModelBuilder& b) { b.add("one", {0}); }), "/layers/0", "at least 2 inputs");
  check(error_of([](ModelBuilder& b) { b.relu("fwd", 5); }), "/layers/0", "earlier layers");
  CHECK_THROWS_AS(ModelBuilder("t", Shape{0, 28, 28}, 10, "bad.json"), InputError);
  CHECK_THROWS_AS(ModelBuilder("t", Shape{1, 28, -1}, 10, "bad.json"), InputError);
  CHECK_THROWS_AS(ModelBuilder("t", Shape{1, 28, 28}, 0, "bad.json"), InputError);
}

TEST_CASE("builder: infer_model recomputes an edited model") {
  ModelBuilder b("t", Shape{3, 16, 16}, 10);
  b.fc("fc", b.conv("c", 0, conv(4, 3, 1, 1)), 10);
  Model m = b.build();
  m.layers[1].conv.stride_h = m.layers[1].conv.stride_w = 2;
  infer_model(m, "edited");
  CHECK(m.layers[1].out == Shape{4, 8, 8});
  CHECK(m.layers[2].params == 4 * 8 * 8 * 10 + 10);
  m.layers[1].conv.kernel_h = 40;
  CHECK_THROWS_AS(infer_model(m, "edited"), InputError);
}
