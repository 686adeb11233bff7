// The error reporting behind the check macros of cuda_check.hpp.
#include "exec/cuda/cuda_check.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <fmt/format.h>
#include <nccl.h>
#include <unistd.h>

#include <array>

#include "core/error.hpp"

namespace scaletwin::exec::cuda {

void fail_call(const char* library, const std::string& message, const char* expr, const char* file, int line) {
  std::array<char, 256> host{};
  if (gethostname(host.data(), host.size() - 1) != 0) host[0] = '\0';
  int device = -1;
  if (cudaGetDevice(&device) != cudaSuccess) device = -1;
  throw SystemError(fmt::format("{} error on {} (device {}) at {}:{}: {}: {}", library, host.data(), device, file,
                                line, expr, message));
}

const char* cuda_message(int status) { return cudaGetErrorString(static_cast<cudaError_t>(status)); }
const char* cudnn_message(int status) { return cudnnGetErrorString(static_cast<cudnnStatus_t>(status)); }
std::string nccl_message(int status) {
  std::string message = ncclGetErrorString(static_cast<ncclResult_t>(status));
  const char* last = ncclGetLastError(nullptr);  // NCCL's own reason ("unhandled system error" says little)
  if (last != nullptr && *last != '\0') message += fmt::format(" ({})", last);
  return message;
}
const char* cublas_message(int status) { return cublasGetStatusString(static_cast<cublasStatus_t>(status)); }

}  // namespace scaletwin::exec::cuda
