// Internal to Network: the per-layer geometry (shapes, parameter and state placement) and the deterministic
// parameter initialisation described in network.hpp.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "exec/network.hpp"

namespace scaletwin::exec::detail {

struct LayerGeometry {
  std::vector<models::Shape> in_shapes;
  models::Shape out_shape;   // full output
  models::Shape kernel_out;  // what the kernel produces (a model-parallel slice: end − begin channels)
  bool sliced = false;       // a model-parallel fc slice
  FcSlice slice;
  int64_t param_offset = -1, param_count = 0;
  int64_t weight_count = 0;  // of param_count, the weights (the rest is bias or beta)
  int64_t state_offset = -1, state_count = 0;
  int consumers = 0;
};

struct Layout {
  std::vector<LayerGeometry> layers;
  std::vector<ParamSegment> segments;  // flat order
  int64_t param_count = 0, replicated_param_count = 0, state_count = 0;
  int loss_layer = -1;
};

// Checks the model and places every layer's parameters (replicated layers last-first, then slices) and state.
Layout make_layout(const models::Model& model, const std::map<int, FcSlice>& fc_slices);
// The activation layout of every layer's output (see LayerDesc::in_blocks) for a backend preferring channel blocks
// of `block` (0: all plain): blocked are the outputs of convolution, batch norm, ReLU, sigmoid, SiLU, hard swish, add, mul, drop_path and
// average pooling
// whose channels are a multiple of `block`, that have consumers, all of them of those kinds (or the output is
// 1 × 1, where blocked and plain are the same bytes), and that agree with the inputs and outputs they share an
// element-wise layout with (those but convolution keep their input's layout, which convolution converts; mul's C×1×1 scale
// is the same bytes in either).
std::vector<int> activation_blocks(const models::Model& model, const Layout& layout, int block);
// Host values of the initial parameters and state, in the layout's order.
void init_params(const models::Model& model, const Layout& layout, uint64_t seed, std::vector<float>& params,
                 std::vector<float>& state);

}  // namespace scaletwin::exec::detail
