// The model JSON format (documented in models/README.md): reading it strictly, writing it, and resolving a model
// reference (a built-in name or the path of a model file) with the input / classes overrides of a scenario.
//
//   {"format": "scaletwin-model/1", "name": "tiny", "input": [1, 28, 28], "classes": 10,
//    "layers": [{"name": "conv1", "type": "conv", "out_channels": 6, "kernel": 5, "padding": 2, "bias": true},
//               {"name": "relu1", "type": "relu"}, ...,
//               {"name": "fc", "type": "fc", "out_features": "classes"},
//               {"name": "loss", "type": "softmax_cross_entropy"}]}
//
// Every error is an InputError naming the file, the JSON path (/layers/3/kernel) and what was expected; unknown
// keys are errors. model_to_json writes the same format, so that parse_model_json(model_to_json(m)) == m for
// every model (the zoo's included).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/json_reader.hpp"
#include "models/model.hpp"

namespace scaletwin::models {

// What a scenario may change in a model: the input shape and the number of classes. A classes override changes
// the fully connected layers whose out_features is "classes" (in a file) or the classifier (built-in models).
struct ModelOverrides {
  std::optional<Shape> input;
  std::optional<int64_t> classes;
};

// The "format" value written by model_to_json and accepted (optionally) by the reader.
inline constexpr const char* kModelFormat = "scaletwin-model/1";

// Parses a model document; `origin` is the file name used in messages.
Model parse_model_json(const Json& doc, const std::string& origin, const ModelOverrides& overrides = {});
// Reads and parses a model file (InputError when it cannot be read or is invalid).
Model load_model_file(const std::string& path, const ModelOverrides& overrides = {});
// A model without a softmax_cross_entropy layer gets the default loss: one appended after its last layer (named
// "loss"), which must then have `classes` outputs; else an InputError at `path` of `origin`. The JSON reader and
// the ONNX importer call it (models/README.md).
class ModelBuilder;
void append_default_loss(ModelBuilder& b, const std::string& origin, const std::string& path);
// Writes a model in the format above (layers[0], the input, is implicit; "inputs" omitted when a layer reads only
// the layer before it; parameters omitted when they have their default).
Json model_to_json(const Model& model);
// A layer's parameters as a model file writes them (kernel, stride, groups, ...; defaults omitted), without its name,
// type and inputs; is_classifier writes an fc's out_features as "classes".
Json layer_params_json(const Layer& l, bool is_classifier = false);

// A built-in name (zoo.hpp) or the path of a model file. An unknown name that is not a readable file is an
// InputError listing the built-in names; context_file / context_path say where the reference was written (e.g.
// a scenario file and "/model", a measurements file and "/runs/3/model"), "" for the command line. With a
// context, a path that names no file is an error there too (without one, the file reader's own error).
Model load_model(const std::string& name_or_file, const ModelOverrides& overrides = {},
                 const std::string& context_file = "", const std::string& context_path = "");
// The check load_model makes before reading a file, without reading it: a built-in name, or a name that looks like
// a path (a '/', ".json", or an existing file); else the same InputError.
void check_model_reference(const std::string& name_or_file, const std::string& context_file,
                           const std::string& context_path);

}  // namespace scaletwin::models
