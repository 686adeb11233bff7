// Check macros for CUDA runtime, cuDNN, cuBLAS and NCCL calls: a failure throws SystemError (exit 3) naming the
// host, the device, file:line, the expression and the library's own message.
#pragma once

#include <string>

namespace scaletwin::exec::cuda {

// Throws SystemError: "<library> error on <host> (device <d>) at file:line: <expr>: <message>".
[[noreturn]] void fail_call(const char* library, const std::string& message, const char* expr, const char* file,
                            int line);
const char* cuda_message(int status);
const char* cudnn_message(int status);
const char* cublas_message(int status);
std::string nccl_message(int status);  // with ncclGetLastError's reason where NCCL gives one

}  // namespace scaletwin::exec::cuda

#define ST_CUDA_CALL_CHECK_(library, call, ok, message_of)                                            \
  do {                                                                                                \
    const auto st_status_ = (call);                                                                   \
    if (st_status_ != (ok))                                                                           \
      ::scaletwin::exec::cuda::fail_call(library, ::scaletwin::exec::cuda::message_of(static_cast<int>(st_status_)), \
                                         #call, __FILE__, __LINE__);                                 \
  } while (0)

#define ST_CUDA_CHECK(call) ST_CUDA_CALL_CHECK_("CUDA", call, cudaSuccess, cuda_message)
#define ST_CUDNN_CHECK(call) ST_CUDA_CALL_CHECK_("cuDNN", call, CUDNN_STATUS_SUCCESS, cudnn_message)
#define ST_CUBLAS_CHECK(call) ST_CUDA_CALL_CHECK_("cuBLAS", call, CUBLAS_STATUS_SUCCESS, cublas_message)
#define ST_NCCL_CHECK(call) ST_CUDA_CALL_CHECK_("NCCL", call, ncclSuccess, nccl_message)
