// scaletwin validate: predicts every measured run with a calibration and reports the error of each and the MAPE.
//
//   scaletwin validate --calibration FILE --measurements FILE [--measurements FILE ...] [--json FILE] [--jobs N]
//                      [--report DIR] [--quiet]
//
// --json: {"runs": [{"id", "measured_images_per_sec", "predicted_images_per_sec", "error"}], "mape"} with
// error = (predicted - measured) / measured and mape = mean |error| in percent (../shared/spec.md).
// --report DIR writes DIR/report.json (the same JSON) and DIR/report.html (charts of predicted against measured,
// the runs with their errors, the calibration used: calibrate/validate_report.hpp). Progress (one tick per
// simulated run) goes to stderr unless --quiet.
#include <filesystem>
#include <iostream>

#include "calibrate/validate.hpp"
#include "calibrate/validate_report.hpp"
#include "cli/command.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/progress.hpp"

namespace scaletwin::cli {

namespace {

struct ValidateArgs {
  std::string calibration;
  std::vector<std::string> measurements;
  std::string json;
  std::string report_dir;
  int jobs = 2;
  bool quiet = false;
};

void write_report(const ValidateArgs& a, const std::vector<calibrate::MeasuredRun>& runs,
                  const calibrate::Validation& v, const sim::Calibration& calibration) {
  std::filesystem::create_directories(a.report_dir);
  const std::filesystem::path dir(a.report_dir);
  calibrate::ValidationReportContext context;
  context.measurement_files = a.measurements;
  context.calibration_source = a.calibration;
  context.calibration = sim::calibration_to_json(calibration);
  write_json_output((dir / "report.json").string(), calibrate::validation_to_json(v));
  write_file_atomic((dir / "report.html").string(), calibrate::validation_html(runs, v, context));
}

int run_validate(const ValidateArgs& a) {
  if (a.jobs < 1) throw InputError("", "--jobs", "at least 1");
  const sim::Calibration calibration = sim::load_calibration(a.calibration);
  const auto runs = calibrate::load_measurements(a.measurements);
  Progress progress("validate", runs.size(), progress_style_for_stderr(a.quiet));
  calibrate::Validation v;
  {
    const ProgressScope scope(progress);  // calibrate/simulate.cpp ticks it per finished run
    v = calibrate::validate_runs(runs, calibration, a.jobs);
  }
  progress.finish();
  if (!a.report_dir.empty()) write_report(a, runs, v, calibration);
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
  sub->add_option("--report", args->report_dir, "write report.json and report.html (charts, runs, calibration) into DIR");
  sub->add_option("--jobs", args->jobs, "simulations at a time (default 2)");
  sub->add_flag("-q,--quiet", args->quiet, "no progress on standard error");
  sub->callback([&action, args] { action = [args] { return run_validate(*args); }; });
}

}  // namespace scaletwin::cli
