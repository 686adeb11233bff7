// Inception-v3 as in torchvision (models/inception.py), auxiliary classifier excluded.
//
// Every convolution is torchvision's BasicConv2d: conv without bias → batch norm (eps 0.001) → relu. Average pools
// in the blocks are 3×3, stride 1, padding 1, counting the padding (PyTorch's default). Blocks:
//   stem: 32 3×3/2, 32 3×3, 64 3×3 pad 1, maxpool 3/2, 80 1×1, 192 3×3, maxpool 3/2
//   Mixed_5b,c,d (A, pool features 32, 64, 64) · Mixed_6a (B) · Mixed_6b..e (C, 7×7 channels 128, 160, 160, 192)
//   Mixed_7a (D) · Mixed_7b,c (E) · global average pool, dropout 0.5, fc 2048 → classes
// Each branch ends in a concat along channels, in torchvision's order.
#include <string>
#include <vector>

#include "models/zoo_parts.hpp"

namespace scaletwin::models::zoo_detail {

namespace {

constexpr double kEps = 0.001;

// BasicConv2d with a kh×kw kernel, given stride and padding.
int basic(ModelBuilder& b, const std::string& name, int from, int64_t out, int64_t kh, int64_t kw, int64_t stride = 1,
          int64_t pad_h = 0, int64_t pad_w = 0) {
  return conv_bn_relu(b, name, from, conv_params(out, kh, kw, stride, pad_h, pad_w), kEps);
}
int basic1(ModelBuilder& b, const std::string& name, int from, int64_t out) { return basic(b, name, from, out, 1, 1); }

int pool_branch(ModelBuilder& b, const std::string& p, int from, int64_t out) {
  const int x = b.avgpool(p + ".branch_pool.avgpool", from, 3, 1, 1);
  return basic1(b, p + ".branch_pool", x, out);
}

int inception_a(ModelBuilder& b, const std::string& p, int x, int64_t pool_features) {
  const int b1 = basic1(b, p + ".branch1x1", x, 64);
  int b5 = basic1(b, p + ".branch5x5_1", x, 48);
  b5 = basic(b, p + ".branch5x5_2", b5, 64, 5, 5, 1, 2, 2);
  int b3 = basic1(b, p + ".branch3x3dbl_1", x, 64);
  b3 = basic(b, p + ".branch3x3dbl_2", b3, 96, 3, 3, 1, 1, 1);
  b3 = basic(b, p + ".branch3x3dbl_3", b3, 96, 3, 3, 1, 1, 1);
  const int bp = pool_branch(b, p, x, pool_features);
  return b.concat(p + ".concat", {b1, b5, b3, bp});
}

int inception_b(ModelBuilder& b, const std::string& p, int x) {
  const int b3 = basic(b, p + ".branch3x3", x, 384, 3, 3, 2);
  int bd = basic1(b, p + ".branch3x3dbl_1", x, 64);
  bd = basic(b, p + ".branch3x3dbl_2", bd, 96, 3, 3, 1, 1, 1);
  bd = basic(b, p + ".branch3x3dbl_3", bd, 96, 3, 3, 2);
  const int bp = b.maxpool(p + ".branch_pool", x, 3, 2);
  return b.concat(p + ".concat", {b3, bd, bp});
}

int inception_c(ModelBuilder& b, const std::string& p, int x, int64_t c7) {
  const int b1 = basic1(b, p + ".branch1x1", x, 192);
  int b7 = basic1(b, p + ".branch7x7_1", x, c7);
  b7 = basic(b, p + ".branch7x7_2", b7, c7, 1, 7, 1, 0, 3);
  b7 = basic(b, p + ".branch7x7_3", b7, 192, 7, 1, 1, 3, 0);
  int bd = basic1(b, p + ".branch7x7dbl_1", x, c7);
  bd = basic(b, p + ".branch7x7dbl_2", bd, c7, 7, 1, 1, 3, 0);
  bd = basic(b, p + ".branch7x7dbl_3", bd, c7, 1, 7, 1, 0, 3);
  bd = basic(b, p + ".branch7x7dbl_4", bd, c7, 7, 1, 1, 3, 0);
  bd = basic(b, p + ".branch7x7dbl_5", bd, 192, 1, 7, 1, 0, 3);
  const int bp = pool_branch(b, p, x, 192);
  return b.concat(p + ".concat", {b1, b7, bd, bp});
}

int inception_d(ModelBuilder& b, const std::string& p, int x) {
  int b3 = basic1(b, p + ".branch3x3_1", x, 192);
  b3 = basic(b, p + ".branch3x3_2", b3, 320, 3, 3, 2);
  int b7 = basic1(b, p + ".branch7x7x3_1", x, 192);
  b7 = basic(b, p + ".branch7x7x3_2", b7, 192, 1, 7, 1, 0, 3);
  b7 = basic(b, p + ".branch7x7x3_3", b7, 192, 7, 1, 1, 3, 0);
  b7 = basic(b, p + ".branch7x7x3_4", b7, 192, 3, 3, 2);
  const int bp = b.maxpool(p + ".branch_pool", x, 3, 2);
  return b.concat(p + ".concat", {b3, b7, bp});
}

int inception_e(ModelBuilder& b, const std::string& p, int x) {
  const int b1 = basic1(b, p + ".branch1x1", x, 320);
  const int b3 = basic1(b, p + ".branch3x3_1", x, 384);
  const int b3a = basic(b, p + ".branch3x3_2a", b3, 384, 1, 3, 1, 0, 1);
  const int b3b = basic(b, p + ".branch3x3_2b", b3, 384, 3, 1, 1, 1, 0);
  const int b3cat = b.concat(p + ".branch3x3", {b3a, b3b});
  int bd = basic1(b, p + ".branch3x3dbl_1", x, 448);
  bd = basic(b, p + ".branch3x3dbl_2", bd, 384, 3, 3, 1, 1, 1);
  const int bda = basic(b, p + ".branch3x3dbl_3a", bd, 384, 1, 3, 1, 0, 1);
  const int bdb = basic(b, p + ".branch3x3dbl_3b", bd, 384, 3, 1, 1, 1, 0);
  const int bdcat = b.concat(p + ".branch3x3dbl", {bda, bdb});
  const int bp = pool_branch(b, p, x, 192);
  return b.concat(p + ".concat", {b1, b3cat, bdcat, bp});
}

}  // namespace

Model make_inception_v3(const std::string& name, Shape input, int64_t classes) {
  ModelBuilder b(name, input, classes);
  int x = basic(b, "Conv2d_1a_3x3", b.input(), 32, 3, 3, 2);
  x = basic(b, "Conv2d_2a_3x3", x, 32, 3, 3);
  x = basic(b, "Conv2d_2b_3x3", x, 64, 3, 3, 1, 1, 1);
  x = b.maxpool("maxpool1", x, 3, 2);
  x = basic1(b, "Conv2d_3b_1x1", x, 80);
  x = basic(b, "Conv2d_4a_3x3", x, 192, 3, 3);
  x = b.maxpool("maxpool2", x, 3, 2);
  x = inception_a(b, "Mixed_5b", x, 32);
  x = inception_a(b, "Mixed_5c", x, 64);
  x = inception_a(b, "Mixed_5d", x, 64);
  x = inception_b(b, "Mixed_6a", x);
  x = inception_c(b, "Mixed_6b", x, 128);
  x = inception_c(b, "Mixed_6c", x, 160);
  x = inception_c(b, "Mixed_6d", x, 160);
  x = inception_c(b, "Mixed_6e", x, 192);
  x = inception_d(b, "Mixed_7a", x);
  x = inception_e(b, "Mixed_7b", x);
  x = inception_e(b, "Mixed_7c", x);
  x = b.global_avgpool("avgpool", x);
  x = b.dropout("dropout", x, 0.5);
  x = b.fc("fc", x, b.classes());
  b.softmax_cross_entropy("loss", x);
  return b.build();
}

// BN-Inception as MXNet's image-classification example defines it (symbols/inception-bn.py, the "inception-bn" of
// MXNet's K80 benchmarks in docs/faq/perf.md; Ioffe & Szegedy 2015, Figure 5): every convolution has a bias and is
// followed by batch norm and relu; pools use MXNet's default 'valid' convention (no padding unless given), so the
// 224 input gives 55, 27, 14 and 7 where the paper has 56, 28, 14 and 7. Blocks (channels out): 3a 256, 3b 320,
// 3c 576 (stride 2), 4a..4d 576, 576, 608, 608, 4e 1056 (stride 2), 5a 1024, 5b 1024 (max pool branch), global
// average pool, fc 1024 → classes.
namespace {

int mx_conv(ModelBuilder& b, const std::string& name, int from, int64_t out, int64_t k, int64_t stride = 1,
            int64_t pad = 0) {
  ConvParams p = conv_params(out, k, k, stride, pad, pad);
  p.bias = true;
  return conv_bn_relu(b, name, from, p, 2e-5);
}

// InceptionFactoryA: 1x1 | 1x1 → 3x3 | 1x1 → 3x3 → 3x3 | 3x3/1 pool (avg or max) → 1x1 proj.
int bn_inception_a(ModelBuilder& b, const std::string& p, int x, int64_t n1, int64_t n3r, int64_t n3, int64_t nd3r,
                   int64_t nd3, bool max_pool, int64_t proj) {
  const int c1 = mx_conv(b, p + ".1x1", x, n1, 1);
  const int c3 = mx_conv(b, p + ".3x3", mx_conv(b, p + ".3x3_reduce", x, n3r, 1), n3, 3, 1, 1);
  int d3 = mx_conv(b, p + ".double_3x3_reduce", x, nd3r, 1);
  d3 = mx_conv(b, p + ".double_3x3_1", mx_conv(b, p + ".double_3x3_0", d3, nd3, 3, 1, 1), nd3, 3, 1, 1);
  const int pool = max_pool ? b.maxpool(p + ".pool", x, 3, 1, 1) : b.avgpool(p + ".pool", x, 3, 1, 1);
  return b.concat(p + ".concat", {c1, c3, d3, mx_conv(b, p + ".proj", pool, proj, 1)});
}

// InceptionFactoryB (grid reduction): 1x1 → 3x3/2 | 1x1 → 3x3 → 3x3/2 | 3x3/2 max pool (pad 1).
int bn_inception_b(ModelBuilder& b, const std::string& p, int x, int64_t n3r, int64_t n3, int64_t nd3r, int64_t nd3) {
  const int c3 = mx_conv(b, p + ".3x3", mx_conv(b, p + ".3x3_reduce", x, n3r, 1), n3, 3, 2, 1);
  int d3 = mx_conv(b, p + ".double_3x3_reduce", x, nd3r, 1);
  d3 = mx_conv(b, p + ".double_3x3_1", mx_conv(b, p + ".double_3x3_0", d3, nd3, 3, 1, 1), nd3, 3, 2, 1);
  return b.concat(p + ".concat", {c3, d3, b.maxpool(p + ".pool", x, 3, 2, 1)});
}

// GoogLeNet's Inception module (Szegedy et al. 2015, Table 1): 1x1 | 1x1 → 3x3 | 1x1 → 5x5 | 3x3/1 max pool →
// 1x1 projection, each convolution with a bias and a ReLU, concatenated.
int v1_conv(ModelBuilder& b, const std::string& name, int from, int64_t out, int64_t k, int64_t stride = 1) {
  return b.relu(name + ".relu", b.conv(name, from, out, k, stride, k / 2, true));
}

int inception_v1(ModelBuilder& b, const std::string& p, int x, int64_t n1, int64_t n3r, int64_t n3, int64_t n5r,
                 int64_t n5, int64_t proj) {
  const int c1 = v1_conv(b, p + ".1x1", x, n1, 1);
  const int c3 = v1_conv(b, p + ".3x3", v1_conv(b, p + ".3x3_reduce", x, n3r, 1), n3, 3);
  const int c5 = v1_conv(b, p + ".5x5", v1_conv(b, p + ".5x5_reduce", x, n5r, 1), n5, 5);
  const int pool = b.maxpool(p + ".pool", x, 3, 1, 1);
  return b.concat(p + ".output", {c1, c3, c5, v1_conv(b, p + ".pool_proj", pool, proj, 1)});
}

}  // namespace

Model make_googlenet(const std::string& name, Shape input, int64_t classes) {
  ModelBuilder b(name, input, classes);
  int x = v1_conv(b, "conv1", b.input(), 64, 7, 2);
  x = b.maxpool("pool1", x, 3, 2, 1);
  x = v1_conv(b, "conv2_reduce", x, 64, 1);
  x = v1_conv(b, "conv2", x, 192, 3);
  x = b.maxpool("pool2", x, 3, 2, 1);
  x = inception_v1(b, "3a", x, 64, 96, 128, 16, 32, 32);
  x = inception_v1(b, "3b", x, 128, 128, 192, 32, 96, 64);
  x = b.maxpool("pool3", x, 3, 2, 1);
  x = inception_v1(b, "4a", x, 192, 96, 208, 16, 48, 64);
  x = inception_v1(b, "4b", x, 160, 112, 224, 24, 64, 64);
  x = inception_v1(b, "4c", x, 128, 128, 256, 24, 64, 64);
  x = inception_v1(b, "4d", x, 112, 144, 288, 32, 64, 64);
  x = inception_v1(b, "4e", x, 256, 160, 320, 32, 128, 128);
  x = b.maxpool("pool4", x, 3, 2, 1);
  x = inception_v1(b, "5a", x, 256, 160, 320, 32, 128, 128);
  x = inception_v1(b, "5b", x, 384, 192, 384, 48, 128, 128);
  x = b.dropout("drop5", b.global_avgpool("pool5", x), 0.4);
  x = b.fc("fc", x, b.classes());
  b.softmax_cross_entropy("loss", x);
  return b.build();
}

Model make_inception_bn(const std::string& name, Shape input, int64_t classes) {
  ModelBuilder b(name, input, classes);
  int x = mx_conv(b, "conv1", b.input(), 64, 7, 2, 3);
  x = b.maxpool("pool1", x, 3, 2);
  x = mx_conv(b, "conv2_red", x, 64, 1);
  x = mx_conv(b, "conv2", x, 192, 3, 1, 1);
  x = b.maxpool("pool2", x, 3, 2);
  x = bn_inception_a(b, "3a", x, 64, 64, 64, 64, 96, false, 32);
  x = bn_inception_a(b, "3b", x, 64, 64, 96, 64, 96, false, 64);
  x = bn_inception_b(b, "3c", x, 128, 160, 64, 96);
  x = bn_inception_a(b, "4a", x, 224, 64, 96, 96, 128, false, 128);
  x = bn_inception_a(b, "4b", x, 192, 96, 128, 96, 128, false, 128);
  x = bn_inception_a(b, "4c", x, 160, 128, 160, 128, 160, false, 128);
  x = bn_inception_a(b, "4d", x, 96, 128, 192, 160, 192, false, 128);
  x = bn_inception_b(b, "4e", x, 128, 192, 192, 256);
  x = bn_inception_a(b, "5a", x, 352, 192, 320, 160, 224, false, 128);
  x = bn_inception_a(b, "5b", x, 352, 192, 320, 192, 224, true, 128);
  x = b.global_avgpool("global_pool", x);
  x = b.fc("fc1", x, b.classes());
  b.softmax_cross_entropy("loss", x);
  return b.build();
}

}  // namespace scaletwin::models::zoo_detail
