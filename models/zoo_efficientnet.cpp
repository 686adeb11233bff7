// EfficientNet (Tan & Le 2019) and EfficientNetV2-S (Tan & Le 2021) as torchvision defines them
// (torchvision/models/efficientnet.py), and DeepLearningExamples' WideSE variants.
//
//   stem     conv 3×3/2 (3 → c0) → bn → silu
//   MBConv   [conv 1×1 (c → e·c) → bn → silu] → depthwise conv k×k/s (groups = e·c) → bn → silu
//            → squeeze-and-excitation (pool, conv 1×1 → max(1, c/4) with bias, silu, conv 1×1 → e·c with bias,
//              sigmoid, channel scale) → conv 1×1 (→ out) → bn [→ drop_path, + input when s = 1 and c = out]
//   FusedMBConv (V2's first stages)   conv k×k/s (c → e·c) → bn → silu → conv 1×1 (→ out) → bn, or one
//            conv k×k/s (c → out) → bn → silu when e = 1; [drop_path, + input]
//   head     conv 1×1 (→ 4 × the last stage's channels, V2: 1280) → bn → silu → global average pool → dropout → fc
//
// B-series stages (expand, kernel, stride, in, out, blocks) at width and depth 1: (1,3,1,32,16,1) (6,3,2,16,24,2)
// (6,5,2,24,40,2) (6,3,2,40,80,3) (6,5,1,80,112,3) (6,5,2,112,192,4) (6,3,1,192,320,1); channels scale by the width
// multiplier rounded to a multiple of 8 (_make_divisible), blocks by the depth multiplier rounded up. B0: width 1.0,
// depth 1.0, dropout 0.2, 224×224; B4: 1.4, 1.8, 0.4, 380×380. V2-S: Fused (1,3,1,24,24,2) (4,3,2,24,48,4)
// (4,3,2,48,64,4), MBConv (4,3,2,64,128,6) (6,3,1,128,160,9) (6,3,2,160,256,15), dropout 0.2, trained at 300×300
// (its progressive resizing ends there; 384 is its evaluation size). Stochastic depth: block i of n drops its
// branch with probability 0.2 · i / n (torchvision's stochastic_depth_prob, "row" mode: a whole sample).
//
// WideSE (DeepLearningExamples PyTorch/Classification/ConvNets/efficientnet): "the width of the SE module is
// proportional to the width of the depthwise separable convolutions instead of the block width": the squeeze is a
// quarter of the expanded channels (e·c / 4) instead of a quarter of the block's input channels (c / 4).
#include <fmt/format.h>

#include <cmath>

#include "models/zoo_parts.hpp"

namespace scaletwin::models::zoo_detail {

namespace {

constexpr double kStochasticDepth = 0.2;

// torchvision's _make_divisible(v, 8): the nearest multiple of 8, at least 8, never below 90% of v.
int64_t make_divisible(double v) {
  int64_t out = std::max<int64_t>(8, static_cast<int64_t>(v + 4.0) / 8 * 8);
  if (static_cast<double>(out) < 0.9 * v) out += 8;
  return out;
}

struct Stage {
  bool fused = false;
  int64_t expand = 1, kernel = 3, stride = 1, in = 0, out = 0, blocks = 1;
};

struct BlockContext {
  ModelBuilder& b;
  std::string prefix;
  double drop_rate = 0.0;
  bool wide_se = false;
  double bn_eps = 1e-5;
};

int conv_bn(const BlockContext& ctx, const std::string& name, int from, int64_t out, int64_t kernel, int64_t stride,
            int64_t groups, bool silu) {
  ConvParams p = conv_params(out, kernel, kernel, stride, (kernel - 1) / 2, (kernel - 1) / 2);
  p.groups = groups;
  int x = ctx.b.conv(ctx.prefix + name + ".conv", from, p);
  x = ctx.b.batchnorm(ctx.prefix + name + ".bn", x, ctx.bn_eps);
  return silu ? ctx.b.silu(ctx.prefix + name + ".silu", x) : x;
}

int squeeze_excitation(const BlockContext& ctx, int x, int64_t squeeze) {
  ModelBuilder& b = ctx.b;
  const int64_t c = b.shape(x).c;
  int s = b.global_avgpool(ctx.prefix + "se.pool", x);
  s = b.silu(ctx.prefix + "se.silu", b.conv(ctx.prefix + "se.fc1", s, squeeze, 1, 1, 0, true));
  s = b.sigmoid(ctx.prefix + "se.sigmoid", b.conv(ctx.prefix + "se.fc2", s, c, 1, 1, 0, true));
  return b.mul(ctx.prefix + "se.scale", x, s);
}

int residual(const BlockContext& ctx, int from, int x, const Stage& st, int64_t in) {
  if (st.stride != 1 || in != st.out) return x;
  if (ctx.drop_rate > 0.0) x = ctx.b.drop_path(ctx.prefix + "drop_path", x, ctx.drop_rate);
  return ctx.b.add(ctx.prefix + "add", {x, from});
}

int mbconv(const BlockContext& ctx, int from, const Stage& st, int64_t in, int64_t stride) {
  const int64_t expanded = make_divisible(static_cast<double>(in * st.expand));
  int x = from;
  if (expanded != in) x = conv_bn(ctx, "expand", x, expanded, 1, 1, 1, true);
  x = conv_bn(ctx, "depthwise", x, expanded, st.kernel, stride, expanded, true);
  const int64_t squeeze = std::max<int64_t>(1, (ctx.wide_se ? expanded : in) / 4);
  x = squeeze_excitation(ctx, x, squeeze);
  x = conv_bn(ctx, "project", x, st.out, 1, 1, 1, false);
  return residual(ctx, from, x, Stage{st.fused, st.expand, st.kernel, stride, st.in, st.out, st.blocks}, in);
}

int fused_mbconv(const BlockContext& ctx, int from, const Stage& st, int64_t in, int64_t stride) {
  const int64_t expanded = make_divisible(static_cast<double>(in * st.expand));
  int x = from;
  if (expanded != in) {
    x = conv_bn(ctx, "expand", x, expanded, st.kernel, stride, 1, true);
    x = conv_bn(ctx, "project", x, st.out, 1, 1, 1, false);
  } else {
    x = conv_bn(ctx, "fused", x, st.out, st.kernel, stride, 1, true);
  }
  return residual(ctx, from, x, Stage{st.fused, st.expand, st.kernel, stride, st.in, st.out, st.blocks}, in);
}

Model make_efficientnet(const std::string& name, Shape input, int64_t classes, const std::vector<Stage>& stages,
                        int64_t last_channels, double dropout, bool wide_se, double bn_eps) {
  ModelBuilder b(name, input, classes);
  BlockContext stem{b, "stem.", 0.0, wide_se, bn_eps};
  int x = conv_bn(stem, "", b.input(), stages.front().in, 3, 2, 1, true);
  int64_t total = 0;
  for (const Stage& st : stages) total += st.blocks;
  int64_t index = 0;
  for (size_t s = 0; s < stages.size(); ++s) {
    const Stage& st = stages[s];
    for (int64_t i = 0; i < st.blocks; ++i, ++index) {
      const BlockContext ctx{b, fmt::format("stage{}.{}.", s + 1, i), kStochasticDepth * static_cast<double>(index) /
                                                                         static_cast<double>(total),
                             wide_se, bn_eps};
      const int64_t in = i == 0 ? st.in : st.out;
      const int64_t stride = i == 0 ? st.stride : 1;
      x = st.fused ? fused_mbconv(ctx, x, st, in, stride) : mbconv(ctx, x, st, in, stride);
    }
  }
  BlockContext head{b, "head.", 0.0, wide_se, bn_eps};
  x = conv_bn(head, "", x, last_channels, 1, 1, 1, true);
  x = b.global_avgpool("avgpool", x);
  x = b.dropout("dropout", x, dropout);
  x = b.fc("fc", x, b.classes());
  b.softmax_cross_entropy("loss", x);
  return b.build();
}

}  // namespace

Model make_efficientnet_b(const std::string& name, Shape input, int64_t classes, double width_mult,
                          double depth_mult, double dropout, bool wide_se) {
  static const Stage kB0[] = {{false, 1, 3, 1, 32, 16, 1},   {false, 6, 3, 2, 16, 24, 2},  {false, 6, 5, 2, 24, 40, 2},
                              {false, 6, 3, 2, 40, 80, 3},   {false, 6, 5, 1, 80, 112, 3}, {false, 6, 5, 2, 112, 192, 4},
                              {false, 6, 3, 1, 192, 320, 1}};
  std::vector<Stage> stages;
  for (Stage st : kB0) {
    st.in = make_divisible(static_cast<double>(st.in) * width_mult);
    st.out = make_divisible(static_cast<double>(st.out) * width_mult);
    st.blocks = static_cast<int64_t>(std::ceil(static_cast<double>(st.blocks) * depth_mult));
    stages.push_back(st);
  }
  return make_efficientnet(name, input, classes, stages, 4 * stages.back().out, dropout, wide_se, 1e-5);
}

Model make_efficientnet_v2_s(const std::string& name, Shape input, int64_t classes) {
  const std::vector<Stage> stages = {{true, 1, 3, 1, 24, 24, 2},     {true, 4, 3, 2, 24, 48, 4},
                                     {true, 4, 3, 2, 48, 64, 4},     {false, 4, 3, 2, 64, 128, 6},
                                     {false, 6, 3, 1, 128, 160, 9},  {false, 6, 3, 2, 160, 256, 15}};
  return make_efficientnet(name, input, classes, stages, 1280, 0.2, false, 1e-3);
}

}  // namespace scaletwin::models::zoo_detail
