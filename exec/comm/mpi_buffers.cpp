// Element types, vectorised reduction, staging buffers (see mpi_buffers.hpp).
#include "exec/comm/mpi_buffers.hpp"

#include <cstdlib>
#include <cstring>
#include <new>

#include "core/error.hpp"

namespace scaletwin::exec {

namespace {

// Blocks of a fixed element count: the inner loop has a constant trip count, which g++ vectorises even with the
// cheap cost model of -O2. Each element is one addition, in the same order as a scalar loop.
template <class T>
void add_blocks(T* __restrict dst, const T* __restrict src, int64_t count) {
  constexpr int64_t kBlock = 256 / static_cast<int64_t>(sizeof(T));
  int64_t i = 0;
  for (; i + kBlock <= count; i += kBlock) {
    T* __restrict d = dst + i;
    const T* __restrict s = src + i;
    for (int64_t j = 0; j < kBlock; ++j) d[j] += s[j];
  }
  for (; i < count; ++i) dst[i] += src[i];
}

template <class T>
void add_bytes(std::byte* dst, const std::byte* src, int64_t count) {
  // The buffers hold T objects (the caller's array, or staging filled by MPI from the same type): std::launder
  // is not needed for trivially copyable element types.
  add_blocks(reinterpret_cast<T*>(dst), reinterpret_cast<const T*>(src), count);
}

}  // namespace

size_t element_size(ElementType type) {
  switch (type) {
    case ElementType::kFloat32: return 4;
    case ElementType::kFloat64: return 8;
    case ElementType::kInt32: return 4;
  }
  return 0;
}

const char* element_type_name(ElementType type) {
  switch (type) {
    case ElementType::kFloat32: return "float32";
    case ElementType::kFloat64: return "float64";
    case ElementType::kInt32: return "int32";
  }
  return "?";
}

MPI_Datatype mpi_datatype(ElementType type) {
  switch (type) {
    case ElementType::kFloat32: return MPI_FLOAT;
    case ElementType::kFloat64: return MPI_DOUBLE;
    case ElementType::kInt32: return MPI_INT32_T;
  }
  return MPI_DATATYPE_NULL;
}

void reduce_add(std::byte* dst, const std::byte* src, int64_t count, ElementType type) {
  switch (type) {
    case ElementType::kFloat32: add_bytes<float>(dst, src, count); return;
    case ElementType::kFloat64: add_bytes<double>(dst, src, count); return;
    case ElementType::kInt32: add_bytes<uint32_t>(dst, src, count); return;  // wrap-around, no signed overflow
  }
}

void StagingPool::FreeDeleter::operator()(std::byte* p) const { std::free(p); }

int StagingPool::acquire(int64_t bytes) {
  int best = -1;
  for (size_t i = 0; i < buffers_.size(); ++i) {
    const Buffer& b = buffers_[i];
    if (b.in_use || b.bytes < bytes) continue;
    if (best < 0 || b.bytes < buffers_[static_cast<size_t>(best)].bytes) best = static_cast<int>(i);
  }
  if (best < 0) {
    constexpr int64_t kAlign = 64;
    const int64_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
    auto* raw = static_cast<std::byte*>(std::aligned_alloc(kAlign, static_cast<size_t>(rounded)));
    if (raw == nullptr) throw SystemError("out of memory for a staging buffer of " + std::to_string(bytes) + " B");
    buffers_.push_back(Buffer{std::unique_ptr<std::byte, FreeDeleter>(raw), rounded, false});
    capacity_bytes_ += rounded;
    best = static_cast<int>(buffers_.size()) - 1;
  }
  buffers_[static_cast<size_t>(best)].in_use = true;
  return best;
}

void StagingPool::release(int index) {
  ST_ASSERT(index >= 0 && static_cast<size_t>(index) < buffers_.size() && buffers_[static_cast<size_t>(index)].in_use,
            "staging buffer released twice or never acquired");
  buffers_[static_cast<size_t>(index)].in_use = false;
}

}  // namespace scaletwin::exec
