// Element types, the vectorised reduction and the reusable staging buffers of the schedule interpreter.
//
// The interpreter moves raw bytes and adds element-wise; ElementType says how (fp32 for training, fp64 and int32
// for exact tests). reduce_add works in fixed blocks that the compiler turns into SIMD code at -O2, and never
// reassociates: dst[i] + src[i] per element, so results are bit-identical to a scalar loop and to MPI_SUM.
// StagingPool hands out 64-byte aligned buffers for receives that are reduced on arrival; after the first
// collectives of a kind it allocates nothing (buffers are released back and reused).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "exec/comm/mpi.hpp"

namespace scaletwin::exec {

enum class ElementType { kFloat32, kFloat64, kInt32 };

size_t element_size(ElementType type);
const char* element_type_name(ElementType type);
MPI_Datatype mpi_datatype(ElementType type);

template <class T>
constexpr ElementType element_type_of();
template <>
constexpr ElementType element_type_of<float>() { return ElementType::kFloat32; }
template <>
constexpr ElementType element_type_of<double>() { return ElementType::kFloat64; }
template <>
constexpr ElementType element_type_of<int32_t>() { return ElementType::kInt32; }

// dst[i] += src[i] for i < count (int32 wraps around like MPI's int sum instead of overflowing).
void reduce_add(std::byte* dst, const std::byte* src, int64_t count, ElementType type);

class StagingPool {
 public:
  // Returns the index of a free buffer of at least `bytes` bytes (the smallest fitting one; a new one if none).
  int acquire(int64_t bytes);
  void release(int index);
  std::byte* data(int index) { return buffers_[static_cast<size_t>(index)].data.get(); }
  int64_t capacity_bytes() const { return capacity_bytes_; }
  int buffers() const { return static_cast<int>(buffers_.size()); }

 private:
  struct FreeDeleter {
    void operator()(std::byte* p) const;
  };
  struct Buffer {
    std::unique_ptr<std::byte, FreeDeleter> data;
    int64_t bytes = 0;
    bool in_use = false;
  };
  std::vector<Buffer> buffers_;
  int64_t capacity_bytes_ = 0;
};

}  // namespace scaletwin::exec
