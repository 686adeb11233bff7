// Internal to models/: the builders of each family of built-in models, shared by zoo.cpp (the registry),
// zoo_resnet.cpp and zoo_inception.cpp. Not part of the public API; use zoo.hpp.
#pragma once

#include <string>

#include "models/builder.hpp"

namespace scaletwin::models::zoo_detail {

// ResNets: `bottleneck` selects torchvision's Bottleneck (v1.5) over BasicBlock; `cifar_stem` the 3×3 stem without
// max pool of the CIFAR variant. blocks: per stage.
struct ResNetSpec {
  bool bottleneck = false;
  bool cifar_stem = false;
  int blocks[4] = {2, 2, 2, 2};
  // v1 (He et al. 2015, tf_cnn_benchmarks 2017): a bottleneck strides in its first 1×1, not in its 3×3.
  bool stride_in_first_1x1 = false;
  // ResNeXt (Xie et al. 2017) as NVIDIA's DeepLearningExamples defines it: a bottleneck's inner width per stage,
  // the ratio of its output channels to that width, and the 3×3's groups (ResNet: 64..512, 4, 1; ResNeXt-101
  // 32x4d: 128..1024, 2, 32).
  int64_t widths[4] = {64, 128, 256, 512};
  int64_t expansion = 4;
  int64_t groups = 1;
  // Squeeze-and-excitation (Hu et al. 2018) on each bottleneck's output before the residual sum, squeezing C
  // channels to C / se_reduction (0: none): global average pool, fc, relu, fc, sigmoid, channel scale.
  int64_t se_reduction = 0;
};
Model make_resnet(const std::string& name, Shape input, int64_t classes, const ResNetSpec& spec);

// EfficientNet B0-B7 and EfficientNetV2-S (zoo_efficientnet.cpp). wide_se: DeepLearningExamples' WideSE variant.
Model make_efficientnet_b(const std::string& name, Shape input, int64_t classes, double width_mult,
                          double depth_mult, double dropout, bool wide_se);
Model make_efficientnet_v2_s(const std::string& name, Shape input, int64_t classes);

Model make_inception_v3(const std::string& name, Shape input, int64_t classes);
Model make_inception_bn(const std::string& name, Shape input, int64_t classes);
Model make_googlenet(const std::string& name, Shape input, int64_t classes);

// conv (with a bias only where p.bias: conv_params gives none) → batchnorm(eps) → relu, named <prefix>.conv / .bn /
// .relu; returns the relu.
int conv_bn_relu(ModelBuilder& b, const std::string& prefix, int from, const ConvParams& p, double bn_eps = 1e-5);
ConvParams conv_params(int64_t out_channels, int64_t kernel_h, int64_t kernel_w, int64_t stride = 1,
                       int64_t pad_h = 0, int64_t pad_w = 0);

}  // namespace scaletwin::models::zoo_detail
