// The entry point of libscaletwin-cuda.so (exec/cuda_module.hpp): the table of the CUDA backend's functions.
#include "exec/cuda_module.hpp"

namespace {

std::unique_ptr<scaletwin::exec::Backend> make_backend(int device, const scaletwin::exec::CudaOptions& options) {
  return scaletwin::exec::make_cuda_backend(device, options);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const scaletwin::exec::CudaModuleApi* scaletwin_cuda_module_api() {
  using namespace scaletwin::exec;
  static const CudaModuleApi api = {kCudaModuleVersion, &cuda_device_available, &cuda_device_count, &make_backend,
                                    &check_cuda_memory, &make_nccl_communicator};
  return &api;
}
