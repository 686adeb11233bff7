// scaletwin compare: a prediction against measured runs, per GPU count, per phase and per bucket.
//
//   scaletwin compare PREDICTION MEASUREMENTS [--json FILE]
//
// The runs joined must be the configuration predicted (model, cluster, batch per GPU, scheme, plan hash): else exit 2
// naming the run's field, unless --allow-mismatch (then each mismatch is said on standard error).
// PREDICTION: what `predict --json` writes (or DIR/report.json of `predict --report DIR`); MEASUREMENTS: a
// measurements file (what `scaletwin run --json` writes). Prints predicted, measured and error for the iteration
// time, images/s, the phases (compute, exposed communication, data, idle where the run has them) and the buckets
// both sides time (calibrate/compare.hpp). --json: {"prediction", "measurements", "scenario", "rows": [{"gpus",
// "run", "figure", "predicted", "measured", "error"}], "predicted_only_gpus", "measured_only_runs"}.
#include <fmt/format.h>

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
  bool allow_mismatch = false;
};

int run_compare(const CompareArgs& a) {
  std::vector<calibrate::Mismatch> mismatches;
  const report::Comparison c =
      calibrate::compare_files(a.prediction, a.measurements, a.allow_mismatch, &mismatches);
  for (const calibrate::Mismatch& m : mismatches)
    std::cerr << fmt::format("compare: {} at {}: {} against the prediction's {} (compared anyway: --allow-mismatch)\n",
                             a.measurements, m.field, m.measured, m.predicted);
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
  sub->add_flag("--allow-mismatch", args->allow_mismatch,
                "compare runs whose model, cluster, batch per GPU, scheme or plan hash differ from the prediction's "
                "(default: exit 2 naming the first)");
  sub->callback([&action, args] { action = [args] { return run_compare(*args); }; });
}

}  // namespace scaletwin::cli
