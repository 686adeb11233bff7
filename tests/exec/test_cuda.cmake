# The CUDA executor's tests (exec/cuda/), included from tests/exec/CMakeLists.txt and from the executor-only build
# of scripts/gpu-check (exec/cuda/standalone/):
#   test_exec_cuda_host  label unit: descriptor set-up, workspace policy, NCCL lowering, memory planner, and the
#                        naive reference backend against the CPU (oneDNN) one when the build has it. No GPU needed.
#   test_exec_cuda_gpu   label gpu: the CUDA backend against the CPU backend (or the reference where oneDNN is
#                        absent), NCCL schedules against ncclAllReduce. Without a GPU every test prints
#                        "SKIPPED: no CUDA device" and exits 77, which CTest reports as skipped (SKIP_RETURN_CODE).
if(TARGET scaletwin_exec_cuda)
  set(_st_dir ${CMAKE_CURRENT_LIST_DIR})
  set(_st_support ${_st_dir}/test_cuda_support.cpp ${_st_dir}/test_cuda_reference_backend.cpp)
  file(GLOB _st_host CONFIGURE_DEPENDS ${_st_dir}/test_cuda_host*.cpp)
  if(NOT TARGET DNNL::dnnl)
    list(FILTER _st_host EXCLUDE REGEX "test_cuda_host_reference\\.cpp$")
  endif()
  add_executable(test_exec_cuda_host ${_st_host} ${_st_support} $<TARGET_OBJECTS:scaletwin_catch_main>)
  target_link_libraries(test_exec_cuda_host PRIVATE Catch2::Catch2 scaletwin_exec_cuda_host)
  if(COMMAND catch_discover_tests)
    catch_discover_tests(test_exec_cuda_host TEST_PREFIX "exec: cuda host: " EXTRA_ARGS --warn NoTests
                         PROPERTIES LABELS unit TIMEOUT ${SCALETWIN_TIMEOUT_300} ENVIRONMENT OMP_NUM_THREADS=1)
  else()  # Catch2 as a bare single header (gpu-check): one CTest test per binary
    add_test(NAME "exec: cuda host" COMMAND test_exec_cuda_host)
    set_tests_properties("exec: cuda host" PROPERTIES LABELS unit TIMEOUT ${SCALETWIN_TIMEOUT_300})
  endif()

  file(GLOB _st_gpu CONFIGURE_DEPENDS ${_st_dir}/test_cuda_gpu*.cpp)
  add_executable(test_exec_cuda_gpu ${_st_gpu} ${_st_support} $<TARGET_OBJECTS:scaletwin_catch_main>)
  target_link_libraries(test_exec_cuda_gpu PRIVATE Catch2::Catch2 scaletwin_exec_cuda)
  if(TARGET DNNL::dnnl)
    target_compile_definitions(test_exec_cuda_gpu PRIVATE SCALETWIN_TEST_CPU_BACKEND)
  endif()
  if(COMMAND catch_discover_tests)
    catch_discover_tests(test_exec_cuda_gpu TEST_PREFIX "exec: cuda gpu: " EXTRA_ARGS --warn NoTests
                         PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 RUN_SERIAL TRUE TIMEOUT ${SCALETWIN_TIMEOUT_300})
  else()
    add_test(NAME "exec: cuda gpu" COMMAND test_exec_cuda_gpu)
    set_tests_properties("exec: cuda gpu" PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 RUN_SERIAL TRUE TIMEOUT ${SCALETWIN_TIMEOUT_300})
  endif()
endif()
