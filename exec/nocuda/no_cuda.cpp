// The CUDA entry points of exec/cuda_backend.hpp for a build without CUDA: no device is ever available, and asking
// for a CUDA backend or an NCCL communicator is a SystemError (exit 3). Compiled instead of exec/cuda/ when
// SCALETWIN_HAVE_CUDA is off (see exec/CMakeLists.txt).
#include "core/error.hpp"
#include "exec/cuda_backend.hpp"

namespace scaletwin::exec {

namespace {
constexpr const char* kWhy = "built without CUDA";
}

bool cuda_device_available(std::string* why) {
  if (why != nullptr) *why = kWhy;
  return false;
}

int cuda_device_count() { return 0; }

std::unique_ptr<Backend> make_cuda_backend(int device) { return make_cuda_backend(device, CudaOptions{}); }

std::unique_ptr<Backend> make_cuda_backend(int, const CudaOptions&) {
  throw SystemError(std::string("no CUDA device was found: scaletwin was ") + kWhy);
}

void check_cuda_memory(const models::Model&, int64_t, int, const CudaOptions&) {
  throw SystemError(std::string("no CUDA device was found: scaletwin was ") + kWhy);
}

std::unique_ptr<DeviceCommunicator> make_nccl_communicator(Backend&, int, int, const BroadcastFromRoot&) {
  throw SystemError(std::string("NCCL is unavailable: scaletwin was ") + kWhy);
}

}  // namespace scaletwin::exec
