// What `scaletwin describe --model` prints: the resolved model as JSON (for --json) and as a readable table.
//
// JSON fields: {"model", "input": [C, H, W], "classes", "params", "fwd_flops_per_sample", "bwd_flops_per_sample",
// "weight_bytes", "activation_bytes_per_sample", "layers": [{"name", "type", "class", "inputs": [names],
// "output": [C, H, W], "params", "fwd_flops", "bwd_input_flops", "bwd_weight_flops", "activation_bytes",
// "weight_bytes"}]}. FLOPs are per sample, a multiply-add counting 2; params count batch-norm scale and shift.
#pragma once

#include <string>

#include "core/json_reader.hpp"
#include "models/model.hpp"

namespace scaletwin::models {

Json describe_model_json(const Model& model);
// One line per layer (index, name, type, output shape, params, forward and backward MFLOP) and a totals line.
std::string format_model_table(const Model& model);
// 25557032 → "25,557,032"
std::string group_thousands(int64_t value);

}  // namespace scaletwin::models
