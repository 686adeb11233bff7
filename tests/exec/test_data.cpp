// Data: the real Fashion-MNIST files, a CIFAR-10 reader on files the test writes, bad files, the synthetic
// source, and the deterministic shuffling and sharding across ranks.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "core/error.hpp"
#include "exec/data.hpp"

using namespace scaletwin;
using namespace scaletwin::exec;
namespace fs = std::filesystem;

namespace {

fs::path temp_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("scaletwin_test_data_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void write_bytes(const fs::path& file, const std::vector<uint8_t>& bytes) {
  std::ofstream out(file, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// A CIFAR-10 record: label, then pixel p of channel c = (label + c * 7 + p) % 256.
std::vector<uint8_t> cifar_records(const std::vector<uint8_t>& labels) {
  std::vector<uint8_t> bytes;
  for (uint8_t y : labels) {
    bytes.push_back(y);
    for (int c = 0; c < 3; ++c)
      for (int p = 0; p < 1024; ++p) bytes.push_back(static_cast<uint8_t>((y + c * 7 + p) % 256));
  }
  return bytes;
}

template <class F>
void require_input_error_naming(F&& f, const std::string& file) {
  try {
    f();
    FAIL("no InputError");
  } catch (const InputError& e) {
    CHECK(e.file() == file);
    CHECK(std::string(e.what()).find(file) != std::string::npos);
  }
}

}  // namespace

TEST_CASE("Fashion-MNIST: the real files hold 60000 / 10000 balanced, normalised samples") {
  const Dataset train = load_fashion_mnist(kFashionMnistDir, Split::kTrain);
  const Dataset test = load_fashion_mnist(kFashionMnistDir, Split::kTest);
  CHECK(train.count() == 60000);
  CHECK(test.count() == 10000);
  CHECK(train.shape == models::Shape{1, 28, 28});
  CHECK(train.images.size() == 60000u * 784u);
  std::vector<int64_t> per_class(10, 0);
  int64_t bad_labels = 0;
  for (const Dataset* d : {&train, &test})
    for (float y : d->labels) {
      if (y < 0.0f || y > 9.0f || y != std::floor(y)) {
        ++bad_labels;
      } else if (d == &train) {
        ++per_class[static_cast<size_t>(y)];
      }
    }
  CHECK(bad_labels == 0);
  for (int64_t n : per_class) CHECK(n == 6000);
  double sum = 0.0, sq = 0.0;
  for (float x : train.images) sum += x, sq += static_cast<double>(x) * x;
  const double mean = sum / static_cast<double>(train.images.size());
  CHECK(std::abs(mean) < 0.01);
  CHECK(std::sqrt(sq / static_cast<double>(train.images.size()) - mean * mean) == Approx(1.0).epsilon(0.01));
}

TEST_CASE("Fashion-MNIST: missing or malformed files are InputErrors naming the file") {
  const fs::path dir = temp_dir("idx");
  require_input_error_naming([&] { load_fashion_mnist(dir.string(), Split::kTrain); },
                             (dir / "train-images-idx3-ubyte.gz").string());
  // A labels file announcing 3 items but holding 2, next to real images.
  write_bytes(dir / "labels", {0, 0, 8, 1, 0, 0, 0, 3, 1, 2});
  require_input_error_naming(
      [&] {
        load_idx_pair(std::string(kFashionMnistDir) + "/t10k-images-idx3-ubyte.gz", (dir / "labels").string(), "x");
      },
      (dir / "labels").string());
  write_bytes(dir / "images", {1, 2, 3, 4, 5, 6, 7, 8});
  require_input_error_naming([&] { load_idx_pair((dir / "images").string(), (dir / "labels").string(), "x"); },
                             (dir / "images").string());
}

TEST_CASE("CIFAR-10: reads the binary batches the test writes, in CHW order, normalised per channel") {
  const fs::path dir = temp_dir("cifar");
  const std::vector<std::vector<uint8_t>> labels = {{3, 0}, {9}, {1}, {2, 2, 5}, {7}};
  for (int k = 1; k <= 5; ++k)
    write_bytes(dir / ("data_batch_" + std::to_string(k) + ".bin"), cifar_records(labels[k - 1]));
  write_bytes(dir / "test_batch.bin", cifar_records({4, 6}));
  const Dataset train = load_cifar10(dir.string(), Split::kTrain);
  const Dataset test = load_cifar10(dir.string(), Split::kTest);
  REQUIRE(train.count() == 8);
  REQUIRE(test.count() == 2);
  CHECK(train.shape == models::Shape{3, 32, 32});
  CHECK(train.labels == std::vector<float>{3, 0, 9, 1, 2, 2, 5, 7});
  const float mean[3] = {0.4914f, 0.4822f, 0.4465f}, dev[3] = {0.2470f, 0.2435f, 0.2616f};
  for (int64_t i = 0; i < train.count(); ++i) {
    const int y = static_cast<int>(train.labels[i]);
    for (int c = 0; c < 3; ++c)
      for (int p : {0, 5, 1023}) {
        const float raw = static_cast<float>((y + c * 7 + p) % 256) / 255.0f;
        CHECK(train.image(i)[c * 1024 + p] == Approx((raw - mean[c]) / dev[c]).epsilon(1e-6));
      }
  }
  // A truncated batch and a bad label are InputErrors naming the file.
  std::vector<uint8_t> bytes = cifar_records({1});
  bytes.pop_back();
  write_bytes(dir / "short.bin", bytes);
  require_input_error_naming([&] { load_cifar10_files({(dir / "short.bin").string()}, "x"); },
                             (dir / "short.bin").string());
  write_bytes(dir / "label.bin", cifar_records({10}));
  require_input_error_naming([&] { load_cifar10_files({(dir / "label.bin").string()}, "x"); },
                             (dir / "label.bin").string());
  require_input_error_naming([&] { load_cifar10_files({(dir / "none.bin").string()}, "x"); },
                             (dir / "none.bin").string());
  fs::remove_all(dir);
}

TEST_CASE("sharding covers every sample exactly once across ranks, every epoch") {
  for (int64_t count : {1, 7, 103, 1000}) {
    for (int ranks = 1; ranks <= 8; ++ranks) {
      for (int64_t epoch = 0; epoch < 3; ++epoch) {
        std::vector<int> seen(static_cast<size_t>(count), 0);
        int64_t smallest = count, largest = 0;
        for (int r = 0; r < ranks; ++r) {
          const std::vector<int64_t> shard = epoch_shard(count, 42, epoch, r, ranks);
          smallest = std::min<int64_t>(smallest, static_cast<int64_t>(shard.size()));
          largest = std::max<int64_t>(largest, static_cast<int64_t>(shard.size()));
          for (int64_t i : shard) ++seen[static_cast<size_t>(i)];
        }
        CHECK(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
        CHECK(largest - smallest <= 1);
      }
    }
  }
  CHECK(batches_per_epoch(1000, 3, 32) == 10);  // 333 samples on the smallest shard
}

TEST_CASE("shuffling is deterministic per (seed, epoch) and differs between epochs") {
  const auto a = epoch_permutation(500, 7, 0), b = epoch_permutation(500, 7, 0);
  const auto c = epoch_permutation(500, 7, 1), d = epoch_permutation(500, 8, 0);
  CHECK(a == b);
  CHECK(a != c);
  CHECK(a != d);
  CHECK(std::set<int64_t>(c.begin(), c.end()).size() == 500u);
}

TEST_CASE("synthetic data is reproducible and batches gather the right samples") {
  const Dataset s = make_synthetic({2, 3, 3}, 5, 40, 9);
  const Dataset t = make_synthetic({2, 3, 3}, 5, 40, 9);
  CHECK(s.images == t.images);
  CHECK(s.labels == t.labels);
  CHECK(std::set<float>(s.labels.begin(), s.labels.end()).size() == 5u);
  const int64_t idx[2] = {17, 3};
  std::vector<float> images(36), labels(2);
  gather_batch(s, idx, 2, images.data(), labels.data());
  CHECK(std::equal(images.begin(), images.begin() + 18, s.image(17)));
  CHECK(std::equal(images.begin() + 18, images.end(), s.image(3)));
  CHECK(labels[0] == s.labels[17]);
  CHECK(labels[1] == s.labels[3]);
}
