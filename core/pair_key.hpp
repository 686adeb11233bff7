// One 64-bit key for an ordered pair of non-negative ints (source and destination rank or vertex), for hash maps.
#pragma once

#include <cstdint>

namespace scaletwin {

inline uint64_t pair_key(int first, int second) {
  return (uint64_t{static_cast<uint32_t>(first)} << 32) | static_cast<uint32_t>(second);
}

}  // namespace scaletwin
