// The device-memory planner: what training a model at a batch size will allocate on a CUDA device, estimated on
// the host from the model alone, so that a batch that cannot fit is refused (InputError, exit 2) before anything is
// allocated, with a message that says where the memory goes.
//
// It mirrors what the executor allocates (exec/network.cpp, exec/optimizer.cpp, this backend):
//   weights, gradients, momentum   3 × parameters × 4 bytes (one flat buffer each)
//   state                          batch-norm running mean and variance
//   activations                    every layer's output, the input included, batch × elements × 4
//   activation gradients           every layer's output gradient but the input's
//   scratch                        Network's buffer for summing gradients of multi-consumer layers
//   kernels                        per-layer extras: batch-norm saved statistics, fc's vector of ones, labels
//   workspace                      the shared cuDNN workspace, at most the policy's limit (layer_plan.hpp)
//   half-precision copies          mixed precision only: the shared scratch of the largest convolution or fully
//                                  connected layer's 2-byte operands (layer_plan.hpp, half_scratch_layout)
//   context                        CUDA context, cuDNN and cuBLAS handles and their own workspaces (an allowance)
#pragma once

#include <cstdint>
#include <string>

#include "models/model.hpp"

namespace scaletwin::exec::cuda {

struct MemoryEstimate {
  int64_t weights_bytes = 0, gradients_bytes = 0, momentum_bytes = 0, state_bytes = 0;
  int64_t activations_bytes = 0, activation_gradients_bytes = 0, scratch_bytes = 0, kernels_bytes = 0;
  int64_t workspace_bytes = 0, context_bytes = 0, half_scratch_bytes = 0;
  int64_t total_bytes() const;
  std::string breakdown() const;  // "weights 102 MB, gradients 102 MB, ..."
};

// The allowance for the CUDA context and library handles.
inline constexpr int64_t kContextAllowanceBytes = int64_t{768} << 20;

// workspace_bytes: the cuDNN workspace limit that will be used (layer_plan.hpp's workspace_limit_bytes); half:
// mixed precision (bf16 or fp16).
MemoryEstimate estimate_training_memory(const models::Model& model, int64_t batch, int64_t workspace_bytes,
                                        bool half = false);

// Throws InputError when `estimate` exceeds device_bytes: "model 'resnet50' at batch 4096 needs 480 GB of device
// memory (…breakdown…), the device has 12 GB: use a batch of at most N". max_batch is computed by bisection.
void check_fits(const models::Model& model, int64_t batch, int64_t workspace_bytes, int64_t device_bytes,
                const std::string& device_name, bool half = false);
// The largest batch whose estimate fits (0 when not even batch 1 does).
int64_t max_batch_that_fits(const models::Model& model, int64_t workspace_bytes, int64_t device_bytes,
                            bool half = false);

}  // namespace scaletwin::exec::cuda
