// Fuzz target for the calibration reader (sim/calibration.hpp): parse_calibration, then the round trip through
// calibration_to_json, which must read back to the same document.
#include "fuzz/fuzz_common.hpp"
#include "sim/calibration.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  scaletwin::fuzz::guard([&] {
    using namespace scaletwin::sim;
    const scaletwin::Json doc = scaletwin::fuzz::parse_document(data, size, "fuzz-calibration.json");
    const Calibration c = parse_calibration(doc, "fuzz-calibration.json");
    const scaletwin::Json back = calibration_to_json(c);
    if (calibration_to_json(parse_calibration(back, "round-trip.json")) != back) __builtin_trap();
  });
  return 0;
}
