// scaletwin validate: predicts every measured run with a calibration and reports the error of each and the MAPE.
//
//   scaletwin validate --calibration FILE --measurements FILE [--measurements FILE ...] [--json FILE] [--jobs N]
//
// --json: {"runs": [{"id", "measured_images_per_sec", "predicted_images_per_sec", "error"}], "mape"} with
// error = (predicted - measured) / measured and mape = mean |error| in percent (../shared/spec.md).
#include <iostream>

#include "calibrate/validate.hpp"
#include "cli/command.hpp"
#include "core/error.hpp"

namespace scaletwin::cli {

namespace {

struct ValidateArgs {
  std::string calibration;
  std::vector<std::string> measurements;
  std::string json;
  int jobs = 2;
};

int run_validate(const ValidateArgs& a) {
  if (a.jobs < 1) throw InputError("", "--jobs", "at least 1");
  const sim::Calibration calibration = sim::load_calibration(a.calibration);
  const auto runs = calibrate::load_measurements(a.measurements);
  const calibrate::Validation v = calibrate::validate_runs(runs, calibration, a.jobs);
  if (!a.json.empty())
    write_json_output(a.json, calibrate::validation_to_json(v));
  else
    std::cout << calibrate::validation_table(v);
  return kExitOk;
}

}  // namespace

void add_validate_command(CLI::App& root, Action& action) {
  auto args = std::make_shared<ValidateArgs>();
  auto* sub = root.add_subcommand("validate", "predict every measured run and report each error and the MAPE");
  sub->add_option("--calibration", args->calibration, "calibration file")->required();
  sub->add_option("--measurements", args->measurements, "measurements file (repeatable)")->required();
  sub->add_option("--json", args->json, "write the JSON result to FILE ('-' = standard output)");
  sub->add_option("--jobs", args->jobs, "simulations at a time (default 2)");
  sub->callback([&action, args] { action = [args] { return run_validate(*args); }; });
}

}  // namespace scaletwin::cli
