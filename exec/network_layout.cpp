// Network's layer geometry, flat-buffer placement and deterministic initialisation (see network.hpp).
#include "exec/network_layout.hpp"

#include <cmath>
#include <random>

#include "core/error.hpp"
#include "core/files.hpp"

namespace scaletwin::exec::detail {
namespace {

using models::LayerKind;

// Counts (weights, bias) of a layer with parameters, for `out_channels` outputs.
std::pair<int64_t, int64_t> param_counts(const models::Layer& layer, const models::Shape& in, int64_t outputs) {
  switch (layer.kind) {
    case LayerKind::kConv:
      return {outputs * (in.c / layer.conv.groups) * layer.conv.kernel_h * layer.conv.kernel_w,
              layer.conv.bias ? outputs : 0};
    case LayerKind::kFullyConnected:
      return {outputs * in.elements(), layer.fc.bias ? outputs : 0};
    case LayerKind::kBatchNorm:
      return {in.c, in.c};
    default:
      return {0, 0};
  }
}

bool keeps_layout(LayerKind kind) {
  switch (kind) {
    case LayerKind::kBatchNorm:
    case LayerKind::kRelu:
    case LayerKind::kAdd:
    case LayerKind::kAvgPool:
    case LayerKind::kGlobalAvgPool:
    case LayerKind::kSigmoid:
    case LayerKind::kSilu:
    case LayerKind::kHardSwish:
    case LayerKind::kMul:
    case LayerKind::kDropPath: return true;
    default: return false;
  }
}
bool takes_blocked(LayerKind kind) { return kind == LayerKind::kConv || keeps_layout(kind); }

// A Box–Muller normal from a uniform in (0, 1) built from the top 53 bits: the same numbers on every platform.
class Rng {
 public:
  explicit Rng(uint64_t seed) : engine_(seed) {}
  double uniform() { return (static_cast<double>(engine_() >> 11) + 0.5) * 0x1.0p-53; }
  double normal() {
    const double u1 = uniform(), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
  }

 private:
  std::mt19937_64 engine_;
};

}  // namespace

Layout make_layout(const models::Model& model, const std::map<int, FcSlice>& fc_slices) {
  const auto& layers = model.layers;
  ST_ASSERT(!layers.empty() && layers[0].kind == LayerKind::kInput, "a model starts with its input layer");
  Layout layout;
  layout.layers.resize(layers.size());
  layout.layers[0].out_shape = layout.layers[0].kernel_out = model.input;
  for (size_t i = 1; i < layers.size(); ++i) {
    const models::Layer& layer = layers[i];
    LayerGeometry& g = layout.layers[i];
    ST_ASSERT(!layer.inputs.empty(), "layer " + layer.name + " has no input");
    for (int in : layer.inputs) {
      ST_ASSERT(in >= 0 && static_cast<size_t>(in) < i, "layers are not in topological order at " + layer.name);
      g.in_shapes.push_back(layout.layers[in].out_shape);
      ++layout.layers[in].consumers;
    }
    g.out_shape = g.kernel_out = layer.out;
    ST_ASSERT(layer.out.elements() > 0, "layer " + layer.name + " has no inferred shape");
    if (auto it = fc_slices.find(static_cast<int>(i)); it != fc_slices.end()) {
      ST_ASSERT(layer.kind == LayerKind::kFullyConnected, "model-parallel layer " + layer.name + " is not fc");
      ST_ASSERT(0 <= it->second.begin && it->second.begin < it->second.end && it->second.end <= layer.out.c,
                "bad model-parallel slice of " + layer.name);
      g.sliced = true;
      g.slice = it->second;
      g.kernel_out = {it->second.end - it->second.begin, 1, 1};
    }
    if (layer.kind == LayerKind::kSoftmaxCrossEntropy) layout.loss_layer = static_cast<int>(i);
    const auto [weights, bias] = param_counts(layer, g.in_shapes[0], g.kernel_out.c);
    if (!g.sliced && layer.params != 0) {
      ST_ASSERT(layer.params == weights + bias, "parameter count of " + layer.name + " disagrees with the model");
    }
    g.weight_count = weights;
    g.param_count = weights + bias;
    if (layer.kind == LayerKind::kBatchNorm) {
      g.state_offset = layout.state_count;
      g.state_count = 2 * g.in_shapes[0].c;
      layout.state_count += g.state_count;
    }
  }
  // Replicated layers in the order their gradients become ready (last first), then the model-parallel slices.
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t k = layers.size(); k-- > 1;) {
      LayerGeometry& g = layout.layers[k];
      if (g.param_count == 0 || g.sliced != (pass == 1)) continue;
      g.param_offset = layout.param_count;
      layout.segments.push_back({static_cast<int>(k), g.param_offset, g.param_count, g.sliced});
      layout.param_count += g.param_count;
    }
    if (pass == 0) layout.replicated_param_count = layout.param_count;
  }
  return layout;
}

void init_params(const models::Model& model, const Layout& layout, uint64_t seed, std::vector<float>& params,
                 std::vector<float>& state) {
  params.assign(static_cast<size_t>(layout.param_count), 0.0f);
  state.assign(static_cast<size_t>(layout.state_count), 0.0f);
  for (size_t i = 1; i < model.layers.size(); ++i) {
    const models::Layer& layer = model.layers[i];
    const LayerGeometry& g = layout.layers[i];
    if (g.param_count == 0) continue;
    float* p = params.data() + g.param_offset;
    if (layer.kind == LayerKind::kBatchNorm) {
      const int64_t c = g.in_shapes[0].c;
      std::fill(p, p + c, 1.0f);
      std::fill(state.data() + g.state_offset + c, state.data() + g.state_offset + 2 * c, 1.0f);
      continue;
    }
    // Draw the full layer's weights row by row (one row per output), keep the rows of this slice.
    const int64_t outputs = g.out_shape.c;
    const int64_t row = g.weight_count / g.kernel_out.c;
    const int64_t first = g.sliced ? g.slice.begin : 0, last = g.sliced ? g.slice.end : outputs;
    Rng rng(splitmix64(seed ^ fnv1a64(layer.name)));  // by name: a split model draws the same values
    const bool conv = layer.kind == LayerKind::kConv;
    const double fan_in = static_cast<double>(row);
    const double std_dev = std::sqrt(2.0 / fan_in), bound = 1.0 / std::sqrt(fan_in);
    for (int64_t o = 0; o < last; ++o) {
      for (int64_t k = 0; k < row; ++k) {
        const double v = conv ? rng.normal() * std_dev : (2.0 * rng.uniform() - 1.0) * bound;
        if (o >= first) p[(o - first) * row + k] = static_cast<float>(v);
      }
    }
  }
}

}  // namespace scaletwin::exec::detail

namespace scaletwin::exec {

SplitModel split_model(const models::Model& model, int first) {
  const int count = static_cast<int>(model.layers.size());
  ST_ASSERT(first >= 2 && first < count, "split point must leave layers on both sides");
  SplitModel split;
  split.backbone = model;
  split.backbone.layers.resize(static_cast<size_t>(first));
  split.head = model;
  split.head.name = model.name + " head";
  split.head.input = model.layers[first - 1].out;
  split.head.layers.clear();
  models::Layer input;
  input.name = model.layers[first - 1].name;
  input.kind = models::LayerKind::kInput;
  input.out = split.head.input;
  split.head.layers.push_back(input);
  for (int i = first; i < count; ++i) {
    models::Layer layer = model.layers[i];
    for (int& in : layer.inputs) {
      ST_ASSERT(in >= first - 1, "head layer " + layer.name + " reads the backbone beyond its last layer");
      in -= first - 1;
    }
    split.head.layers.push_back(std::move(layer));
  }
  return split;
}

}  // namespace scaletwin::exec

namespace scaletwin::exec::detail {

std::vector<int> activation_blocks(const models::Model& model, const Layout& layout, int block) {
  const size_t count = model.layers.size();
  std::vector<int> blocks(count, 0);
  if (block <= 0) return blocks;
  std::vector<std::vector<int>> consumers(count);
  for (size_t i = 1; i < count; ++i)
    for (int in : model.layers[i].inputs) consumers[in].push_back(static_cast<int>(i));
  for (size_t i = 1; i < count; ++i) {
    const LayerGeometry& g = layout.layers[i];
    if (takes_blocked(model.layers[i].kind) && !g.sliced && g.out_shape.c % block == 0 && !consumers[i].empty())
      blocks[i] = block;
  }
  // Only ever clears: stops after at most `count` rounds.
  for (bool changed = true; changed;) {
    changed = false;
    const auto clear = [&](int i) {
      changed = changed || blocks[i] != 0;
      blocks[i] = 0;
    };
    for (size_t i = 1; i < count; ++i) {
      const models::Shape& s = layout.layers[i].out_shape;
      const bool same_bytes = s.h == 1 && s.w == 1;
      for (int k : consumers[i])
        if (!takes_blocked(model.layers[k].kind) && !same_bytes) clear(static_cast<int>(i));
      if (!keeps_layout(model.layers[i].kind)) continue;
      const auto& inputs = model.layers[i].inputs;
      for (size_t k = 0; k < inputs.size(); ++k) {
        const int in = inputs[k];
        if (blocks[in] == blocks[i]) continue;
        // A channel scale (mul's second input, C×1×1) is the same bytes in either layout.
        const models::Shape& si = layout.layers[in].out_shape;
        if (model.layers[i].kind == LayerKind::kMul && k == 1 && si.h == 1 && si.w == 1) continue;
        clear(in);
        clear(static_cast<int>(i));
      }
    }
  }
  return blocks;
}

}  // namespace scaletwin::exec::detail
