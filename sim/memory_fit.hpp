// Whether a training step fits in its GPU's memory: a lower bound on what one worker holds, refused by predict where
// it exceeds the device's memory (issue 49: ResNet-50 at batch 4,096 per 80 GB A100 is no prediction).
//
// The bound counts what no framework avoids keeping through one step:
//   - the weights in fp32 (the master copy), their gradients (fp32: the frameworks' mixed precision keeps them in
//     fp32 for the update) and one optimizer state per weight (momentum SGD, the reference's optimizer; LARS and Adam
//     keep as much or more), plus a half copy of the weights under mixed precision;
//   - the output of every convolution and fully connected layer at the run's activation width (4 bytes, 2 under
//     mixed precision), kept for the backward pass: batch normalisation's backward reads it, or, without batch norm,
//     the next layer's weight gradient does.
// It leaves out what frameworks size differently (other layers' outputs, which fused and in-place kernels may drop;
// cuDNN's workspace; the CUDA context; the allocator's fragmentation), so a point it refuses cannot fit, and one it
// passes may still not. Model-parallel layers of a hybrid scheme keep their weights on one GPU's share only: the
// bound counts the replicated layers' weights, and every layer's activations.
#pragma once

#include <optional>
#include <string>

#include "models/model.hpp"
#include "plan/scenario.hpp"
#include "topology/cluster.hpp"

namespace scaletwin::sim {

struct MemoryBound {
  double weight_state_bytes = 0.0;  // weights, gradients, optimizer state, the half copy
  double activation_bytes = 0.0;    // outputs kept for the backward pass, at the batch
  double total_bytes() const { return weight_state_bytes + activation_bytes; }
};

// The lower bound for one worker of `scenario` at its batch per GPU, computing at `activation_element_bytes`.
MemoryBound training_memory_bound(const models::Model& model, const plan::Scenario& scenario,
                                  int activation_element_bytes);

// Throws InputError at the scenario's /batch_per_gpu where the bound exceeds the memory of the scenario's GPU
// (CPU workers are not checked: their host's memory is shared with everything else on it).
void check_memory_fit(const plan::Scenario& scenario, const models::Model& model, const topology::NodeSpec& node);

}  // namespace scaletwin::sim
