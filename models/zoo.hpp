// The built-in models of the spec (../shared/spec.md, "Built-in names") and those beyond it (inception_bn,
// alexnet_mxnet, the v1 ResNets, resnet34, resnet101, vgg19, googlenet), built with ModelBuilder.
//
//   lenet5          1×28×28, 10 classes: conv 6 5×5 pad 2, relu, maxpool 2, conv 16 5×5, relu, maxpool 2,
//                   fc 120, relu, fc 84, relu, fc 10 (61,706 parameters; the peer's LeNet5 in
//                   shared/peers/torch_models.py)
//   resnet18_cifar  3×32×32, 10: the usual CIFAR ResNet-18 of the peer (3×3 stem, no max pool, 4 stages of 2 basic
//                   blocks, 64..512 channels, 1×1 projection shortcuts with batch norm; 11,173,962 parameters)
//   vgg16_cifar     3×32×32, 10: the 13 3×3 convolutions of VGG-16, each with bias, batch norm and relu, 5 max
//                   pools, then the 4096-wide head 512→4096→4096→classes with relu and dropout 0.5 (the CIFAR VGG
//                   of HAN et al.'s hybrid-parallel experiments, whose point is a large fully connected part)
//   alexnet         3×224×224, 1000: the single-tower AlexNet of tf_cnn_benchmarks: conv 64 11×11/4, maxpool 3/2,
//                   conv 192 5×5, maxpool 3/2, conv 384, 384, 256 3×3, maxpool 3/2, fc 4096, 4096 with dropout,
//                   fc classes; convolutions have biases, no LRN. tf_cnn_benchmarks feeds 227×227 images to a
//                   VALID 11×11/4 convolution; we pad a 224 image by 2, which gives the same 55×55 output.
//   alexnet_mxnet   3×224×224, 1000: MXNet's AlexNet (example/image-classification/symbols/alexnet.py, what
//                   MXNet's published "alexnet" runs trained): conv 96 11×11/4 unpadded (54×54), maxpool 3/2,
//                   conv 256 5×5, maxpool 3/2, conv 384, 384, 256 3×3, maxpool 3/2 (5×5), fc 4096, 4096 with
//                   dropout, fc classes (50,844,008 parameters). MXNet's two LRN layers are left out (no such layer
//                   kind): six passes over their 1.8 MB of activations per image, about 3% of a K80 iteration.
//                   stacks/mxnet.json maps a measured MXNet run's "alexnet" to it.
//   vgg16, vgg19    3×224×224, 1000: torchvision's vgg16 and vgg19 (configurations D and E: 13 and 16 3×3
//                   convolutions with bias, no batch norm; 138,357,544 and 143,667,240 parameters)
//   resnet18, resnet34, resnet50, resnet101, resnet152   3×224×224, 1000: torchvision's (basic blocks 2-2-2-2 and
//                   3-4-6-3; bottlenecks 3-4-6-3, 3-4-23-3, 3-8-36-3), v1.5 (stride in the 3×3 of a bottleneck)
//   resnet50_v1, resnet101_v1, resnet152_v1   the same layers as v1 (He et al. 2015's release; tf_cnn_benchmarks
//                   2017): a bottleneck's stride in its first 1×1 convolution, every 3×3 at stride 1
//                   (zoo_resnet.cpp). stacks/tensorflow.json maps a measured TensorFlow run's "resnet50",
//                   "resnet101" and "resnet152" to them.
//   inception_bn    3×224×224, 1000: BN-Inception as MXNet's symbols/inception-bn.py (zoo_inception.cpp)
//   googlenet       3×224×224, 1000: GoogLeNet (Inception-v1, Szegedy et al. 2015, Table 1) as Caffe's
//                   bvlc_googlenet and tf_cnn_benchmarks' googlenet train it: convolutions with bias and ReLU, no
//                   batch norm; max pools 3×3/2 padded by 1 (56, 28, 14, 7: the sizes of Caffe's ceil mode and of
//                   TensorFlow's SAME, with the padding on both sides as cuDNN pools); nine Inception modules 3a-5b;
//                   global average pool, dropout 0.4, fc classes (6,998,552 parameters). The two auxiliary
//                   classifiers and Caffe's two LRN layers are left out (tf_cnn_benchmarks has neither).
//   inception_v3    3×299×299, 1000: torchvision's, auxiliary head excluded (convolutions without bias, batch
//                   norm with eps 0.001, count_include_pad average pools, dropout before the classifier)
// Every model ends with fc → softmax_cross_entropy. An input override changes the spatial sizes all the way
// down (the first fully connected layer of lenet5, alexnet and the VGGs takes whatever the last pool gives; there
// is no adaptive pooling), a classes override changes the classifier.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "models/model.hpp"

namespace scaletwin::models {

std::vector<std::string> builtin_model_names();
bool is_builtin_model(const std::string& name);
// The built-in model a table's spelling names ("ResNet-152", "Inception-v3", "VGG_16"): the one whose name equals
// it with case, '-', '_', '.' and spaces ignored, or that the benchmarks' own names mean (tf_cnn_benchmarks'
// --model "inception3" is inception_v3; "Inception-v1" is googlenet); nullopt when none does.
std::optional<std::string> builtin_model_spelled(const std::string& spelling);

// The default input shape and number of classes of a built-in model (InputError for an unknown name).
Shape builtin_model_input(const std::string& name);
int64_t builtin_model_classes(const std::string& name);

// Builds a built-in model, optionally with another input shape and number of classes. An unknown name is an
// InputError listing the known ones; an input too small for the model is an InputError naming the layer.
Model make_builtin_model(const std::string& name, std::optional<Shape> input = std::nullopt,
                         std::optional<int64_t> classes = std::nullopt);

}  // namespace scaletwin::models
