// Fuzz target for the scenario reader (plan/scenario.hpp): parse_scenario, the scheme's description and JSON,
// and — when the scenario names a built-in model — that model with the scenario's input and classes overrides
// (shape inference on hostile sizes). Model and cluster files are never opened: a fuzzed path could name any file.
#include "fuzz/fuzz_common.hpp"
#include "models/zoo.hpp"
#include "plan/scenario.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  scaletwin::fuzz::guard([&] {
    using namespace scaletwin;
    const Json doc = fuzz::parse_document(data, size, "fuzz-scenario.json");
    const plan::Scenario s = plan::parse_scenario(doc, "fuzz-scenario.json");
    (void)s.scheme.describe();
    const Json scheme = s.scheme.to_json();
    (void)plan::parse_scheme(JsonObject::root(scheme, "scheme-round-trip.json"));
    if (models::is_builtin_model(s.model)) {
      std::optional<models::Shape> input;
      if (s.input) input = models::Shape{(*s.input)[0], (*s.input)[1], (*s.input)[2]};
      (void)models::make_builtin_model(s.model, input, s.classes);
    }
  });
  return 0;
}
