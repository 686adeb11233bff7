// exec/cuda_backend.hpp through the on-demand CUDA module (see exec/cuda_module.hpp). Weak definitions: the real
// ones (exec/cuda/, or exec/nocuda/ in a build without CUDA) take precedence wherever they are linked in.
#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <vector>

#include "core/error.hpp"
#include "exec/cuda_module.hpp"

namespace scaletwin::exec {

namespace {

std::vector<std::string> module_candidates() {
  std::vector<std::string> out;
  if (const char* env = std::getenv("SCALETWIN_CUDA_MODULE"); env != nullptr && *env != '\0') out.emplace_back(env);
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) out.push_back((self.parent_path() / kCudaModuleFile).string());
#ifdef SCALETWIN_CUDA_MODULE_PATH
  out.emplace_back(SCALETWIN_CUDA_MODULE_PATH);  // the build tree's, for the test programs
#endif
  return out;
}

struct Loaded {
  const CudaModuleApi* api = nullptr;
  std::string why;
};

const Loaded& load() {
  static Loaded loaded;
  static std::once_flag once;
  std::call_once(once, [] {
#ifndef SCALETWIN_CUDA_MODULE_PATH
    loaded.why = "built without CUDA";
    return;
#endif
    std::string tried;
    for (const std::string& path : module_candidates()) {
      if (!std::filesystem::exists(path)) {
        tried += fmt::format("{}{} (missing)", tried.empty() ? "" : ", ", path);
        continue;
      }
      void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (handle == nullptr) {
        tried += fmt::format("{}{} ({})", tried.empty() ? "" : ", ", path, dlerror());
        continue;
      }
      using Entry = const CudaModuleApi* (*)();
      const auto entry = reinterpret_cast<Entry>(dlsym(handle, kCudaModuleSymbol));
      const CudaModuleApi* api = entry != nullptr ? entry() : nullptr;
      if (api == nullptr || api->version != kCudaModuleVersion) {
        tried += fmt::format("{}{} (not a scaletwin CUDA module of version {})", tried.empty() ? "" : ", ", path,
                             kCudaModuleVersion);
        continue;
      }
      loaded.api = api;
      return;
    }
    loaded.why = fmt::format("the CUDA module {} could not be loaded: {}", kCudaModuleFile, tried);
  });
  return loaded;
}

const CudaModuleApi& require(const char* what) {
  const Loaded& l = load();
  if (l.api == nullptr) throw SystemError(fmt::format("{} is unavailable: {}", what, l.why));
  return *l.api;
}

}  // namespace

const CudaModuleApi* cuda_module(std::string* why) {
  const Loaded& l = load();
  if (l.api == nullptr && why != nullptr) *why = l.why;
  return l.api;
}

__attribute__((weak)) bool cuda_device_available(std::string* why) {
  const CudaModuleApi* api = cuda_module(why);
  return api != nullptr && api->device_available(why);
}

__attribute__((weak)) int cuda_device_count() {
  const CudaModuleApi* api = cuda_module();
  return api != nullptr ? api->device_count() : 0;
}

__attribute__((weak)) std::unique_ptr<Backend> make_cuda_backend(int device) {
  return require("the CUDA backend").make_backend(device, CudaOptions{});
}

__attribute__((weak)) std::unique_ptr<Backend> make_cuda_backend(int device, const CudaOptions& options) {
  return require("the CUDA backend").make_backend(device, options);
}

__attribute__((weak)) void check_cuda_memory(const models::Model& model, int64_t batch, int device,
                                             const CudaOptions& options) {
  require("the CUDA backend").check_memory(model, batch, device, options);
}

__attribute__((weak)) std::unique_ptr<DeviceCommunicator> make_nccl_communicator(
    Backend& backend, int rank, int ranks, const BroadcastFromRoot& broadcast_from_root) {
  return require("NCCL").make_communicator(backend, rank, ranks, broadcast_from_root);
}

}  // namespace scaletwin::exec
