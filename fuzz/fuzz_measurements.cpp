// Fuzz target for the measurements reader (calibrate/measurements.hpp, format "scaletwin-measurements/1"):
// parse_measurements and pool_repeats, then what calibrate and validate do with each accepted run before simulating
// it (its scenario, the fields the run filters read).
#include "calibrate/measurements.hpp"
#include "fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  scaletwin::fuzz::guard([&] {
    using namespace scaletwin::calibrate;
    const scaletwin::Json doc = scaletwin::fuzz::parse_document(data, size, "fuzz-measurements.json");
    for (const MeasuredRun& run : pool_repeats(parse_measurements(doc, "fuzz-measurements.json"))) {
      (void)scenario_of(run);
      for (const char* field : {"gpus", "nodes", "gpus_per_node", "batch_per_gpu", "model", "cluster", "data",
                                "scheme", "id", "images_per_sec", "source"})
        (void)run_field(run, field);
    }
  });
  return 0;
}
