// scaletwin run: executes a scenario for real, one MPI rank per plan endpoint (workers, then parameter servers).
//
//   mpirun -np P scaletwin run SCENARIO [--iterations N | --epochs E] [--device cpu|cuda] [--json FILE]
//                                       [--threads T] [--checkpoint-every N --checkpoint-dir DIR]
//                                       [--resume DIR] [--weights-out FILE] [--trace FILE] [--quiet]
//                                       [--target-accuracy A [--max-epochs E]] [--eval-every E] [--seed S]
//   scaletwin run SCENARIO --np P ...   launches the mpirun line above itself, with P GPUs plus the scheme's servers
//
// P is the GPU count (workers); a parameter-server scheme adds its servers as extra ranks. Rank 0 prints the plan
// hash (the simulator prints the same for the same scenario and GPU count) and writes the measurements file
// (--json FILE, '-' for standard output; by default scaletwin-run-ID.json in the current directory, printed).
// Any rank that fails prints its rank and host and takes the job down (MPI_Abort): exit 3 for a system error.
// Checkpoints (exec/train/checkpoint.hpp): --checkpoint-every N writes one into DIR after every N iterations; --resume DIR
// continues from the one there (same scenario, GPU count and run length, else exit 2) and ends with the weights of
// an uninterrupted run. --weights-out FILE: rank 0 writes the final weights, every layer's parameters in model
// order as little-endian float32, nothing else (the tests compare an interrupted run's with an uninterrupted one's).
// --trace FILE: rank 0 writes a Chrome trace of the first kTraceIterations measured iterations of every rank, with
// the event names and categories of predict --trace (exec/train/trace_recorder.hpp).
// --target-accuracy A: evaluate every --eval-every epochs and stop at the first evaluation at or above A; the
// measurements record the curve, the time to the target and, for all-reduce schemes, the gradient noise scale.
// Progress of the iterations goes to standard error (a bar with ETA on a terminal, a line every few seconds
// otherwise); --quiet turns it off.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "cli/command.hpp"
#include "cli/launch.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/progress.hpp"
#include "exec/cuda_backend.hpp"
#include "exec/train/trainer.hpp"
#include "plan/scenario.hpp"
#include "sim/stacks.hpp"

namespace scaletwin::cli {

namespace {

constexpr int64_t kTraceIterations = 5;  // run --trace records at most this many measured iterations

struct RunArgs {
  std::string scenario;
  int64_t iterations = 0;
  int64_t epochs = 0;
  std::string device = "cpu";
  int np = 0;
  std::string json;
  int threads = 0;
  int64_t checkpoint_every = 0;
  std::string checkpoint_dir;
  std::string resume_dir;
  std::string weights_out;
  std::string trace;
  bool quiet = false;
  double target_accuracy = -1.0;
  int64_t max_epochs = 0;
  double eval_every = 0.0;
  int64_t seed = -1;
};

std::vector<std::string> rank_arguments(const RunArgs& a) {
  std::vector<std::string> args{"run", a.scenario, "--device", a.device};
  if (a.iterations > 0) args.insert(args.end(), {"--iterations", std::to_string(a.iterations)});
  if (a.epochs > 0) args.insert(args.end(), {"--epochs", std::to_string(a.epochs)});
  if (!a.json.empty()) args.insert(args.end(), {"--json", a.json});
  if (a.threads > 0) args.insert(args.end(), {"--threads", std::to_string(a.threads)});
  if (a.checkpoint_every > 0) args.insert(args.end(), {"--checkpoint-every", std::to_string(a.checkpoint_every)});
  if (!a.checkpoint_dir.empty()) args.insert(args.end(), {"--checkpoint-dir", a.checkpoint_dir});
  if (!a.resume_dir.empty()) args.insert(args.end(), {"--resume", a.resume_dir});
  if (!a.weights_out.empty()) args.insert(args.end(), {"--weights-out", a.weights_out});
  if (!a.trace.empty()) args.insert(args.end(), {"--trace", a.trace});
  if (a.quiet) args.emplace_back("--quiet");
  if (a.target_accuracy >= 0.0) args.insert(args.end(), {"--target-accuracy", fmt::format("{}", a.target_accuracy)});
  if (a.max_epochs > 0) args.insert(args.end(), {"--max-epochs", std::to_string(a.max_epochs)});
  if (a.eval_every > 0.0) args.insert(args.end(), {"--eval-every", fmt::format("{}", a.eval_every)});
  if (a.seed >= 0) args.insert(args.end(), {"--seed", std::to_string(a.seed)});
  return args;
}

// Runs `mpirun -np P+servers THIS_PROGRAM run ...` and returns its exit code (cli/launch.hpp).
int launch_mpirun(const RunArgs& a, const plan::Scenario& scenario) {
  return launch_under_mpirun("run", a.np + exec::servers_of(scenario, a.np), rank_arguments(a));
}

void print_summary(const exec::TrainResult& r) {
  const Json& run = r.run;
  fmt::print("{}: {} images/s after {} warm-up iterations ({} iterations, {:.1f} s)\n", run["id"].get<std::string>(),
             fmt::format("{:.1f}", run["images_per_sec"].get<double>()), run["warmup_iterations"].get<int64_t>(),
             run["iterations"].get<int64_t>(), run["wall_s"].get<double>());
  const Json& ph = run["phases_per_iteration_s"];
  fmt::print("per iteration: compute {:.4f} s, exposed communication {:.4f} s, data {:.4f} s\n",
             ph["compute"].get<double>(), ph["exposed_comm"].get<double>(), ph["data"].get<double>());
  auto num = [](const Json& v) { return v.is_null() ? std::string("-") : fmt::format("{:.4f}", v.get<double>()); };
  for (const Json& e : run["epochs"])
    fmt::print("epoch {}: train loss {}, train accuracy {}, test accuracy {}\n", e["epoch"].get<int>(),
               num(e["train_loss"]), num(e["train_accuracy"]), num(e["test_accuracy"]));
  if (run.contains("staleness"))
    fmt::print("staleness: {} pushes, mean {:.2f}, max {}\n", r.staleness.pushes, r.staleness.mean, r.staleness.max);
  if (run.contains("noise_scale")) {
    const Json& ns = run["noise_scale"]["whole_run"];
    if (!ns.is_null() && !ns["b_simple"].is_null())
      fmt::print("gradient noise scale B_simple: {:.0f} over the run (global batch {})\n", ns["b_simple"].get<double>(),
                 run["global_batch"].get<int64_t>());
  }
  if (run.contains("time_to_target")) {
    const Json& t = run["time_to_target"];
    if (t["reached"].get<bool>())
      fmt::print("target accuracy {} reached after {:.1f} s of training ({:.2f} epochs, {:.0f} images; evaluation "
                 "{:.1f} s apart)\n", t["target_accuracy"].get<double>(), t["seconds"].get<double>(),
                 t["epochs"].get<double>(), t["images"].get<double>(), run["eval_s"].get<double>());
    else
      fmt::print("target accuracy {} not reached in {} iterations\n", t["target_accuracy"].get<double>(),
                 run["iterations"].get<int64_t>());
  }
}

// Every layer's parameters in model order, little-endian float32 (x86 and ARM hosts are little-endian).
void write_weights(const std::string& path, const std::vector<std::vector<float>>& weights) {
  std::string content;
  for (const auto& layer : weights)
    content.append(reinterpret_cast<const char*>(layer.data()), layer.size() * sizeof(float));
  write_file_atomic(path, content);
}

int run_ranks(const RunArgs& a, const plan::Scenario& scenario) {
  exec::TrainOptions options;
  options.checkpoint_every = a.checkpoint_every;
  options.checkpoint_dir = a.checkpoint_dir.empty() ? a.resume_dir : a.checkpoint_dir;
  options.resume_dir = a.resume_dir;
  options.keep_weights = !a.weights_out.empty();
  options.iterations = a.iterations;
  options.epochs = a.epochs;
  options.device = a.device;
  options.threads = a.threads;
  options.trace_iterations = a.trace.empty() ? 0 : kTraceIterations;
  options.target_accuracy = a.target_accuracy;
  options.max_epochs = a.max_epochs;
  options.eval_every_epochs = a.eval_every;
  // Progress of the iterations on standard error (rank 0 ticks it after each iteration, exec/train/trainer_checkpoint.cpp).
  std::unique_ptr<Progress> progress;
  std::unique_ptr<ProgressScope> progress_scope;
  options.on_start = [&](const plan::IterationPlan& plan, int64_t iterations) {
    progress = std::make_unique<Progress>("run", static_cast<size_t>(iterations), progress_style_for_stderr(a.quiet));
    progress_scope = std::make_unique<ProgressScope>(*progress);
    fmt::print("scaletwin run: {} on {} workers + {} servers, {} iterations, plan hash {}\n", scenario.name,
               plan.workers, plan.endpoints.size() - static_cast<size_t>(plan.workers), iterations, hex64(plan.hash()));
    std::fflush(stdout);
  };
  const exec::TrainResult result = exec::train(scenario, options, MPI_COMM_WORLD);
  if (progress) progress->finish();
  if (result.rank != 0) return kExitOk;
  if (!a.weights_out.empty()) write_weights(a.weights_out, result.weights);
  if (!a.trace.empty()) write_json_output(a.trace, result.trace);
  const Json document = exec::measurements_document(result.run);
  std::string path = a.json;
  if (path.empty()) path = fmt::format("scaletwin-run-{}.json", result.run["id"].get<std::string>());
  write_json_output(path, document);
  if (path != "-") {
    print_summary(result);
    fmt::print("measurements written to {}\n", path);
  }
  return kExitOk;
}

int run_run(const RunArgs& a) {
  if (a.device != "cpu" && a.device != "cuda")
    throw InputError("", "--device", fmt::format("cpu or cuda (got \"{}\")", a.device));
  plan::Scenario scenario = plan::load_scenario(a.scenario);
  sim::apply_stack_defaults(scenario);
  if (a.seed >= 0) scenario.training.seed = static_cast<uint64_t>(a.seed);
  if (a.device == "cuda") {
    std::string why;
    if (!exec::cuda_device_available(&why)) throw SystemError(fmt::format("no CUDA device was found ({})", why));
  }
  if (a.checkpoint_every > 0 && a.checkpoint_dir.empty() && a.resume_dir.empty())
    throw InputError("", "--checkpoint-dir", "a directory for the checkpoints of --checkpoint-every");
  if (a.np > 0) return launch_mpirun(a, scenario);
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) MPI_Init(nullptr, nullptr);
  const int rc = exec::run_or_abort(MPI_COMM_WORLD, [&] { return run_ranks(a, scenario); });
  MPI_Finalize();
  return rc;
}

}  // namespace

void add_run_command(CLI::App& root, Action& action) {
  auto args = std::make_shared<RunArgs>();
  auto* sub = root.add_subcommand("run", "execute the scenario for real, one MPI rank per device (mpirun -np P)");
  sub->add_option("scenario", args->scenario, "scenario file")->required();
  auto* it = sub->add_option("--iterations", args->iterations, "train N iterations (default: the scenario's)")
                 ->check(CLI::PositiveNumber);
  auto* ep = sub->add_option("--epochs", args->epochs, "train E epochs (default: the scenario's)")->check(CLI::PositiveNumber);
  it->excludes(ep);
  sub->add_option("--device", args->device, "cpu or cuda (default cpu)");
  sub->add_option("--np", args->np, "launch mpirun with P GPUs (plus the scheme's server ranks)")
      ->check(CLI::Range(1, 1 << 16));
  sub->add_option("--json", args->json, "write the measurements file to FILE ('-' = standard output)");
  sub->add_option("--threads", args->threads, "compute threads per rank (default: cores / ranks on the node)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--checkpoint-every", args->checkpoint_every,
                  "write a checkpoint after every N iterations (synchronous schemes)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--checkpoint-dir", args->checkpoint_dir, "directory of the checkpoints (default: the --resume one)");
  sub->add_option("--resume", args->resume_dir, "continue from the checkpoint in DIR (same scenario, GPUs, iterations)");
  sub->add_option("--weights-out", args->weights_out, "write the final weights (float32, model order) to FILE");
  sub->add_option("--trace", args->trace,
                  fmt::format("write a Chrome trace of the first {} measured iterations of every rank to FILE",
                              kTraceIterations));
  sub->add_flag("-q,--quiet", args->quiet, "no progress on standard error");
  sub->add_option("--target-accuracy", args->target_accuracy,
                  "stop at the first evaluation whose test accuracy reaches A (default: the scenario's)")
      ->check(CLI::Range(0.0, 1.0));
  sub->add_option("--max-epochs", args->max_epochs, "with a target: give up after E epochs (default: the scenario's, 30)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--eval-every", args->eval_every,
                  "evaluate every E epochs, fractions allowed (default: 0.25 with a target, else every epoch)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--seed", args->seed, "the data order and initial weights' seed (default: the scenario's)")
      ->check(CLI::NonNegativeNumber);
  sub->callback([&action, args] { action = [args] { return run_run(*args); }; });
}

}  // namespace scaletwin::cli
