// scaletwin predict: simulates training iterations with SimGrid for every GPU count of a scenario's sweep.
//
//   scaletwin predict [SCENARIO] [--gpus LIST] [--nodes N] [--calibration FILE|shipped:NAME|none]
//                     [--iterations N] [--warmup N]
//                     [--trace FILE] [--report DIR] [--json FILE] [--fidelity message|fast|auto] [--quiet]
//                     [--layers]
//
// With several scenarios (predict A.json B.json ...): each one's sweep, side by side in one table, one JSON
// ({"format": "scaletwin-predict-side-by-side/1", "differences", "reports"}) and with --report DIR one HTML page,
// noting where they differ in more than the scheme. Without SCENARIO: plan::default_scenario(). Output: a table, or with --json the spec's
// {"scenario", "predictions": [{"gpus", "nodes", "iteration_s", "images_per_sec", "speedup", "efficiency",
// "compute_s", "exposed_comm_s", ...breakdowns}]}. --trace writes Chrome trace format (Perfetto: one track per
// endpoint, one process per GPU count). --report DIR writes report.json, report.txt, trace.json and report.html
// (a self-contained page with the scaling charts, report/html.hpp) into DIR. Progress (one tick per GPU count)
// goes to stderr unless --quiet (core/progress.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <iostream>

#include "cli/command.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/staged_directory.hpp"
#include "core/progress.hpp"
#include "sim/layer_costs.hpp"
#include "sim/predict.hpp"
#include "sim/stacks.hpp"
#include "report/html.hpp"
#include "report/side_by_side.hpp"

namespace scaletwin::cli {

namespace {

// predict notes a framework's dispatch that adds at least this share to a worker's compute step.
constexpr double kDispatchNote = 0.10;

struct PredictArgs {
  std::string scenario;
  std::vector<std::string> more;  // predict A.json B.json ...: the scenarios after the first, side by side
  std::string gpus;
  std::string calibration;
  std::string trace;
  std::string report_dir;
  std::string json;
  int nodes = 0;
  int iterations = 3;
  int warmup = 1;
  std::string fidelity = "auto";
  bool quiet = false;
  bool layers = false;
};

// The largest GPU count whose points --report traces (trace.json grows with GPUs x ops: 42 MB for a sweep to 256);
// --trace FILE traces any sweep.
constexpr int kReportTraceMostGpus = 64;

// --nodes, or GPU counts beyond the scenario's nodes x GPUs per node: the cluster grows to the nodes needed (the
// scenario's node type, network and scheme unchanged), said on standard error and in the report's scenario name.
void grow_cluster(plan::Scenario& scenario, const PredictArgs& a, const std::vector<int>& gpus) {
  const topology::ClusterSpec spec = plan::load_scenario_cluster_spec(scenario);
  const int per_node = std::max(1, scenario.gpus_per_node > 0 ? scenario.gpus_per_node : spec.node.devices_per_node);
  int nodes = a.nodes > 0 ? a.nodes : scenario.nodes;
  for (int g : gpus) nodes = std::max(nodes, (g + per_node - 1) / per_node);
  if (nodes == scenario.nodes) return;
  if (nodes > spec.max_nodes)
    throw InputError(scenario.file, scenario.path_of("/nodes"),
                     fmt::format("at most {} nodes on {} ({} needed)", spec.max_nodes, spec.name, nodes));
  if (!a.quiet)
    std::cerr << fmt::format("predict: {} nodes of {} instead of the scenario's {}{}\n", nodes, spec.name,
                             scenario.nodes, a.nodes > 0 ? " (--nodes)" : " (grown to fit --gpus)");
  scenario.name += fmt::format(" [{} nodes]", nodes);
  scenario.nodes = nodes;
}

// Notes on standard error about one worker's step: a workspace cap that keeps 3x3 convolutions from Winograd, a
// dispatch that is a large share of the step. (A GPU the calibration was not fitted on is said in the table's header.)
void print_step_notes(const plan::Scenario& scenario, const sim::Calibration& calibration) {
  const sim::WorkerStep step = sim::worker_step(scenario, calibration);
  const sim::WorkspaceCap cap = sim::workspace_cap(step);
  if (cap.over_cap > 0)
    std::cerr << fmt::format("predict: {} of the {} 3x3 convolutions of {} need more than {}'s {:.2f} GiB of cuDNN "
                             "workspace as Winograd transforms at batch {} and run without them (a calibration "
                             "file's stacks.{}.conv_workspace_bytes sets another cap)\n",
                             cap.over_cap, cap.convolutions, scenario.model, cap.stack,
                             cap.cap_bytes / (1024.0 * 1024.0 * 1024.0), scenario.batch_per_gpu, cap.stack);
  // A dispatch that is a large share of the step: the prediction rests on that per-op cost.
  const sim::DispatchCost dispatch = sim::dispatch_cost(step);
  if (dispatch.compute_s > 0.0 && dispatch.added_s >= kDispatchNote * dispatch.compute_s)
    std::cerr << fmt::format("predict: {}'s dispatch ({:.0f} us added to each of the {} compute ops of {}'s step at "
                             "batch {}) is {:.0f}% of its compute: at this batch the prediction rests on that cost "
                             "per op (docs/results/k80-calibration.md)\n",
                             dispatch.stack, dispatch.per_op_s * 1e6, dispatch.ops, scenario.model,
                             scenario.batch_per_gpu, 100.0 * dispatch.added_s / dispatch.compute_s);
}

// A scenario file (or the default scenario) with its stack's defaults, grown to the GPU counts asked, and the options
// predict runs it with: its device's calibration unless --calibration names one.
std::pair<plan::Scenario, sim::PredictOptions> prepare(const std::string& path, const PredictArgs& a) {
  plan::Scenario scenario = path.empty() ? plan::default_scenario() : plan::load_scenario(path);
  sim::apply_stack_defaults(scenario);
  sim::PredictOptions options;
  if (!a.gpus.empty()) options.gpus = parse_int_list(a.gpus, "--gpus");
  if (a.nodes < 0) throw InputError("", "--nodes", "a positive number of nodes");
  grow_cluster(scenario, a, options.gpus);
  const topology::DeviceType device = plan::load_scenario_cluster(scenario, 1).spec().node.device;
  sim::ChosenCalibration chosen = sim::choose_calibration(a.calibration, device.name, device.family);
  options.calibration = std::move(chosen.calibration);
  options.calibration_source = chosen.source;
  if (a.iterations < 1) throw InputError("", "--iterations", "a positive number of measured iterations");
  if (a.warmup < 0) throw InputError("", "--warmup", "a number of warm-up iterations >= 0");
  options.run.iterations = a.iterations;
  options.run.warmup = a.warmup;
  options.run.trace = !a.trace.empty() || !a.report_dir.empty();
  options.fidelity = sim::fidelity_from_name(a.fidelity);
  return {std::move(scenario), std::move(options)};
}

// predict A.json B.json ...: each scenario's sweep, then one table, one JSON and one HTML page with them side by side
// (report/side_by_side.hpp), with a note where they differ in more than the scheme.
int run_side_by_side(const PredictArgs& a) {
  if (a.layers) throw InputError("", "--layers", "one scenario (it lists one worker's step)");
  if (!a.trace.empty()) throw InputError("", "--trace", "one scenario (--report DIR charts several)");
  std::vector<std::string> paths = {a.scenario};
  paths.insert(paths.end(), a.more.begin(), a.more.end());
  std::vector<std::pair<plan::Scenario, sim::PredictOptions>> prepared;
  for (const std::string& path : paths) prepared.push_back(prepare(path, a));  // every file checked before any runs
  std::optional<StagedDirectory> out;  // an unusable --report fails before anything is simulated
  if (!a.report_dir.empty()) out.emplace(a.report_dir, "--report");
  std::vector<report::Report> reports;
  for (auto& [scenario, options] : prepared) {
    options.run.trace = false;
    const std::vector<int> sweep = sim::sweep_of(scenario, options.gpus);
    Progress progress(fmt::format("predict {}", scenario.name),
                      static_cast<size_t>(sim::predict_simulations(scenario, sweep, options.calibration)),
                      progress_style_for_stderr(a.quiet));
    options.on_point = [&progress](int) { progress.tick(); };
    reports.push_back(sim::predict(scenario, options));
    progress.finish();
  }
  if (out) {
    out->write("report.json", report::side_by_side_json(reports).dump(2) + "\n");
    out->write("report.txt", report::side_by_side_table(reports));
    out->write("report.html", report::report_html(reports, report::ReportContext{}));
    out->publish();
  }
  if (a.json != "-") std::cout << report::side_by_side_table(reports);
  if (!a.json.empty()) write_json_output(a.json, report::side_by_side_json(reports));
  if (!a.json.empty() && a.json != "-") std::cerr << "predict: written " << a.json << "\n";
  return kExitOk;
}

int run_predict(const PredictArgs& a) {
  if (!a.more.empty()) return run_side_by_side(a);
  auto [scenario, options] = prepare(a.scenario, a);
  if (!a.quiet) print_step_notes(scenario, options.calibration);
  if (a.layers) {  // one worker's step, op by op, instead of the sweep
    const std::vector<sim::OpCost> costs = sim::layer_costs(scenario, options.calibration);
    if (!a.json.empty() && a.json == "-") {
      write_json_output(a.json, Json{{"scenario", scenario.name}, {"calibration", options.calibration_source},
                                     {"ops", sim::layer_costs_json(costs)}});
      return kExitOk;
    }
    std::cout << fmt::format("{}: one worker's step at batch {} (calibration {})\n", scenario.name,
                             scenario.batch_per_gpu, options.calibration_source)
              << sim::format_layer_costs(costs);
    if (!a.json.empty()) {
      write_json_output(a.json, Json{{"scenario", scenario.name}, {"calibration", options.calibration_source},
                                     {"ops", sim::layer_costs_json(costs)}});
      std::cerr << "predict: written " << a.json << "\n";
    }
    return kExitOk;
  }
  const std::vector<int> sweep = sim::sweep_of(scenario, options.gpus);
  std::optional<StagedDirectory> out;  // an unusable --report fails before anything is simulated
  if (!a.report_dir.empty()) out.emplace(a.report_dir, "--report");
  Progress progress("predict", static_cast<size_t>(sim::predict_simulations(scenario, sweep, options.calibration)),
                    progress_style_for_stderr(a.quiet));
  options.on_point = [&progress](int) { progress.tick(); };
  const report::Report report = sim::predict(scenario, options);
  progress.finish();
  if (!a.trace.empty()) write_json_output(a.trace, report::chrome_trace(report));
  if (out) {
    out->write("report.json", report::report_to_json(report).dump(2) + "\n");
    out->write("report.txt", report::report_table(report));
    const bool small = std::all_of(sweep.begin(), sweep.end(), [](int g) { return g <= kReportTraceMostGpus; });
    if (small)
      out->write("trace.json", report::chrome_trace(report).dump(2) + "\n");
    else
      std::cerr << fmt::format("predict: no trace.json in {} (the sweep goes beyond {} GPUs, whose trace would be large: "
                               "--trace FILE writes it)\n", a.report_dir, kReportTraceMostGpus);
    report::ReportContext context;
    context.batch_per_gpu = scenario.batch_per_gpu;
    context.calibration_source = options.calibration_source;
    context.calibration = sim::calibration_to_json(options.calibration);
    const topology::ClusterSpec spec = plan::load_scenario_cluster_spec(scenario);
    context.applied_device_entry = options.calibration.device_key(spec.node.device.name, spec.node.device.family);
    out->write("report.html", report::report_html(report, context));
    out->publish();
  }
  // The table always goes to the terminal, unless the JSON does (--json -); a JSON file is said where it went.
  if (a.json != "-") std::cout << report::report_table(report);
  if (!a.json.empty()) write_json_output(a.json, report::report_to_json(report));
  if (!a.json.empty() && a.json != "-") std::cerr << "predict: written " << a.json << "\n";
  return kExitOk;
}

}  // namespace

void add_predict_command(CLI::App& root, Action& action) {
  auto args = std::make_shared<PredictArgs>();
  auto* sub = root.add_subcommand("predict", "simulate training iterations with SimGrid for every GPU count");
  sub->add_option("scenario", args->scenario, "scenario file (default: the built-in default scenario)");
  sub->add_option("more", args->more,
                  "more scenario files: every scenario's sweep side by side in one table, JSON and HTML report, with "
                  "a note where they differ in more than the scheme (stack, calibration, model, batch, precision, "
                  "cluster)");
  sub->add_option("--gpus", args->gpus, "comma-separated GPU counts (default: the scenario's sweep)")
      ->check([](const std::string& v) {
        return v.empty() ? std::string("a comma-separated list of GPU counts, not empty") : std::string();
      });
  sub->add_option("--calibration", args->calibration,
                  "calibration file, shipped:NAME, or none (default: the shipped calibration of the scenario's device "
                  "in calibrations/, else the built-in defaults); the output names the one used");
  sub->add_option("--nodes", args->nodes,
                  "nodes of the scenario's cluster (default: the scenario's, grown to fit the largest --gpus)")
      ->check(positive_count("nodes"));
  sub->add_option("--iterations", args->iterations, "measured iterations per point (default 3)");
  sub->add_option("--warmup", args->warmup, "warm-up iterations per point, excluded (default 1)");
  sub->add_option("--trace", args->trace, "write a Chrome trace (Perfetto) to FILE");
  sub->add_option("--report", args->report_dir,
                  "write report.json, report.txt, report.html and (for sweeps of at most 64 GPUs) trace.json into DIR");
  sub->add_flag("--layers", args->layers,
                "instead of the sweep: one worker's step at one GPU, op by op (layer, phase, FLOPs, bytes, time, "
                "efficiency and what bounds it)");
  sub->add_option("--fidelity", args->fidelity,
                  "message (SimGrid, every message), fast (collective rounds, max-min fair flows) or auto (default: "
                  "fast above 64 GPUs; asynchronous schemes always message); the report says which ran");
  sub->add_option("--json", args->json, "write the JSON result to FILE ('-' = standard output)");
  sub->add_flag("-q,--quiet", args->quiet, "no progress on standard error");
  sub->callback([&action, args] { action = [args] { return run_predict(*args); }; });
}

}  // namespace scaletwin::cli
