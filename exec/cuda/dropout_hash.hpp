// The dropout mask of exec/backend.hpp (splitmix64 of (seed, index), as a uniform number in [0, 1), kept when at
// least `rate`), callable from device code. The host unit tests check it against exec::dropout_keep bit for bit.
#pragma once

#include <cstdint>

#ifdef __CUDACC__
#define ST_HOST_DEVICE __host__ __device__
#else
#define ST_HOST_DEVICE
#endif

namespace scaletwin::exec::cuda {

ST_HOST_DEVICE inline uint64_t splitmix64_hd(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

ST_HOST_DEVICE inline bool dropout_keep_hd(uint64_t seed, uint64_t index, double rate) {
  const double u = static_cast<double>(splitmix64_hd(seed * 0x100000001B3ull + index) >> 11) * 0x1.0p-53;
  return u >= rate;
}

}  // namespace scaletwin::exec::cuda
