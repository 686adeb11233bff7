// The registry of built-in models and the plain feed-forward ones (lenet5, alexnet, the VGGs); the ResNets and
// Inception-v3 are in zoo_resnet.cpp and zoo_inception.cpp. What each model is, and why, is in zoo.hpp.
#include "models/zoo.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"
#include "core/json_reader.hpp"
#include "models/zoo_parts.hpp"

namespace scaletwin::models {

namespace zoo_detail {

ConvParams conv_params(int64_t out_channels, int64_t kernel_h, int64_t kernel_w, int64_t stride, int64_t pad_h,
                       int64_t pad_w) {
  ConvParams p;
  p.out_channels = out_channels;
  p.kernel_h = kernel_h;
  p.kernel_w = kernel_w;
  p.stride_h = p.stride_w = stride;
  p.pad_h = pad_h;
  p.pad_w = pad_w;
  return p;
}

int conv_bn_relu(ModelBuilder& b, const std::string& prefix, int from, const ConvParams& p, double bn_eps) {
  int x = b.conv(prefix + ".conv", from, p);
  x = b.batchnorm(prefix + ".bn", x, bn_eps);
  return b.relu(prefix + ".relu", x);
}

}  // namespace zoo_detail

namespace {

using zoo_detail::conv_params;

Model make_lenet5(const std::string& name, Shape input, int64_t classes) {
  ModelBuilder b(name, input, classes);
  int x = b.conv("conv1", b.input(), 6, 5, 1, 2, true);
  x = b.maxpool("pool1", b.relu("relu1", x), 2, 2);
  x = b.conv("conv2", x, 16, 5, 1, 0, true);
  x = b.maxpool("pool2", b.relu("relu2", x), 2, 2);
  x = b.relu("relu3", b.fc("fc1", b.flatten("flatten", x), 120));
  x = b.relu("relu4", b.fc("fc2", x, 84));
  x = b.fc("fc3", x, b.classes());
  b.softmax_cross_entropy("loss", x);
  return b.build();
}

// The two AlexNets differ in their first two convolutions: tf_cnn_benchmarks' (the built-in "alexnet") has 64 and
// 192 filters and a padded first convolution; MXNet's (example/image-classification/symbols/alexnet.py,
// "alexnet_mxnet") has Krizhevsky's single-tower 96 and 256 and an unpadded one (224 -> 54, 5x5 after the last
// pool); MXNet's two LRN layers are left out (no such layer kind; zoo.hpp says what they would add).
struct AlexNetWidths {
  int64_t conv1, conv2, conv1_pad;
};

Model make_alexnet(const std::string& name, Shape input, int64_t classes, const AlexNetWidths& w) {
  ModelBuilder b(name, input, classes);
  int x = b.relu("relu1", b.conv("conv1", b.input(), w.conv1, 11, 4, w.conv1_pad, true));
  x = b.maxpool("pool1", x, 3, 2);
  x = b.relu("relu2", b.conv("conv2", x, w.conv2, 5, 1, 2, true));
  x = b.maxpool("pool2", x, 3, 2);
  x = b.relu("relu3", b.conv("conv3", x, 384, 3, 1, 1, true));
  x = b.relu("relu4", b.conv("conv4", x, 384, 3, 1, 1, true));
  x = b.relu("relu5", b.conv("conv5", x, 256, 3, 1, 1, true));
  x = b.maxpool("pool5", x, 3, 2);
  x = b.flatten("flatten", x);
  x = b.dropout("drop6", b.relu("relu6", b.fc("fc6", x, 4096)));
  x = b.dropout("drop7", b.relu("relu7", b.fc("fc7", x, 4096)));
  x = b.fc("fc8", x, b.classes());
  b.softmax_cross_entropy("loss", x);
  return b.build();
}

// VGG-16 and VGG-19 (configurations D and E of Simonyan & Zisserman 2015): 5 blocks of 3×3 convolutions (with
// bias; `convs` per block) and a 2×2 max pool; with_bn adds batch norm after each conv.
Model make_vgg(const std::string& name, Shape input, int64_t classes, bool with_bn, const int (&convs)[5]) {
  static const int64_t kWidths[5] = {64, 128, 256, 512, 512};
  ModelBuilder b(name, input, classes);
  int x = b.input();
  for (int block = 0; block < 5; ++block) {
    for (int i = 0; i < convs[block]; ++i) {
      const std::string suffix = fmt::format("{}_{}", block + 1, i + 1);
      x = b.conv("conv" + suffix, x, kWidths[block], 3, 1, 1, true);
      if (with_bn) x = b.batchnorm("bn" + suffix, x);
      x = b.relu("relu" + suffix, x);
    }
    x = b.maxpool(fmt::format("pool{}", block + 1), x, 2, 2);
  }
  x = b.flatten("flatten", x);
  x = b.dropout("drop6", b.relu("relu6", b.fc("fc6", x, 4096)));
  x = b.dropout("drop7", b.relu("relu7", b.fc("fc7", x, 4096)));
  x = b.fc("fc8", x, b.classes());
  b.softmax_cross_entropy("loss", x);
  return b.build();
}

struct BuiltinEntry {
  const char* name;
  Shape input;
  int64_t classes;
};

// Registry order is the order of the spec.
const BuiltinEntry kBuiltins[] = {
    {"lenet5", {1, 28, 28}, 10},        {"resnet18_cifar", {3, 32, 32}, 10}, {"vgg16_cifar", {3, 32, 32}, 10},
    {"alexnet", {3, 224, 224}, 1000},   {"vgg16", {3, 224, 224}, 1000},      {"resnet18", {3, 224, 224}, 1000},
    {"resnet50", {3, 224, 224}, 1000},  {"resnet152", {3, 224, 224}, 1000},  {"inception_v3", {3, 299, 299}, 1000},
    {"inception_bn", {3, 224, 224}, 1000}, {"alexnet_mxnet", {3, 224, 224}, 1000},
    {"resnet50_v1", {3, 224, 224}, 1000},  {"resnet152_v1", {3, 224, 224}, 1000},
    {"resnet34", {3, 224, 224}, 1000},     {"resnet101", {3, 224, 224}, 1000},
    {"resnet101_v1", {3, 224, 224}, 1000}, {"vgg19", {3, 224, 224}, 1000},
    {"googlenet", {3, 224, 224}, 1000},
    {"resnet50_v1_5", {3, 224, 224}, 1000},    {"resnext101_32x4d", {3, 224, 224}, 1000},
    {"se_resnext101_32x4d", {3, 224, 224}, 1000}, {"efficientnet_b0", {3, 224, 224}, 1000},
    {"efficientnet_b4", {3, 380, 380}, 1000},  {"efficientnet_widese_b0", {3, 224, 224}, 1000},
    {"efficientnet_widese_b4", {3, 380, 380}, 1000}, {"efficientnet_v2_s", {3, 300, 300}, 1000},
};

const BuiltinEntry& find_builtin(const std::string& name) {
  for (const BuiltinEntry& e : kBuiltins)
    if (name == e.name) return e;
  throw InputError("", "", fmt::format("a built-in model name, one of {} (got \"{}\")",
                                       fmt::join(builtin_model_names(), ", "), name));
}

Model build_builtin(const std::string& name, Shape input, int64_t classes) {
  using zoo_detail::ResNetSpec;
  if (name == "lenet5") return make_lenet5(name, input, classes);
  if (name == "alexnet") return make_alexnet(name, input, classes, AlexNetWidths{64, 192, 2});
  if (name == "alexnet_mxnet") return make_alexnet(name, input, classes, AlexNetWidths{96, 256, 0});
  static const int kVgg16[5] = {2, 2, 3, 3, 3};
  static const int kVgg19[5] = {2, 2, 4, 4, 4};
  if (name == "vgg16") return make_vgg(name, input, classes, false, kVgg16);
  if (name == "vgg16_cifar") return make_vgg(name, input, classes, true, kVgg16);
  if (name == "vgg19") return make_vgg(name, input, classes, false, kVgg19);
  if (name == "resnet18_cifar")
    return zoo_detail::make_resnet(name, input, classes, ResNetSpec{false, true, {2, 2, 2, 2}});
  if (name == "resnet18") return zoo_detail::make_resnet(name, input, classes, ResNetSpec{false, false, {2, 2, 2, 2}});
  if (name == "resnet50") return zoo_detail::make_resnet(name, input, classes, ResNetSpec{true, false, {3, 4, 6, 3}});
  if (name == "resnet152")
    return zoo_detail::make_resnet(name, input, classes, ResNetSpec{true, false, {3, 8, 36, 3}});
  if (name == "resnet50_v1")
    return zoo_detail::make_resnet(name, input, classes, ResNetSpec{true, false, {3, 4, 6, 3}, true});
  if (name == "resnet152_v1")
    return zoo_detail::make_resnet(name, input, classes, ResNetSpec{true, false, {3, 8, 36, 3}, true});
  if (name == "resnet34") return zoo_detail::make_resnet(name, input, classes, ResNetSpec{false, false, {3, 4, 6, 3}});
  if (name == "resnet101")
    return zoo_detail::make_resnet(name, input, classes, ResNetSpec{true, false, {3, 4, 23, 3}});
  if (name == "resnet101_v1")
    return zoo_detail::make_resnet(name, input, classes, ResNetSpec{true, false, {3, 4, 23, 3}, true});
  if (name == "resnet50_v1_5")
    return zoo_detail::make_resnet(name, input, classes, ResNetSpec{true, false, {3, 4, 6, 3}});
  if (name == "resnext101_32x4d" || name == "se_resnext101_32x4d") {
    ResNetSpec spec{true, false, {3, 4, 23, 3}, false, {128, 256, 512, 1024}, 2, 32};
    spec.se_reduction = name == "se_resnext101_32x4d" ? 16 : 0;
    return zoo_detail::make_resnet(name, input, classes, spec);
  }
  if (name == "efficientnet_b0" || name == "efficientnet_widese_b0")
    return zoo_detail::make_efficientnet_b(name, input, classes, 1.0, 1.0, 0.2, name == "efficientnet_widese_b0");
  if (name == "efficientnet_b4" || name == "efficientnet_widese_b4")
    return zoo_detail::make_efficientnet_b(name, input, classes, 1.4, 1.8, 0.4, name == "efficientnet_widese_b4");
  if (name == "efficientnet_v2_s") return zoo_detail::make_efficientnet_v2_s(name, input, classes);
  if (name == "inception_v3") return zoo_detail::make_inception_v3(name, input, classes);
  if (name == "inception_bn") return zoo_detail::make_inception_bn(name, input, classes);
  if (name == "googlenet") return zoo_detail::make_googlenet(name, input, classes);
  ST_ASSERT(false, "built-in model without a builder: " + name);
}

}  // namespace

std::vector<std::string> builtin_model_names() {
  std::vector<std::string> names;
  for (const BuiltinEntry& e : kBuiltins) names.emplace_back(e.name);
  return names;
}

bool is_builtin_model(const std::string& name) {
  for (const BuiltinEntry& e : kBuiltins)
    if (name == e.name) return true;
  return false;
}

std::optional<std::string> builtin_model_spelled(const std::string& spelling) {
  const std::string want = bare_spelling(spelling);
  for (const BuiltinEntry& e : kBuiltins)
    if (bare_spelling(e.name) == want) return std::string(e.name);
  // Other names of the same networks: tf_cnn_benchmarks' --model vocabulary (models/model_config.py) and the
  // paper's name of GoogLeNet.
  static const std::pair<const char*, const char*> kAliases[] = {{"inception3", "inception_v3"},
                                                                 {"inceptionv1", "googlenet"}};
  for (const auto& [alias, name] : kAliases)
    if (want == alias) return std::string(name);
  return std::nullopt;
}

Shape builtin_model_input(const std::string& name) { return find_builtin(name).input; }

int64_t builtin_model_classes(const std::string& name) { return find_builtin(name).classes; }

Model make_builtin_model(const std::string& name, std::optional<Shape> input, std::optional<int64_t> classes) {
  const BuiltinEntry& e = find_builtin(name);
  return build_builtin(name, input.value_or(e.input), classes.value_or(e.classes));
}

}  // namespace scaletwin::models
