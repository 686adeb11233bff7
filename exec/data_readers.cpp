// Readers of the real datasets: Fashion-MNIST's gzipped IDX files (zlib) and CIFAR-10's binary batches
// (see data.hpp for the formats and the normalisation). Every failure is an InputError naming the file.
#include <fmt/format.h>
#include <zlib.h>

#include <array>
#include <filesystem>
#include <iterator>

#include "core/error.hpp"
#include "core/files.hpp"
#include "exec/data.hpp"

namespace scaletwin::exec {
namespace {

// The whole file, decompressed when it is gzipped (zlib passes plain files through).
std::vector<uint8_t> read_gz(const std::string& file) {
  if (!std::filesystem::is_regular_file(file)) throw InputError(file, "", "an existing readable file");
  gzFile gz = gzopen(file.c_str(), "rb");
  if (gz == nullptr) throw InputError(file, "", "a readable file");
  std::vector<uint8_t> bytes;
  std::array<uint8_t, 1 << 16> chunk{};
  int got = 0;
  // Decompressed, a dataset file is tens of megabytes (Fashion-MNIST's training images: 47 MB); a stream that grows
  // past 1 GiB is refused instead of filling the memory.
  constexpr size_t kMostBytes = size_t{1} << 30;
  while ((got = gzread(gz, chunk.data(), static_cast<unsigned>(chunk.size()))) > 0) {
    bytes.insert(bytes.end(), chunk.begin(), chunk.begin() + got);
    if (bytes.size() > kMostBytes) {
      gzclose(gz);
      throw InputError(file, "", "a dataset file of at most 1 GiB once decompressed");
    }
  }
  const bool failed = got < 0;
  gzclose(gz);
  if (failed) throw InputError(file, "", "a valid gzip stream");
  return bytes;
}

uint32_t big_endian_u32(const std::vector<uint8_t>& b, size_t at) {
  return (uint32_t{b[at]} << 24) | (uint32_t{b[at + 1]} << 16) | (uint32_t{b[at + 2]} << 8) | uint32_t{b[at + 3]};
}

// An IDX file of unsigned bytes with `dims` dimensions: returns the dimensions, checks the size.
std::vector<int64_t> idx_header(const std::vector<uint8_t>& b, int dims, const std::string& file) {
  const std::string what =
      fmt::format("an IDX file of unsigned bytes with {} dimensions (magic 0x{:08x})", dims, 0x800 + dims);
  if (b.size() < 4 + 4 * static_cast<size_t>(dims) || big_endian_u32(b, 0) != 0x800u + static_cast<uint32_t>(dims))
    throw InputError(file, "", what);
  std::vector<int64_t> sizes;
  int64_t total = 1;
  for (int d = 0; d < dims; ++d) {
    sizes.push_back(big_endian_u32(b, 4 + 4 * d));
    total *= sizes.back();
  }
  const size_t header = 4 + 4 * static_cast<size_t>(dims);
  if (b.size() != header + static_cast<size_t>(total))
    throw InputError(file, "",
                     fmt::format("{} + {} data bytes as the header announces, found {}", header, total, b.size()));
  return sizes;
}

constexpr float kFashionMean = 0.2860f, kFashionStd = 0.3530f;
constexpr std::array<float, 3> kCifarMean{0.4914f, 0.4822f, 0.4465f}, kCifarStd{0.2470f, 0.2435f, 0.2616f};
constexpr int64_t kCifarPixels = 32 * 32;
constexpr int64_t kCifarRecord = 1 + 3 * kCifarPixels;

}  // namespace

Dataset load_idx_pair(const std::string& images_file, const std::string& labels_file, const std::string& name) {
  const std::vector<uint8_t> images = read_gz(images_file);
  const std::vector<uint8_t> labels = read_gz(labels_file);
  const std::vector<int64_t> image_dims = idx_header(images, 3, images_file);
  const std::vector<int64_t> label_dims = idx_header(labels, 1, labels_file);
  if (label_dims[0] != image_dims[0])
    throw InputError(labels_file, "", fmt::format("{} labels, one per image of {}", image_dims[0], images_file));
  Dataset d;
  d.name = name;
  d.shape = {1, image_dims[1], image_dims[2]};
  d.classes = 10;
  const size_t pixels = images.size() - 16;
  d.images.resize(pixels);
  for (size_t i = 0; i < pixels; ++i) d.images[i] = (images[16 + i] / 255.0f - kFashionMean) / kFashionStd;
  d.labels.resize(static_cast<size_t>(label_dims[0]));
  for (size_t i = 0; i < d.labels.size(); ++i) {
    const uint8_t y = labels[8 + i];
    if (y >= d.classes) throw InputError(labels_file, "", fmt::format("labels 0..9, found {} at item {}", y, i));
    d.labels[i] = y;
  }
  return d;
}

Dataset load_fashion_mnist(const std::string& dir, Split split) {
  const std::string prefix = dir + (split == Split::kTrain ? "/train" : "/t10k");
  return load_idx_pair(prefix + "-images-idx3-ubyte.gz", prefix + "-labels-idx1-ubyte.gz",
                       split == Split::kTrain ? "fashion-mnist train" : "fashion-mnist test");
}

Dataset load_cifar10_files(const std::vector<std::string>& files, const std::string& name) {
  Dataset d;
  d.name = name;
  d.shape = {3, 32, 32};
  d.classes = 10;
  for (const std::string& file : files) {
    // A regular file of at most 64 MiB (a batch file is 30,730,000 bytes): a device or a FIFO is refused.
    const std::string bytes = read_input_file(file, "CIFAR-10 binary batch");
    const std::vector<uint8_t> b(bytes.begin(), bytes.end());
    if (b.empty() || b.size() % kCifarRecord != 0)
      throw InputError(
          file, "", fmt::format("records of {} bytes (1 label + 3072 pixels), found {} bytes", kCifarRecord, b.size()));
    for (size_t at = 0; at < b.size(); at += kCifarRecord) {
      if (b[at] >= 10)
        throw InputError(file, "", fmt::format("labels 0..9, found {} in record {}", b[at], at / kCifarRecord));
      d.labels.push_back(b[at]);
      for (int64_t c = 0; c < 3; ++c)
        for (int64_t p = 0; p < kCifarPixels; ++p)
          d.images.push_back((b[at + 1 + c * kCifarPixels + p] / 255.0f - kCifarMean[c]) / kCifarStd[c]);
    }
  }
  return d;
}

Dataset load_cifar10(const std::string& dir, Split split) {
  std::vector<std::string> files;
  if (split == Split::kTrain) {
    for (int k = 1; k <= 5; ++k) files.push_back(fmt::format("{}/data_batch_{}.bin", dir, k));
  } else {
    files.push_back(dir + "/test_batch.bin");
  }
  return load_cifar10_files(files, split == Split::kTrain ? "cifar10 train" : "cifar10 test");
}

}  // namespace scaletwin::exec
