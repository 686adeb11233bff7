// describe_model_json and format_model_table (see describe.hpp).
#include "models/describe.hpp"

#include "models/model_json.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace scaletwin::models {

std::string group_thousands(int64_t value) {
  const std::string digits = std::to_string(value < 0 ? -value : value);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return value < 0 ? "-" + out : out;
}

namespace {
Json shape_json(const Shape& s) { return Json::array({s.c, s.h, s.w}); }
std::string shape_text(const Shape& s) { return fmt::format("{}×{}×{}", s.c, s.h, s.w); }
std::string flops_text(double flops) {
  if (flops >= 1e9) return fmt::format("{:.4g} GFLOP", flops / 1e9);
  if (flops >= 1e6) return fmt::format("{:.4g} MFLOP", flops / 1e6);
  return fmt::format("{:.4g} kFLOP", flops / 1e3);
}
}  // namespace

Json describe_model_json(const Model& model) {
  Json layers = Json::array();
  for (const Layer& l : model.layers) {
    Json inputs = Json::array();
    for (int from : l.inputs) inputs.push_back(model.layers[static_cast<size_t>(from)].name);
    layers.push_back({{"name", l.name},
                      {"type", layer_kind_name(l.kind)},
                      {"class", layer_class_name(l.layer_class())},
                      {"inputs", inputs},
                      {"output", shape_json(l.out)},
                      {"params", l.params},
                      {"fwd_flops", l.fwd_flops},
                      {"bwd_input_flops", l.bwd_input_flops},
                      {"bwd_weight_flops", l.bwd_weight_flops},
                      {"activation_bytes", l.activation_bytes},
                      {"weight_bytes", l.weight_bytes},
                      {"attributes", layer_params_json(l)}});
  }
  return Json{{"model", model.name},
              {"input", shape_json(model.input)},
              {"classes", model.classes},
              {"params", model.params()},
              {"fwd_flops_per_sample", model.fwd_flops_per_sample()},
              {"bwd_flops_per_sample", model.bwd_flops_per_sample()},
              {"weight_bytes", model.weight_bytes()},
              {"activation_bytes_per_sample", model.activation_bytes_per_sample()},
              {"layers", layers}};
}

std::string format_model_table(const Model& model) {
  size_t name_w = 4;
  for (const Layer& l : model.layers) name_w = std::max(name_w, l.name.size());
  std::string out = fmt::format("model {}: input {}, {} classes, {} layers\n", model.name, shape_text(model.input),
                                model.classes, model.layers.size());
  out += fmt::format("{:>4}  {:<{}}  {:<21}  {:<14}  {:>12}  {:>11}  {:>11}\n", "#", "name", name_w, "type", "output",
                     "params", "fwd MFLOP", "bwd MFLOP");
  for (size_t i = 0; i < model.layers.size(); ++i) {
    const Layer& l = model.layers[i];
    out += fmt::format("{:>4}  {:<{}}  {:<21}  {:<14}  {:>12}  {:>11.3f}  {:>11.3f}\n", i, l.name, name_w,
                       layer_kind_name(l.kind), shape_text(l.out), group_thousands(l.params), l.fwd_flops / 1e6,
                       (l.bwd_input_flops + l.bwd_weight_flops) / 1e6);
  }
  out += fmt::format(
      "total: {} parameters ({:.1f} MiB fp32), forward {}, backward {}, activations {:.1f} MiB per sample\n",
      group_thousands(model.params()), static_cast<double>(model.weight_bytes()) / (1024.0 * 1024.0),
      flops_text(model.fwd_flops_per_sample()), flops_text(model.bwd_flops_per_sample()),
      static_cast<double>(model.activation_bytes_per_sample()) / (1024.0 * 1024.0));
  return out;
}

}  // namespace scaletwin::models
