# Finds the libraries of the CUDA executor beyond the toolkit's own (cudart, cuBLAS come from CUDAToolkit):
# cuDNN 9 and NCCL, in the toolkit's folders or CUDNN_ROOT / NCCL_ROOT. Defines the imported targets
# scaletwin::cudnn and scaletwin::nccl and sets SCALETWIN_CUDA_LIBRARIES_FOUND. Included by the top-level
# CMakeLists.txt (CUDA detection) and by the executor-only build of scripts/gpu-check.
set(SCALETWIN_CUDA_LIBRARIES_FOUND OFF)
set(_st_cuda_hints ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}/lib64 $ENV{CUDNN_ROOT}/lib
    $ENV{CUDNN_ROOT}/lib64 $ENV{NCCL_ROOT}/lib)
set(_st_cuda_include_hints ${CUDAToolkit_INCLUDE_DIRS} $ENV{CUDNN_ROOT}/include $ENV{NCCL_ROOT}/include)
find_library(SCALETWIN_CUDNN_LIBRARY NAMES cudnn HINTS ${_st_cuda_hints})
find_path(SCALETWIN_CUDNN_INCLUDE_DIR NAMES cudnn.h HINTS ${_st_cuda_include_hints})
find_library(SCALETWIN_NCCL_LIBRARY NAMES nccl HINTS ${_st_cuda_hints})
find_path(SCALETWIN_NCCL_INCLUDE_DIR NAMES nccl.h HINTS ${_st_cuda_include_hints})
if(SCALETWIN_CUDNN_LIBRARY AND SCALETWIN_CUDNN_INCLUDE_DIR AND SCALETWIN_NCCL_LIBRARY AND SCALETWIN_NCCL_INCLUDE_DIR)
  if(NOT TARGET scaletwin::cudnn)
    add_library(scaletwin::cudnn SHARED IMPORTED GLOBAL)
    set_target_properties(scaletwin::cudnn PROPERTIES IMPORTED_LOCATION ${SCALETWIN_CUDNN_LIBRARY}
                          INTERFACE_INCLUDE_DIRECTORIES ${SCALETWIN_CUDNN_INCLUDE_DIR})
    add_library(scaletwin::nccl SHARED IMPORTED GLOBAL)
    set_target_properties(scaletwin::nccl PROPERTIES IMPORTED_LOCATION ${SCALETWIN_NCCL_LIBRARY}
                          INTERFACE_INCLUDE_DIRECTORIES ${SCALETWIN_NCCL_INCLUDE_DIR})
  endif()
  set(SCALETWIN_CUDA_LIBRARIES_FOUND ON)
else()
  message(STATUS "CUDA executor: cuDNN (${SCALETWIN_CUDNN_LIBRARY}) or NCCL (${SCALETWIN_NCCL_LIBRARY}) not found")
endif()
