// The built-in models: exact parameter counts against the spec's references and the PyTorch peer, the ResNet-50
// forward cost, overrides of input and classes, and the error for an unknown name.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <string>
#include <iterator>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/json_reader.hpp"
#include "models/zoo.hpp"

using namespace scaletwin;
using namespace scaletwin::models;

TEST_CASE("zoo: parameter counts match the spec's references exactly") {
  CHECK(make_builtin_model("resnet50").params() == 25'557'032);
  CHECK(make_builtin_model("resnet152").params() == 60'192'808);
  CHECK(make_builtin_model("vgg16").params() == 138'357'544);
  CHECK(make_builtin_model("inception_v3").params() == 23'834'568);
  CHECK(make_builtin_model("resnet18").params() == 11'689'512);
  // LeNet-5 of the peer: conv 1→6 5×5, conv 6→16 5×5, fc 400→120→84→10, all with bias.
  const int64_t lenet = (1 * 6 * 25 + 6) + (6 * 16 * 25 + 16) + (400 * 120 + 120) + (120 * 84 + 84) + (84 * 10 + 10);
  CHECK(lenet == 61'706);
  CHECK(make_builtin_model("lenet5").params() == lenet);
}

// The count of shared/peers/torch_models.py's ResNet18Cifar, derived from its code: stem conv 3→64 3×3 + BN;
// Block(cin, cout, stride): two 3×3 convs (no bias) with BN, and a 1×1 conv + BN shortcut when stride != 1 or
// cin != cout; stages (64,1), (128,2), (256,2), (512,2) of two blocks; fc 512→10 with bias.
// Beyond the spec: torchvision's counts (sum(p.numel() for p in torchvision.models.<name>().parameters())), and
// the multiply-adds of a 224x224 forward pass as torchvision's model table gives them (GFLOPS there are G MACs).
TEST_CASE("zoo: resnet34 resnet101 and vgg19 have torchvision's parameter counts and cost") {
  struct Ref {
    const char* name;
    int64_t params;
    double gmacs;
  };
  for (const Ref& r : {Ref{"resnet34", 21'797'672, 3.66}, Ref{"resnet101", 44'549'160, 7.80},
                       Ref{"vgg19", 143'667'240, 19.63}}) {
    INFO(r.name);
    const Model m = make_builtin_model(r.name);
    CHECK(m.params() == r.params);
    double macs = 0.0;
    for (const Layer& l : m.layers)
      if (l.layer_class() != LayerClass::kMemory) macs += l.fwd_flops / 2.0;
    CHECK(macs / 1e9 == Approx(r.gmacs).epsilon(0.01));
  }
  // VGG-19 is VGG-16 with a fourth convolution in each of the last three blocks.
  const Model vgg19 = make_builtin_model("vgg19");
  CHECK(vgg19.layers[vgg19.index_of("conv5_4")].out == Shape{512, 14, 14});
  CHECK(vgg19.params() - make_builtin_model("vgg16").params() ==
        (256 * 256 * 9 + 256) + 2 * (512 * 512 * 9 + 512));
}

// GoogLeNet's count derived from Szegedy et al. 2015, Table 1 (every convolution k×k×in×out plus a bias; the
// modules' 1x1, 3x3 reduce, 3x3, 5x5 reduce, 5x5 and pool projection widths; fc 1024→1000): 6,998,552, as Caffe's
// bvlc_googlenet without its auxiliary classifiers. The paper's budget: 1.5 G multiply-adds per image.
TEST_CASE("zoo: googlenet has Table 1's modules parameter count and cost") {
  const auto conv = [](int64_t k, int64_t in, int64_t out) { return k * k * in * out + out; };
  struct Module {
    const char* name;
    int64_t in, n1, n3r, n3, n5r, n5, proj;
  };
  const Module modules[] = {{"3a", 192, 64, 96, 128, 16, 32, 32},     {"3b", 256, 128, 128, 192, 32, 96, 64},
                            {"4a", 480, 192, 96, 208, 16, 48, 64},     {"4b", 512, 160, 112, 224, 24, 64, 64},
                            {"4c", 512, 128, 128, 256, 24, 64, 64},    {"4d", 512, 112, 144, 288, 32, 64, 64},
                            {"4e", 528, 256, 160, 320, 32, 128, 128},  {"5a", 832, 256, 160, 320, 32, 128, 128},
                            {"5b", 832, 384, 192, 384, 48, 128, 128}};
  int64_t params = conv(7, 3, 64) + conv(1, 64, 64) + conv(3, 64, 192) + 1024 * 1000 + 1000;
  const Model m = make_builtin_model("googlenet");
  const Shape sizes[] = {{0, 28, 28}, {0, 28, 28}, {0, 14, 14}, {0, 14, 14}, {0, 14, 14},
                         {0, 14, 14}, {0, 14, 14}, {0, 7, 7},   {0, 7, 7}};
  for (size_t i = 0; i < std::size(modules); ++i) {
    const Module& g = modules[i];
    INFO(g.name);
    params += conv(1, g.in, g.n1) + conv(1, g.in, g.n3r) + conv(3, g.n3r, g.n3) + conv(1, g.in, g.n5r) +
              conv(5, g.n5r, g.n5) + conv(1, g.in, g.proj);
    const Shape out = m.layers[m.index_of(std::string(g.name) + ".output")].out;
    CHECK(out == Shape{g.n1 + g.n3 + g.n5 + g.proj, sizes[i].h, sizes[i].w});
    if (i + 1 < std::size(modules)) CHECK(out.c == modules[i + 1].in);
  }
  CHECK(params == 6'998'552);
  CHECK(m.params() == params);
  double macs = 0.0;
  for (const Layer& l : m.layers)
    if (l.layer_class() != LayerClass::kMemory) macs += l.fwd_flops / 2.0;
  CHECK(macs / 1e9 == Approx(1.5).epsilon(0.06));
}

TEST_CASE("zoo: resnet18_cifar has the PyTorch peer's parameter count") {
  auto bn = [](int64_t c) { return 2 * c; };
  auto block = [&](int64_t cin, int64_t cout, int64_t stride) {
    int64_t n = cin * cout * 9 + bn(cout) + cout * cout * 9 + bn(cout);
    if (stride != 1 || cin != cout) n += cin * cout + bn(cout);
    return n;
  };
  int64_t expected = 3 * 64 * 9 + bn(64);
  int64_t cin = 64;
  const int64_t stages[4][2] = {{64, 1}, {128, 2}, {256, 2}, {512, 2}};
  for (const auto& s : stages) {
    expected += block(cin, s[0], s[1]) + block(s[0], s[0], 1);
    cin = s[0];
  }
  expected += 512 * 10 + 10;
  CHECK(expected == 11'173'962);  // torch: sum(p.numel() for p in ResNet18Cifar().parameters())
  const Model m = make_builtin_model("resnet18_cifar");
  CHECK(m.params() == expected);
  CHECK(m.input == Shape{3, 32, 32});
  CHECK(m.layers[m.index_of("avgpool")].out == Shape{512, 1, 1});
}

TEST_CASE("zoo: vgg16_cifar and alexnet follow their documented layouts") {
  // 13 convs with bias (same as VGG-16) + batch norm on 2·(2·64 + 2·128 + 3·256 + 6·512) channels, then the
  // 512→4096→4096→10 head.
  const int64_t convs = 14'714'688;
  const int64_t bns = 2 * (2 * 64 + 2 * 128 + 3 * 256 + 6 * 512);
  const int64_t head = (512 * 4096 + 4096) + (4096 * 4096 + 4096) + (4096 * 10 + 10);
  CHECK(make_builtin_model("vgg16_cifar").params() == convs + bns + head);
  // tf_cnn_benchmarks AlexNet: conv 64 11×11, 192 5×5, 384, 384, 256 3×3 (biases), fc 9216→4096→4096→1000.
  const Model a = make_builtin_model("alexnet");
  CHECK(a.layers[a.index_of("conv1")].out == Shape{64, 55, 55});
  CHECK(a.layers[a.index_of("pool5")].out == Shape{256, 6, 6});
  const int64_t alex = (3 * 64 * 121 + 64) + (64 * 192 * 25 + 192) + (192 * 384 * 9 + 384) + (384 * 384 * 9 + 384) +
                       (384 * 256 * 9 + 256) + (9216 * 4096 + 4096) + (4096 * 4096 + 4096) + (4096 * 1000 + 1000);
  CHECK(a.params() == alex);
  // MXNet's AlexNet (symbols/alexnet.py): 96 11x11/4 unpadded, 256 5x5, 384, 384, 256 3x3, fc 6400->4096->4096.
  const Model mx = make_builtin_model("alexnet_mxnet");
  CHECK(mx.layers[mx.index_of("conv1")].out == Shape{96, 54, 54});
  CHECK(mx.layers[mx.index_of("conv3")].out == Shape{384, 12, 12});
  CHECK(mx.layers[mx.index_of("pool5")].out == Shape{256, 5, 5});
  const int64_t mx_params = (3 * 96 * 121 + 96) + (96 * 256 * 25 + 256) + (256 * 384 * 9 + 384) +
                            (384 * 384 * 9 + 384) + (384 * 256 * 9 + 256) + (6400 * 4096 + 4096) +
                            (4096 * 4096 + 4096) + (4096 * 1000 + 1000);
  CHECK(mx.params() == mx_params);
  CHECK(mx_params == 50'844'008);
}

TEST_CASE("zoo: ResNet v1 strides in a bottleneck's first 1x1 and v1.5 in its 3x3") {
  for (const char* name : {"resnet50", "resnet101", "resnet152"}) {
    const Model v15 = make_builtin_model(name);
    const Model v1 = make_builtin_model(std::string(name) + "_v1");
    CHECK(v1.params() == v15.params());
    CHECK(v1.layers.size() == v15.layers.size());
    // The first block of stage 2: 256x56x56 in, 512x28x28 out.
    const Layer& v1_conv1 = v1.layers[v1.index_of("layer2.0.conv1")];
    const Layer& v1_conv2 = v1.layers[v1.index_of("layer2.0.conv2")];
    CHECK(v1_conv1.out == Shape{128, 28, 28});
    CHECK(v1_conv1.conv.stride_h == 2);
    CHECK(v1_conv2.conv.stride_h == 1);
    CHECK(v15.layers[v15.index_of("layer2.0.conv1")].out == Shape{128, 56, 56});
    CHECK(v15.layers[v15.index_of("layer2.0.conv2")].conv.stride_h == 2);
    CHECK(v1.layers[v1.index_of("layer2.0.conv3")].out == Shape{512, 28, 28});
    // v1's strided 1x1 computes a quarter of v1.5's outputs.
    CHECK(v1.fwd_flops_per_sample() < v15.fwd_flops_per_sample());
    CHECK(v15.layers[v15.index_of("layer2.0.conv1")].fwd_flops == Approx(4.0 * v1_conv1.fwd_flops));
  }
  CHECK(make_builtin_model("resnet50_v1").params() == 25'557'032);
}

TEST_CASE("zoo: ResNet-50 forward is about 4.1 G multiply-adds per 224 image") {
  const Model m = make_builtin_model("resnet50");
  double matmul_flops = 0.0;
  for (const Layer& l : m.layers)
    if (l.layer_class() != LayerClass::kMemory) matmul_flops += l.fwd_flops;
  CHECK(matmul_flops / 2.0 == Approx(4.1e9).epsilon(0.02));
  CHECK(m.fwd_flops_per_sample() == Approx(2 * 4.1e9).epsilon(0.03));
  CHECK(m.fwd_flops_per_sample() > matmul_flops);
  // Backward costs about twice the forward: input and weight gradients of every conv and fc.
  CHECK(m.bwd_flops_per_sample() / m.fwd_flops_per_sample() == Approx(2.0).epsilon(0.05));
  CHECK(m.weight_bytes() == 4 * m.params());
  CHECK(m.layers.back().kind == LayerKind::kSoftmaxCrossEntropy);
  CHECK(m.layers.back().out == Shape{1000, 1, 1});
}

TEST_CASE("zoo: every model has a consistent graph and sensible totals") {
  for (const std::string& name : builtin_model_names()) {
    INFO(name);
    const Model m = make_builtin_model(name);
    CHECK(m.name == name);
    CHECK(m.input == builtin_model_input(name));
    CHECK(m.classes == builtin_model_classes(name));
    REQUIRE(m.layers.size() > 2);
    CHECK(m.layers[0].kind == LayerKind::kInput);
    for (size_t i = 1; i < m.layers.size(); ++i)
      for (int from : m.layers[i].inputs) CHECK(from < static_cast<int>(i));
    CHECK(m.fwd_flops_per_sample() > 0.0);
    CHECK(m.activation_bytes_per_sample() > 0);
  }
}

TEST_CASE("zoo: overrides of input and classes (mini-ImageNet 84×84×3, 100 classes)") {
  const Model base = make_builtin_model("resnet50");
  const Model mini = make_builtin_model("resnet50", Shape{3, 84, 84}, 100);
  CHECK(mini.input == Shape{3, 84, 84});
  CHECK(mini.classes == 100);
  CHECK(mini.layers[mini.index_of("conv1")].out == Shape{64, 42, 42});
  CHECK(mini.layers[mini.index_of("layer4.2.relu")].out == Shape{2048, 3, 3});
  // Only the classifier's parameters change: 2048·(1000 − 100) weights and 900 biases fewer.
  CHECK(base.params() - mini.params() == 2048 * 900 + 900);
  CHECK(mini.fwd_flops_per_sample() < base.fwd_flops_per_sample() / 4.0);

  // lenet5 on 3×84×84: the first fc takes 16·19·19 inputs.
  const Model lenet = make_builtin_model("lenet5", Shape{3, 84, 84}, 100);
  const Layer& fc1 = lenet.layers[lenet.index_of("fc1")];
  CHECK(fc1.params == 16 * 19 * 19 * 120 + 120);
  CHECK(lenet.layers.back().out.c == 100);
  for (const std::string& name : builtin_model_names()) {
    INFO(name);
    CHECK(make_builtin_model(name, Shape{3, 84, 84}, 100).classes == 100);
  }
}

TEST_CASE("zoo: unknown names and too-small inputs are input errors") {
  try {
    make_builtin_model("resnet51");
    FAIL("no error for an unknown model");
  } catch (const InputError& e) {
    const std::string msg = e.what();
    CHECK(msg.find("resnet51") != std::string::npos);
    for (const std::string& name : builtin_model_names()) CHECK(msg.find(name) != std::string::npos);
  }
  try {
    make_builtin_model("inception_v3", Shape{3, 32, 32});
    FAIL("no error for a 32×32 Inception-v3");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("built-in model inception_v3") != std::string::npos);
    CHECK(e.json_path().rfind("/layers/", 0) == 0);
  }
  CHECK_FALSE(is_builtin_model("resnet51"));
  CHECK(is_builtin_model("alexnet"));
}

// BN-Inception (MXNet's symbols/inception-bn.py): each block's output channels as in Ioffe & Szegedy 2015,
// Figure 5, at MXNet's 'valid' pooling sizes; the parameter count derived from the definition (convs with bias,
// batch norm's scale and shift, fc 1024 -> 1000 with bias), about 2.0 G multiply-adds forward.
TEST_CASE("zoo: inception_bn has BN-Inception's blocks and parameters") {
  const Model m = make_builtin_model("inception_bn");
  const std::vector<std::pair<std::string, Shape>> blocks = {
      {"3a", {256, 27, 27}}, {"3b", {320, 27, 27}}, {"3c", {576, 14, 14}}, {"4a", {576, 14, 14}},
      {"4b", {576, 14, 14}}, {"4c", {608, 14, 14}}, {"4d", {608, 14, 14}}, {"4e", {1056, 7, 7}},
      {"5a", {1024, 7, 7}},  {"5b", {1024, 7, 7}}};
  for (const auto& [block, shape] : blocks) {
    const auto it = std::find_if(m.layers.begin(), m.layers.end(), [&](const Layer& l) { return l.name == block + ".concat"; });
    REQUIRE(it != m.layers.end());
    CHECK(it->out == shape);
  }
  // conv + bn for (cin, cout, k); a block A with (n1, n3r, n3, nd3r, nd3, proj); a block B with (n3r, n3, nd3r, nd3).
  auto conv = [](int64_t cin, int64_t cout, int64_t k) { return cin * cout * k * k + cout + 2 * cout; };
  auto a = [&](int64_t c, int64_t n1, int64_t n3r, int64_t n3, int64_t nd3r, int64_t nd3, int64_t proj) {
    return conv(c, n1, 1) + conv(c, n3r, 1) + conv(n3r, n3, 3) + conv(c, nd3r, 1) + conv(nd3r, nd3, 3) +
           conv(nd3, nd3, 3) + conv(c, proj, 1);
  };
  auto b = [&](int64_t c, int64_t n3r, int64_t n3, int64_t nd3r, int64_t nd3) {
    return conv(c, n3r, 1) + conv(n3r, n3, 3) + conv(c, nd3r, 1) + conv(nd3r, nd3, 3) + conv(nd3, nd3, 3);
  };
  const int64_t want = conv(3, 64, 7) + conv(64, 64, 1) + conv(64, 192, 3) + a(192, 64, 64, 64, 64, 96, 32) +
                       a(256, 64, 64, 96, 64, 96, 64) + b(320, 128, 160, 64, 96) + a(576, 224, 64, 96, 96, 128, 128) +
                       a(576, 192, 96, 128, 96, 128, 128) + a(576, 160, 128, 160, 128, 160, 128) +
                       a(608, 96, 128, 192, 160, 192, 128) + b(608, 128, 192, 192, 256) +
                       a(1056, 352, 192, 320, 160, 224, 128) + a(1024, 352, 192, 320, 192, 224, 128) + 1024 * 1000 + 1000;
  CHECK(want == 11'295'240);
  CHECK(m.params() == want);
  CHECK(m.fwd_flops_per_sample() / 2 == Approx(2.0e9).epsilon(0.02));
}

// The networks of ../shared/reference/modern: parameter counts exactly as their definitions give them, and
// multiply-adds (conv and fc, as torchvision's model table and the papers count FLOPs) within 1%.
//   efficientnet_b0/b4/v2_s: torchvision's (sum(p.numel() for p in torchvision.models.<name>().parameters()); the
//     GFLOPS of its model table, at the evaluation size it states: 224, 380 and 384).
//   resnext101_32x4d, se_resnext101_32x4d: DeepLearningExamples' definitions (image_classification/resnet.py), the
//     same networks as Cadene's pretrainedmodels (44,177,704 and 48,955,416); multiply-adds from Hu et al. 2018
//     (Squeeze-and-Excitation Networks, Table 2: 7.99 and 8.00 GFLOPs at 224).
TEST_CASE("zoo: today's CNNs have their published parameter counts and multiply-adds") {
  struct Ref {
    const char* name;
    int64_t params;
    double gmacs;
    int64_t size;  // the input the multiply-adds are stated at
  };
  for (const Ref& r : {Ref{"resnet50_v1_5", 25'557'032, 4.089, 224}, Ref{"efficientnet_b0", 5'288'548, 0.386, 224},
                       Ref{"efficientnet_b4", 19'341'616, 4.394, 380}, Ref{"efficientnet_v2_s", 21'458'488, 8.366, 384},
                       Ref{"resnext101_32x4d", 44'177'704, 7.99, 224}, Ref{"se_resnext101_32x4d", 48'955'416, 8.00, 224}}) {
    INFO(r.name);
    const Model m = make_builtin_model(r.name, Shape{3, r.size, r.size});
    CHECK(m.params() == r.params);
    double macs = 0.0;
    for (const Layer& l : m.layers)
      if (l.layer_class() != LayerClass::kMemory) macs += std::floor(l.fwd_flops / 2.0);
    CHECK(macs / 1e9 == Approx(r.gmacs).epsilon(0.01));
  }
  // Training resolutions: B0 224, B4 380, V2-S 300 (its progressive resizing's last size).
  CHECK(builtin_model_input("efficientnet_b4") == Shape{3, 380, 380});
  CHECK(builtin_model_input("efficientnet_v2_s") == Shape{3, 300, 300});
  CHECK(builtin_model_input("efficientnet_widese_b0") == Shape{3, 224, 224});
}

TEST_CASE("zoo: EfficientNet's blocks: depthwise convolutions, squeeze-and-excitation, SiLU, stochastic depth") {
  const Model b0 = make_builtin_model("efficientnet_b0");
  // Stage 2's first block: 16 → 96 expand, depthwise 3x3/2 with 96 groups, SE squeezing to 16 / 4 = 4 channels.
  const Layer& dw = b0.layers[b0.index_of("stage2.0.depthwise.conv")];
  CHECK(dw.conv.groups == 96);
  CHECK(dw.out == Shape{96, 56, 56});
  CHECK(dw.params == 96 * 9);
  CHECK(b0.layers[b0.index_of("stage2.0.se.fc1")].out == Shape{4, 1, 1});
  CHECK(b0.layers[b0.index_of("stage2.0.se.scale")].kind == LayerKind::kMul);
  CHECK(b0.layers[b0.index_of("stage2.0.expand.silu")].kind == LayerKind::kSilu);
  // No residual where the stride is 2; a residual with stochastic depth 0.2 · block / 16 where it is 1.
  CHECK(b0.index_of("stage2.0.add") < 0);
  const Layer& drop = b0.layers[b0.index_of("stage2.1.drop_path")];
  CHECK(drop.kind == LayerKind::kDropPath);
  CHECK(drop.dropout_rate == Approx(0.2 * 2 / 16));
  // WideSE squeezes a quarter of the expanded channels: 96 / 4 = 24 in the same block.
  const Model wide = make_builtin_model("efficientnet_widese_b0");
  CHECK(wide.layers[wide.index_of("stage2.0.se.fc1")].out == Shape{24, 1, 1});
  CHECK(wide.params() > b0.params());
  // V2-S: fused stages (no depthwise convolution, no SE) before the MBConv ones.
  const Model v2 = make_builtin_model("efficientnet_v2_s");
  CHECK(v2.index_of("stage1.0.fused.conv") > 0);
  CHECK(v2.index_of("stage1.0.se.scale") < 0);
  CHECK(v2.layers[v2.index_of("stage4.0.depthwise.conv")].conv.groups == 256);
}

TEST_CASE("zoo: ResNeXt-101 32x4d: 32 groups in each 3x3, SE-ResNeXt squeezes a sixteenth") {
  const Model x = make_builtin_model("resnext101_32x4d");
  const Layer& c = x.layers[x.index_of("layer1.0.conv2")];
  CHECK(c.conv.groups == 32);
  CHECK(c.out == Shape{128, 56, 56});
  CHECK(c.params == 128 * 4 * 9);
  CHECK(x.layers[x.index_of("layer4.2.conv3")].out == Shape{2048, 7, 7});
  const Model se = make_builtin_model("se_resnext101_32x4d");
  CHECK(se.layers[se.index_of("layer3.0.se.squeeze")].out == Shape{64, 1, 1});
  CHECK(se.layers[se.index_of("layer3.0.se.scale")].inputs ==
        std::vector<int>{se.index_of("layer3.0.bn3"), se.index_of("layer3.0.se.sigmoid")});
  // resnet50_v1_5 is resnet50 (torchvision's is v1.5) under the reference's name.
  CHECK(make_builtin_model("resnet50_v1_5").layers == make_builtin_model("resnet50").layers);
}

// Every model the modern reference names resolves to a built-in (read from ../shared/reference/modern where the
// checkout has it; the names it holds today otherwise).
TEST_CASE("zoo: every model name of the modern reference resolves") {
  std::set<std::string> names = {"resnet50",        "resnext101_32x4d",       "se_resnext101_32x4d",
                                 "efficientnet_b0", "efficientnet_b4",        "efficientnet_widese_b0",
                                 "efficientnet_widese_b4", "efficientnet_v2_s"};
  const std::string reference = std::string(SCALETWIN_SOURCE_DIR) + "/../shared/reference/modern/throughput.json";
  if (std::filesystem::exists(reference)) {
    for (const Json& run : load_json_file(reference)["runs"]) names.insert(run["model"].get<std::string>());
  } else {
    WARN("no " << reference << ": checking the names it held when this test was written");
  }
  for (const std::string& name : names) {
    INFO(name);
    CHECK(is_builtin_model(name));
  }
}
