// Writes the generated part of the seed corpora: every zoo model as model_to_json writes it (fuzz_model), and the
// default and ideal calibrations (fuzz_calibration), so that the seeds follow the code. Scenarios and clusters
// are seeded straight from scenarios/ and clusters/ by scripts/fuzz.
//   fuzz_make_seeds OUT_DIR   →  OUT_DIR/model/<name>.json, OUT_DIR/calibration/{default,ideal}.json
#include <filesystem>
#include <fstream>
#include <iostream>

#include "models/model_json.hpp"
#include "models/zoo.hpp"
#include "sim/calibration.hpp"

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: fuzz_make_seeds OUT_DIR\n";
    return 2;
  }
  const fs::path out = argv[1];
  fs::create_directories(out / "model");
  fs::create_directories(out / "calibration");
  for (const std::string& name : scaletwin::models::builtin_model_names())
    std::ofstream(out / "model" / (name + ".json"))
        << scaletwin::models::model_to_json(scaletwin::models::make_builtin_model(name)).dump(1) << "\n";
  std::ofstream(out / "calibration" / "default.json")
      << scaletwin::sim::calibration_to_json(scaletwin::sim::default_calibration()).dump(1) << "\n";
  std::ofstream(out / "calibration" / "ideal.json")
      << scaletwin::sim::calibration_to_json(scaletwin::sim::ideal_calibration()).dump(1) << "\n";
  return 0;
}
