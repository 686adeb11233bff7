// The CUDA executor's entry points, free of CUDA headers so that any part of scaletwin can include them.
//
// When scaletwin is built with CUDA (SCALETWIN_HAVE_CUDA, exec/cuda/), these are implemented there: a Backend on
// cuDNN 9 and cuBLAS, and a DeviceCommunicator that runs plan::Schedules over NCCL. The scaletwin binary reaches
// them through the module libscaletwin-cuda.so, loaded on first use (exec/cuda_module.hpp). Without CUDA,
// cuda_device_available() is false ("built without CUDA") and the factories throw SystemError.
// `scaletwin run --device cuda` asks cuda_device_available() first and exits 3 with "no CUDA device was found".
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "exec/backend.hpp"
#include "plan/schedule.hpp"

namespace scaletwin::exec {

// True when CUDA is built in and at least one device can be used; otherwise false, and *why (if given) says why
// ("built without CUDA", "cudaGetDeviceCount: no CUDA-capable device is detected", ...).
bool cuda_device_available(std::string* why = nullptr);
// The number of usable CUDA devices (0 without CUDA or without a device).
int cuda_device_count();

// Precision of the convolution and matrix arithmetic. Buffers stay fp32 either way (the Backend contract: weights,
// activations, gradients and the optimizer's state; batch norm, pooling and the loss compute in fp32).
//   kFp32  computes in fp32 (cuDNN may use TF32 tensor cores on Ampere and later, as PyTorch does by default for
//          convolutions; CudaOptions::allow_tf32 = false forbids it).
//   kBf16, kFp16  mixed precision as PyTorch's autocast does it: each convolution and fully connected GEMM casts
//          its operands (input or output gradient, and the fp32 master weights) to bf16 / fp16, runs on the tensor
//          cores with fp32 accumulation, and widens its result back to fp32. fp16 needs loss scaling against
//          underflow and overflow (exec/loss_scaler.hpp, applied by the trainer); bf16 has fp32's range.
enum class CudaPrecision { kFp32, kBf16, kFp16 };
inline const char* cuda_precision_name(CudaPrecision p) {
  return p == CudaPrecision::kBf16 ? "bf16" : p == CudaPrecision::kFp16 ? "fp16" : "fp32";
}

struct CudaOptions {
  CudaPrecision precision = CudaPrecision::kFp32;
  bool allow_tf32 = true;                 // convolutions may use TF32 tensor cores (cuBLAS GEMMs stay fp32)
  bool benchmark_algorithms = false;      // cudnnFind* (timed) instead of cudnnGet*_v7 (heuristics)
  int64_t workspace_limit_bytes = 0;      // per convolution; 0 = the policy of exec/cuda/host_plan.hpp
};

// "bf16 mixed precision", "fp32 with TF32 convolutions" or "fp32": what a backend with these options computes in.
inline std::string cuda_arithmetic(const CudaOptions& options) {
  if (options.precision != CudaPrecision::kFp32)
    return std::string(cuda_precision_name(options.precision)) + " mixed precision";
  return options.allow_tf32 ? "fp32 with TF32 convolutions" : "fp32";
}

// A Backend on device `device` (SystemError when CUDA is absent or the device cannot be used).
std::unique_ptr<Backend> make_cuda_backend(int device);
std::unique_ptr<Backend> make_cuda_backend(int device, const CudaOptions& options);

// Refuses, before anything is allocated, a batch whose training would not fit the free memory of `device`: an
// InputError (exit 2) that says where the memory goes and the largest batch that fits (exec/cuda/memory_plan.hpp).
// SystemError when CUDA is absent.
// Mixed precision adds the half-precision copies of the largest convolution or GEMM's operands.
void check_cuda_memory(const models::Model& model, int64_t batch, int device, const CudaOptions& options = {});

// Collectives on device buffers of one CUDA backend, over NCCL. start() enqueues the whole schedule on the
// communicator's own stream after the work already queued on the backend's stream (so a bucket's all-reduce
// overlaps the rest of the backward pass) and returns at once; wait() makes the backend's stream wait for it.
class DeviceCommunicator {
 public:
  virtual ~DeviceCommunicator() = default;
  virtual int rank() const = 0;
  virtual int ranks() const = 0;
  // Runs this rank's part of `schedule` in place on buffer[0, schedule.elements) (fp32). The schedule must stay
  // alive until the collective is waited for. Returns a handle for wait().
  virtual uint64_t start(const plan::Schedule& schedule, float* buffer) = 0;
  // The named baseline: ncclAllReduce(sum) in place on buffer[0, count), on the communicator's stream.
  virtual uint64_t start_nccl_allreduce(float* buffer, int64_t count) = 0;
  // True once the collective has completed on the device (a non-blocking event query); the host may then read
  // or restage the buffer. It does not release the handle: wait() still must be called.
  virtual bool done(uint64_t handle) = 0;
  virtual void wait(uint64_t handle) = 0;
  virtual void wait_all() = 0;
  // Once done(handle) is true and before wait(handle): when the collective started and ended on the device, on the
  // host's steady clock (as Backend::mark_time_s); false where the communicator cannot tell, and the caller then
  // times it on the host (enqueued to seen done, which on a GPU counts the compute queued before it).
  virtual bool span_s(uint64_t /*handle*/, double* /*start_s*/, double* /*end_s*/) { return false; }
};

// Bootstraps an NCCL communicator of `ranks` processes, this one being `rank`, on the device of `backend` (a CUDA
// backend). broadcast_from_root(bytes, size) must copy rank 0's `size` bytes into every rank's `bytes` (an
// MPI_Bcast on the job's communicator: see exec/cuda/nccl_mpi.hpp); with ranks == 1 it is never called.
using BroadcastFromRoot = std::function<void(void* bytes, size_t size)>;
std::unique_ptr<DeviceCommunicator> make_nccl_communicator(Backend& backend, int rank, int ranks,
                                                           const BroadcastFromRoot& broadcast_from_root);

}  // namespace scaletwin::exec
