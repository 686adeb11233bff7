// The CUDA backend as a module loaded on demand (exec/cuda_module.hpp): a program linked with the executor maps no
// CUDA library until it asks for the CUDA backend; with CUDA built in, the module then loads (the device may still
// be absent); without it, the answer is "built without CUDA".
#include <catch2/catch.hpp>

#include <fstream>
#include <string>

#include "exec/cuda_module.hpp"

namespace scaletwin::exec {

namespace {

bool cuda_library_mapped() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line))
    if (line.find("libcudart") != std::string::npos || line.find("libcudnn") != std::string::npos ||
        line.find("libnccl") != std::string::npos || line.find("libcublas") != std::string::npos)
      return true;
  return false;
}

}  // namespace

TEST_CASE("cuda module: no CUDA library is mapped until the CUDA backend is asked for", "[unit]") {
  CHECK_FALSE(cuda_library_mapped());
  std::string why;
  const CudaModuleApi* api = cuda_module(&why);
  INFO("why: " << why);
#ifdef SCALETWIN_TEST_CUDA_BUILT
  REQUIRE(api != nullptr);  // built with CUDA: the module next to the build's scaletwin loads here
  CHECK(api->version == kCudaModuleVersion);
  CHECK(cuda_library_mapped());
  std::string device_why;
  const bool available = cuda_device_available(&device_why);
  CHECK((available || !device_why.empty()));  // without a GPU, the CUDA runtime's own reason
  CHECK(device_why.find("could not be loaded") == std::string::npos);
#else
  CHECK(api == nullptr);
  CHECK(why == "built without CUDA");
  CHECK_FALSE(cuda_device_available());
  CHECK(cuda_device_count() == 0);
#endif
}

}  // namespace scaletwin::exec
