// The synthetic source, per-epoch shuffling, sharding and batch assembly (see data.hpp).
#include "exec/data.hpp"

#include <cmath>
#include <cstring>
#include <random>

#include "core/error.hpp"
#include "exec/backend.hpp"

namespace scaletwin::exec {
namespace {

// Uniform integer in [0, bound) by rejection, so the result does not depend on the standard library.
uint64_t uniform_below(std::mt19937_64& rng, uint64_t bound) {
  const uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
  uint64_t x = rng();
  while (x >= limit) x = rng();
  return x % bound;
}

}  // namespace

Dataset make_synthetic(const models::Shape& shape, int64_t classes, int64_t count, uint64_t seed) {
  ST_ASSERT(classes > 0 && count >= 0 && shape.elements() > 0, "bad synthetic dataset");
  Dataset d;
  d.name = "synthetic";
  d.shape = shape;
  d.classes = classes;
  d.images.resize(static_cast<size_t>(count * shape.elements()));
  d.labels.resize(static_cast<size_t>(count));
  std::mt19937_64 rng(splitmix64(seed));
  for (float& x : d.images) {
    const double u1 = (static_cast<double>(rng() >> 11) + 0.5) * 0x1.0p-53;
    const double u2 = (static_cast<double>(rng() >> 11) + 0.5) * 0x1.0p-53;
    x = static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2));
  }
  for (float& y : d.labels) y = static_cast<float>(uniform_below(rng, static_cast<uint64_t>(classes)));
  return d;
}

std::vector<int64_t> epoch_permutation(int64_t count, uint64_t seed, int64_t epoch) {
  std::vector<int64_t> order(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) order[i] = i;
  std::mt19937_64 rng(splitmix64(seed ^ splitmix64(static_cast<uint64_t>(epoch))));
  for (int64_t i = count - 1; i > 0; --i) {
    const auto j = static_cast<int64_t>(uniform_below(rng, static_cast<uint64_t>(i + 1)));
    std::swap(order[i], order[j]);
  }
  return order;
}

ShardRange shard_range(int64_t count, int rank, int ranks) {
  ST_ASSERT(ranks > 0 && rank >= 0 && rank < ranks && count >= 0, "bad shard request");
  const int64_t base = count / ranks, extra = count % ranks;
  const int64_t begin = rank * base + std::min<int64_t>(rank, extra);
  return {begin, begin + base + (rank < extra ? 1 : 0)};
}

std::vector<int64_t> epoch_shard(int64_t count, uint64_t seed, int64_t epoch, int rank, int ranks) {
  const std::vector<int64_t> order = epoch_permutation(count, seed, epoch);
  const ShardRange r = shard_range(count, rank, ranks);
  return {order.begin() + r.begin, order.begin() + r.end};
}

int64_t batches_per_epoch(int64_t count, int ranks, int64_t batch_per_rank) {
  ST_ASSERT(ranks > 0 && batch_per_rank > 0, "bad batch request");
  return (count / ranks) / batch_per_rank;
}

void gather_batch(const Dataset& data, const int64_t* indices, int64_t n, float* images, float* labels) {
  const int64_t elements = data.shape.elements();
  for (int64_t k = 0; k < n; ++k) {
    const int64_t i = indices[k];
    ST_ASSERT(i >= 0 && i < data.count(), "sample index outside the dataset");
    std::memcpy(images + k * elements, data.image(i), static_cast<size_t>(elements) * sizeof(float));
    labels[k] = data.labels[i];
  }
}

}  // namespace scaletwin::exec
