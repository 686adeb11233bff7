// The visible skip of the GPU tests (test_cuda_support.hpp): only the GPU binary links the CUDA backend.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "exec/cuda_backend.hpp"
#include "test_cuda_support.hpp"

namespace scaletwin::exec::cuda_testing {

void skip_without_gpu() {
  std::string why;
  if (cuda_device_available(&why)) return;
  std::printf("SKIPPED: no CUDA device (%s)\n", why.c_str());
  std::fflush(stdout);
  std::exit(kSkipReturnCode);
}

}  // namespace scaletwin::exec::cuda_testing
