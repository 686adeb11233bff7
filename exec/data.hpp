// Training data for the executor: datasets held in memory as normalised floats, their readers, a synthetic
// source, and the deterministic per-epoch shuffling and sharding across ranks.
//
// Readers (bad or missing files throw InputError naming the file and what was expected):
//   - Fashion-MNIST: the gzipped IDX files of Debian's dataset-fashion-mnist (train-images-idx3-ubyte.gz,
//     train-labels-idx1-ubyte.gz, t10k-…), 28×28×1, 10 classes; pixels x/255 normalised with the training set's
//     mean 0.2860 and standard deviation 0.3530.
//   - CIFAR-10 binary: data_batch_1..5.bin (train) and test_batch.bin (test), records of 1 label byte and
//     3072 pixel bytes (1024 red, 1024 green, 1024 blue: already CHW); per-channel means (0.4914, 0.4822,
//     0.4465) and deviations (0.2470, 0.2435, 0.2616).
//   - Synthetic: reproducible normal pixels and uniform labels from a seed, for throughput runs.
// Shuffling and sharding: every epoch is a permutation of the samples drawn from (seed, epoch) by a Fisher–Yates
// shuffle on std::mt19937_64 (specified by the standard, so identical on every platform); rank r of P takes the
// r-th of P contiguous pieces of it (sizes differ by at most one), so every sample is seen exactly once per epoch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/model.hpp"

namespace scaletwin::exec {

struct Dataset {
  std::string name;     // "fashion-mnist train"
  models::Shape shape;  // per sample
  int64_t classes = 0;
  std::vector<float> images;  // count() × shape.elements(), NCHW, normalised
  std::vector<float> labels;  // class indices as floats (the Backend's label convention)

  int64_t count() const { return static_cast<int64_t>(labels.size()); }
  const float* image(int64_t i) const { return images.data() + i * shape.elements(); }
};

enum class Split { kTrain, kTest };

inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

Dataset load_fashion_mnist(const std::string& dir, Split split);
// Reads one IDX image file and its label file (gzipped or not: zlib reads both).
Dataset load_idx_pair(const std::string& images_file, const std::string& labels_file, const std::string& name);
Dataset load_cifar10(const std::string& dir, Split split);
Dataset load_cifar10_files(const std::vector<std::string>& files, const std::string& name);
Dataset make_synthetic(const models::Shape& shape, int64_t classes, int64_t count, uint64_t seed);

std::vector<int64_t> epoch_permutation(int64_t count, uint64_t seed, int64_t epoch);

struct ShardRange {
  int64_t begin = 0, end = 0;  // positions [begin, end) of the epoch's permutation
  int64_t size() const { return end - begin; }
};
ShardRange shard_range(int64_t count, int rank, int ranks);
// The sample indices rank `rank` of `ranks` visits in this epoch, in order.
std::vector<int64_t> epoch_shard(int64_t count, uint64_t seed, int64_t epoch, int rank, int ranks);
// Full batches per epoch that every rank can take (the smallest shard decides; the rest of an epoch is skipped).
int64_t batches_per_epoch(int64_t count, int ranks, int64_t batch_per_rank);

// Copies samples indices[0..n) into host arrays (n × image elements, and n labels).
void gather_batch(const Dataset& data, const int64_t* indices, int64_t n, float* images, float* labels);

}  // namespace scaletwin::exec
