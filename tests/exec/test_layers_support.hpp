// Test helper: runs one layer kernel of the CPU backend and checks its backward pass (input and weight
// gradients) against central finite differences of f = Σ output · R for a fixed random R.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "exec/backend.hpp"

namespace scaletwin::exec::testing {

struct LayerCase {
  models::Layer layer;
  std::vector<models::Shape> in_shapes;
  models::Shape out;
  int64_t batch = 2;
  std::vector<std::vector<float>> inputs;  // one per input, batch × elements; filled randomly when empty
  std::vector<float> weights;              // filled randomly when empty (size from the layer)
  std::vector<float> labels;               // softmax cross-entropy
};

struct GradientCheck {
  double input_error = 0.0;   // ‖analytic − numeric‖ / ‖numeric‖ over the input elements checked
  double weight_error = 0.0;  // same over the weights (0 when the layer has none)
  double input_norm = 0.0, weight_norm = 0.0;  // ‖numeric‖: shows the check is not vacuous
};

int64_t weight_count(const LayerCase& c);
std::vector<float> random_vector(int64_t n, std::mt19937_64& rng, float lo = -1.0f, float hi = 1.0f);
// Runs forward only; returns the output.
std::vector<float> run_forward(Backend& backend, LayerCase& c, bool training = true, float* state = nullptr);
GradientCheck check_gradients(LayerCase c, double eps, uint64_t seed = 7);

}  // namespace scaletwin::exec::testing
