// The executor-only build (this folder) without Debian's libonnx: an ONNX model file is refused, naming it, instead
// of imported (models/onnx_import.cpp in the full build).
#include "core/error.hpp"
#include "models/onnx_import.hpp"

namespace scaletwin::models {

Model load_onnx_model(const std::string& path, const ModelOverrides&) {
  throw InputError(path, "", "a model this build can read: the executor-only build reads no ONNX files (the full "
                             "build imports them with libonnx)");
}

}  // namespace scaletwin::models
