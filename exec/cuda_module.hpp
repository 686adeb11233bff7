// The CUDA backend as a module loaded on demand.
//
// With CUDA, exec/cuda/ is built twice: as the static library scaletwin_exec_cuda (tests, the GPU benchmark) and
// as the shared module libscaletwin-cuda.so beside the scaletwin binary, which alone links cuDNN, cuBLAS, NCCL and
// the CUDA runtime. The binary reaches the functions of exec/cuda_backend.hpp through cuda_loader.cpp: on first
// use it dlopens the module (SCALETWIN_CUDA_MODULE, else the binary's own folder, else the build tree) and calls
// through the table below; a command that never asks for a GPU never loads a CUDA library. The loader's
// definitions are weak, so a program that links the static library gets the real ones directly.
#pragma once

#include <string>

#include "exec/cuda_backend.hpp"

namespace scaletwin::exec {

constexpr int kCudaModuleVersion = 1;
constexpr const char* kCudaModuleFile = "libscaletwin-cuda.so";
constexpr const char* kCudaModuleSymbol = "scaletwin_cuda_module_api";

struct CudaModuleApi {
  int version = kCudaModuleVersion;
  bool (*device_available)(std::string* why) = nullptr;
  int (*device_count)() = nullptr;
  std::unique_ptr<Backend> (*make_backend)(int device, const CudaOptions& options) = nullptr;
  void (*check_memory)(const models::Model& model, int64_t batch, int device, const CudaOptions& options) = nullptr;
  std::unique_ptr<DeviceCommunicator> (*make_communicator)(Backend& backend, int rank, int ranks,
                                                           const BroadcastFromRoot& broadcast_from_root) = nullptr;
};

// The module's table, nullptr when it cannot be loaded (*why then says where it looked and what failed).
const CudaModuleApi* cuda_module(std::string* why = nullptr);

}  // namespace scaletwin::exec

// Exported by the module (exec/cuda/module.cpp).
extern "C" const scaletwin::exec::CudaModuleApi* scaletwin_cuda_module_api();
