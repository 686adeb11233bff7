// Fuzz target for the model reader (models/model_json.hpp): parse_model_json on the document, then what the CLI
// does with a model it accepted (describe's JSON), and the round trip through model_to_json, which must give the
// same model back.
#include "fuzz/fuzz_common.hpp"
#include "models/describe.hpp"
#include "models/model_json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  scaletwin::fuzz::guard([&] {
    const scaletwin::Json doc = scaletwin::fuzz::parse_document(data, size, "fuzz-model.json");
    const scaletwin::models::Model m = scaletwin::models::parse_model_json(doc, "fuzz-model.json");
    // The reader's promise: parse_model_json(model_to_json(m)) == m, for every model it accepts.
    const scaletwin::Json back = scaletwin::models::model_to_json(m);
    if (!(scaletwin::models::parse_model_json(back, "round-trip.json") == m)) __builtin_trap();
    (void)scaletwin::models::describe_model_json(m);
  });
  return 0;
}
