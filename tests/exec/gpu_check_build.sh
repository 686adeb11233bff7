#!/usr/bin/env bash
# The executor-only build that scripts/gpu-check runs on a machine with a GPU (exec/cuda/standalone/), configured
# and built here from the Debian headers, its host tests run: a device call must not be spent on a build that
# breaks. Usage: gpu_check_build.sh SOURCE_ROOT BUILD_DIR
set -euo pipefail
root=$1
build=$2
arch=${CUDA_ARCHITECTURES:-75}  # the lowest this nvcc targets; the check is about compiling and linking
cmake -S "$root/exec/cuda/standalone" -B "$build" -DSCALETWIN_HEADERS=/usr/include -DCMAKE_CUDA_ARCHITECTURES="$arch" \
  > "$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
cmake --build "$build" -j 2 --target test_exec_cuda_host test_exec_cuda_gpu scaletwin_cuda_train
"$build/test_exec_cuda_host"
