// scaletwin compare: a prediction against measured runs, per GPU count, per phase and per bucket.
//
//   scaletwin compare PREDICTION MEASUREMENTS [--json FILE]
//
// PREDICTION: what `predict --json` writes (or DIR/report.json of `predict --report DIR`); MEASUREMENTS: a
// measurements file (what `scaletwin run --json` writes). Prints predicted, measured and error for the iteration
// time, images/s, the phases (compute, exposed communication, data, idle where the run has them) and the buckets
// both sides time (calibrate/compare.hpp). --json: {"prediction", "measurements", "scenario", "rows": [{"gpus",
// "run", "figure", "predicted", "measured", "error"}], "predicted_only_gpus", "measured_only_runs"}.
#include <iostream>

#include "calibrate/compare.hpp"
#include "cli/command.hpp"
#include "core/error.hpp"

namespace scaletwin::cli {

namespace {

struct CompareArgs {
  std::string prediction;
  std::string measurements;
  std::string json;
};

int run_compare(const CompareArgs& a) {
  const report::Comparison c = calibrate::compare_files(a.prediction, a.measurements);
  if (!a.json.empty()) write_json_output(a.json, report::comparison_to_json(c));
  if (a.json != "-") std::cout << report::comparison_table(c);
  return kExitOk;
}

}  // namespace

void add_compare_command(CLI::App& root, Action& action) {
  auto args = std::make_shared<CompareArgs>();
  auto* sub = root.add_subcommand("compare", "compare a prediction with measured runs per GPU count, phase and bucket");
  sub->add_option("prediction", args->prediction, "predict --json output (or report.json of predict --report)")
      ->required();
  sub->add_option("measurements", args->measurements, "measurements file (scaletwin run --json)")->required();
  sub->add_option("--json", args->json, "write the JSON result to FILE ('-' = standard output)");
  sub->callback([&action, args] { action = [args] { return run_compare(*args); }; });
}

}  // namespace scaletwin::cli
