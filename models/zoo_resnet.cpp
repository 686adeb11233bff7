// The ResNets of the zoo: torchvision's resnet18 / resnet34 / resnet50 / resnet101 / resnet152 (v1.5: in a
// bottleneck the stride sits on the 3×3 convolution), the CIFAR ResNet-18 of the PyTorch peer
// (shared/peers/torch_models.py), and resnet50_v1 / resnet101_v1 / resnet152_v1: v1 as He et al. released it (the
// Caffe prototxts: res3a_branch2a is a 1×1 of stride 2) and as TensorFlow's tf_cnn_benchmarks built it in 2017
// (resnet_model.py, bottleneck_block: the stride on the first 1×1 convolution, the 3×3 at stride 1). Same
// parameters as v1.5; fewer FLOPs (the first 1×1 runs at the lower resolution), and every 3×3 convolution has
// stride 1.
//
// resnext101_32x4d and se_resnext101_32x4d are DeepLearningExamples' (PyTorch/Classification/ConvNets,
// image_classification/resnet.py): bottlenecks of inner width 128, 256, 512, 1024 with 32 groups in the 3×3 and
// twice the width out (256 ... 2048), 3-4-23-3 blocks, v1.5 strides; the SE variant squeezes each block's output to
// a sixteenth (Hu et al. 2018) before the residual sum.
//
// Layer names follow torchvision: conv1, bn1, relu, maxpool, layer<s>.<b>.conv1 / bn1 / relu1 / conv2 ...,
// layer<s>.<b>.downsample.0 (conv) and .1 (bn), layer<s>.<b>.add and .relu (after the residual sum), avgpool, fc.
// Convolutions have no bias; batch norm has eps 1e-5; the shortcut is a 1×1 projection with batch norm exactly
// when the stride is not 1 or the channel count changes, else the identity.
#include <fmt/format.h>

#include "models/zoo_parts.hpp"

namespace scaletwin::models::zoo_detail {

namespace {

int shortcut(ModelBuilder& b, const std::string& prefix, int from, int64_t out_channels, int64_t stride) {
  if (stride == 1 && b.shape(from).c == out_channels) return from;
  const int x = b.conv(prefix + ".downsample.0", from, out_channels, 1, stride, 0, false);
  return b.batchnorm(prefix + ".downsample.1", x);
}

// BasicBlock: 3×3 (stride) → bn → relu → 3×3 → bn, + shortcut, relu.
int basic_block(ModelBuilder& b, const std::string& prefix, int from, int64_t width, int64_t stride) {
  int x = b.conv(prefix + ".conv1", from, width, 3, stride, 1);
  x = b.relu(prefix + ".relu1", b.batchnorm(prefix + ".bn1", x));
  x = b.conv(prefix + ".conv2", x, width, 3, 1, 1);
  x = b.batchnorm(prefix + ".bn2", x);
  const int sc = shortcut(b, prefix, from, width, stride);
  return b.relu(prefix + ".relu", b.add(prefix + ".add", {x, sc}));
}

// Squeeze-and-excitation of x (C channels): global average pool, fc C → C / reduction, relu, fc → C, sigmoid; the
// channel scale x · s. Fully connected layers, as DeepLearningExamples' SqueezeAndExcitation (nn.Linear).
int squeeze_excitation(ModelBuilder& b, const std::string& prefix, int x, int64_t reduction) {
  const int64_t c = b.shape(x).c;
  int s = b.global_avgpool(prefix + ".se.pool", x);
  s = b.relu(prefix + ".se.relu", b.fc(prefix + ".se.squeeze", s, c / reduction));
  s = b.sigmoid(prefix + ".se.sigmoid", b.fc(prefix + ".se.expand", s, c));
  return b.mul(prefix + ".se.scale", x, s);
}

// Bottleneck (v1.5): 1×1 → bn → relu → 3×3 (stride, groups) → bn → relu → 1×1 (expansion · width) → bn
// [→ squeeze-and-excitation], + shortcut, relu. v1 (stride_in_first_1x1): the first 1×1 strides and the 3×3 does not.
int bottleneck_block(ModelBuilder& b, const std::string& prefix, int from, int64_t width, int64_t stride,
                     const ResNetSpec& spec) {
  const int64_t stride_1x1 = spec.stride_in_first_1x1 ? stride : 1;
  int x = b.conv(prefix + ".conv1", from, width, 1, stride_1x1, 0);
  x = b.relu(prefix + ".relu1", b.batchnorm(prefix + ".bn1", x));
  ConvParams p3 = conv_params(width, 3, 3, stride / stride_1x1, 1, 1);
  p3.groups = spec.groups;
  x = b.conv(prefix + ".conv2", x, p3);
  x = b.relu(prefix + ".relu2", b.batchnorm(prefix + ".bn2", x));
  x = b.conv(prefix + ".conv3", x, spec.expansion * width, 1, 1, 0);
  x = b.batchnorm(prefix + ".bn3", x);
  if (spec.se_reduction > 0) x = squeeze_excitation(b, prefix, x, spec.se_reduction);
  const int sc = shortcut(b, prefix, from, spec.expansion * width, stride);
  return b.relu(prefix + ".relu", b.add(prefix + ".add", {x, sc}));
}

}  // namespace

Model make_resnet(const std::string& name, Shape input, int64_t classes, const ResNetSpec& spec) {
  ModelBuilder b(name, input, classes);
  int x = 0;
  if (spec.cifar_stem) {
    x = b.relu("relu", b.batchnorm("bn1", b.conv("conv1", b.input(), 64, 3, 1, 1)));
  } else {
    x = b.relu("relu", b.batchnorm("bn1", b.conv("conv1", b.input(), 64, 7, 2, 3)));
    x = b.maxpool("maxpool", x, 3, 2, 1);
  }
  for (int stage = 0; stage < 4; ++stage) {
    for (int block = 0; block < spec.blocks[stage]; ++block) {
      const std::string prefix = fmt::format("layer{}.{}", stage + 1, block);
      const int64_t stride = (stage > 0 && block == 0) ? 2 : 1;
      x = spec.bottleneck ? bottleneck_block(b, prefix, x, spec.widths[stage], stride, spec)
                          : basic_block(b, prefix, x, spec.widths[stage], stride);
    }
  }
  x = b.global_avgpool("avgpool", x);
  x = b.fc("fc", x, b.classes());
  b.softmax_cross_entropy("loss", x);
  return b.build();
}

}  // namespace scaletwin::models::zoo_detail
