// Fuzz target for deeply nested documents (issue 54, F2): each input picks a reader (measurements, scenario, model,
// cluster, calibration, or every command's JSON parse alone), a place in a valid document of that kind, a depth (from
// a few levels to 10^6, around kMaxJsonDepth most often), a mix of arrays and objects, and whether the nesting is
// closed. The document is built as text and read the way its command reads it. The expected outcome is the reader's
// answer or an InputError; a stack overflow (ASan reports it), another exception or a message without a path is a
// finding. A document nested deeper than kMaxJsonDepth must be refused, with "nested at most" in the message.
#include <fuzzer/FuzzedDataProvider.h>

#include <string>

#include "calibrate/measurements.hpp"
#include "core/json_reader.hpp"
#include "fuzz/fuzz_common.hpp"
#include "models/model_json.hpp"
#include "plan/scenario.hpp"
#include "sim/calibration.hpp"
#include "topology/cluster.hpp"

namespace {

// Valid documents of each kind, "@" where the nesting goes (a value of an unknown key, of a key the reader copies,
// or an element of an array it walks).
const char* const kMeasurements[] = {
    R"({"format": "scaletwin-measurements/1", "runs": [{"id": "a", "model": "resnet50", "cluster": "aws-p2.8xlarge", "gpus": 1, "batch_per_gpu": 32, "images_per_sec": 50, "raw": @}]})",
    R"({"format": "scaletwin-measurements/1", "runs": [{"id": "a", "model": "resnet50", "cluster": "aws-p2.8xlarge", "gpus": 1, "batch_per_gpu": 32, "images_per_sec": 50, "extra": @}]})",
    R"({"format": "scaletwin-measurements/1", "runs": [@]})",
    R"({"format": "scaletwin-measurements/1", "runs": [{"id": "a", "model": "resnet50", "cluster": "aws-p2.8xlarge", "gpus": 1, "batch_per_gpu": 32, "images_per_sec": 50, "scheme": @}]})",
};
const char* const kScenarios[] = {
    R"({"name": "n", "model": "lenet5", "cluster": "aws-p2.8xlarge", "nodes": 1, "gpus_per_node": 1, "batch_per_gpu": 8, "scheme": @})",
    R"({"name": "n", "model": "lenet5", "cluster": "aws-p2.8xlarge", "nodes": 1, "gpus_per_node": 1, "batch_per_gpu": 8, "scheme": {"name": "allreduce", "algorithm": "ring"}, "sweep": @})",
    R"({"name": "n", "model": "lenet5", "cluster": "aws-p2.8xlarge", "nodes": 1, "gpus_per_node": 1, "batch_per_gpu": 8, "scheme": {"name": "allreduce", "algorithm": "ring"}, "training": @})",
};
const char* const kModels[] = {
    R"({"name": "m", "input": [1, 28, 28], "layers": [{"name": "fc", "type": "fc", "out": 10}, @]})",
    R"({"name": "m", "input": @, "layers": [{"name": "fc", "type": "fc", "out": 10}]})",
};
const char* const kClusters[] = {
    R"({"name": "c", "nodes": 1, "node": {"gpus": 1, "device": "K80-GK210", "links": @}})",
    R"({"name": "c", "nodes": @})",
};
const char* const kCalibrations[] = {
    R"({"format": "scaletwin-calibration/1", "devices": {"default": @}})",
    R"({"format": "scaletwin-calibration/1", "devices": {}, "fit": @})",
};

template <size_t N>
std::string pick(FuzzedDataProvider& in, const char* const (&docs)[N]) {
  return docs[in.ConsumeIntegralInRange<size_t>(0, N - 1)];
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace scaletwin;
  FuzzedDataProvider in(data, size);
  const int reader = in.ConsumeIntegralInRange(0, 5);
  std::string doc;
  switch (reader) {
    case 0: doc = pick(in, kMeasurements); break;
    case 1: doc = pick(in, kScenarios); break;
    case 2: doc = pick(in, kModels); break;
    case 3: doc = pick(in, kClusters); break;
    case 4: doc = pick(in, kCalibrations); break;
    default: doc = "@"; break;
  }
  int depth = 0;
  switch (in.ConsumeIntegralInRange(0, 3)) {
    case 0: depth = in.ConsumeIntegralInRange(0, 1000000); break;
    case 1: depth = in.ConsumeIntegralInRange(0, 20); break;
    default: depth = kMaxJsonDepth - 10 + in.ConsumeIntegralInRange(0, 20); break;  // around the cap
  }
  const bool closed = in.ConsumeIntegralInRange(0, 7) != 0;
  const std::string pattern = in.ConsumeBytesAsString(64);  // per level: an array or an object
  const std::string leaf = in.ConsumeRandomLengthString(16);
  std::string open, close;
  open.reserve(static_cast<size_t>(depth) * 6);
  for (int i = 0; i < depth; ++i) {
    const bool object = !pattern.empty() && (pattern[static_cast<size_t>(i) % pattern.size()] & 1);
    open += object ? "{\"k\":" : "[";
    close += object ? '}' : ']';
  }
  std::string text = doc.substr(0, doc.find('@')) + open + (leaf.empty() ? "1" : "\"" + leaf + "\"");
  if (closed) text += std::string(close.rbegin(), close.rend()) + doc.substr(doc.find('@') + 1);
  const std::string origin = "fuzz-nesting.json";
  fuzz::guard([&] {
    Json parsed;
    try {
      parsed = parse_json_text(text, origin);
    } catch (const InputError& e) {
      const std::string what = e.what();
      if (what.find(origin) == std::string::npos) __builtin_trap();  // the message names the file
      throw;
    }
    // Whatever was accepted nests no deeper than the cap (the document around the nesting adds at most 4 levels).
    if (depth > kMaxJsonDepth + 4) __builtin_trap();
    switch (reader) {
      case 0:
        for (const calibrate::MeasuredRun& run : calibrate::pool_repeats(calibrate::parse_measurements(parsed, origin)))
          (void)calibrate::scenario_of(run);
        break;
      case 1: (void)plan::parse_scenario(parsed, origin); break;
      case 2: (void)models::parse_model_json(parsed, origin); break;
      case 3: (void)topology::parse_cluster_spec(parsed, origin); break;
      case 4: (void)sim::calibration_to_json(sim::parse_calibration(parsed, origin)); break;
      default: (void)parsed.dump(); break;
    }
  });
  return 0;
}
