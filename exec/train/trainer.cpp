// train(): lowers the scenario for the job's ranks, sets up the backend, the runners and the data, runs every
// rank's endpoint (trainer_worker.cpp, trainer_server.cpp) and gathers the figures into a measurements run record
// (trainer_report.cpp).
#include "exec/train/trainer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/files.hpp"
#include "exec/cpu/cpu_backend.hpp"
#include "exec/train/trainer_internal.hpp"

namespace scaletwin::exec {

int servers_of(const plan::Scenario& scenario, int workers) {
  return plan::servers_at(scenario, workers);
}

int workers_for_ranks(const plan::Scenario& scenario, int ranks) {
  if (scenario.scheme.has_servers() && scenario.scheme.ps.servers_per != plan::PsScheme::Per::kFixed) {
    const int devices_per_node = plan::load_scenario_cluster_spec(scenario).node.devices_per_node;
    for (int workers = ranks - 1; workers >= 1; --workers)
      if (workers + plan::servers_at(scenario, devices_per_node, workers) == ranks) return workers;
    throw InputError(scenario.file, "/scheme/servers",
                     fmt::format("a server per worker {}, and no number of workers that makes {} MPI ranks with "
                                 "their servers (run scaletwin run --np GPUS, which adds them)",
                                 scenario.scheme.ps.servers_per == plan::PsScheme::Per::kNode ? "node" : "GPU", ranks));
  }
  const int servers = servers_of(scenario, 1);
  const int workers = ranks - servers;
  if (workers < 1)
    throw InputError(scenario.file, "/scheme/servers",
                     fmt::format("fewer parameter servers than MPI ranks ({} ranks, {} servers: no worker left; run "
                                 "mpirun -np GPUS+{} or scaletwin run --np GPUS)", ranks, servers, servers));
  return workers;
}

Json measurements_document(const Json& run) {
  return Json{{"format", "scaletwin-measurements/1"}, {"runs", Json::array({run})}};
}

namespace detail {

models::Model data_parallel_model(const Context& ctx) {
  return ctx.mp_first >= 0 ? split_model(ctx.model, ctx.mp_first).backbone : ctx.model;
}

std::vector<BucketSlice> bucket_slices(const plan::IterationPlan& plan, const Network& net) {
  std::vector<BucketSlice> out(plan.collectives.size());
  for (size_t c = 0; c < plan.collectives.size(); ++c) {
    const auto& col = plan.collectives[c];
    if (col.purpose == plan::CollectivePurpose::kActivationGather ||
        col.purpose == plan::CollectivePurpose::kGradientScatter)
      continue;
    std::vector<const ParamSegment*> segments;
    for (int l : col.layers) {
      const ParamSegment* s = net.segment_of(l);
      ST_ASSERT(s != nullptr && !s->model_parallel, fmt::format("'{}' carries layer {}, which has no replicated "
                                                                "parameters in the network", col.label, l));
      segments.push_back(s);
    }
    std::sort(segments.begin(), segments.end(), [](auto* a, auto* b) { return a->offset < b->offset; });
    BucketSlice& slice = out[c];
    slice.offset = segments.front()->offset;
    for (const ParamSegment* s : segments) {
      ST_ASSERT(s->offset == slice.offset + slice.length,
                fmt::format("'{}': its layers are not contiguous in the gradient buffer", col.label));
      slice.length += s->length;
    }
    const int64_t elements = plan.schedules.at(static_cast<size_t>(col.schedule)).elements;
    ST_ASSERT(slice.length == elements, fmt::format("'{}': {} parameters in the network, {} in the schedule", col.label,
                                                    slice.length, elements));
  }
  return out;
}

TrainingData load_training_data(const Context& ctx) {
  const plan::Training& t = ctx.scenario.training;
  TrainingData data;
  if (t.data == plan::Data::kSynthetic) {
    const int64_t count = ctx.options.synthetic_samples > 0 ? ctx.options.synthetic_samples : 64 * ctx.plan.global_batch;
    data.train = make_synthetic(ctx.model.input, ctx.model.classes, count, t.seed);
    return data;
  }
  std::string dataset = t.dataset;
  const models::Shape in = ctx.model.input;
  if (dataset.empty()) dataset = in.c == 1 && in.h == 28 && in.w == 28 ? "fashion-mnist" : in.c == 3 && in.h == 32 ? "cifar10" : "";
  if (dataset.empty())
    throw InputError(ctx.scenario.file, "/training/dataset",
                     fmt::format("a dataset for real data (no built-in dataset has {}×{}×{} inputs)", in.c, in.h, in.w));
  const bool fashion = dataset == "fashion-mnist";
  const std::string dir = !t.dataset_path.empty() ? t.dataset_path
                          : fashion              ? std::string(kFashionMnistDir)
                                                 : std::string("/usr/share/datasets/cifar10");
  data.train = fashion ? load_fashion_mnist(dir, Split::kTrain) : load_cifar10(dir, Split::kTrain);
  data.test = fashion ? load_fashion_mnist(dir, Split::kTest) : load_cifar10(dir, Split::kTest);
  data.has_test = true;
  if (!(data.train.shape == in) || data.train.classes != ctx.model.classes)
    throw InputError(ctx.scenario.file, "/training/dataset",
                     fmt::format("a dataset that fits the model's {}×{}×{} input and {} classes ({} is {}×{}×{}, {} classes)",
                                 in.c, in.h, in.w, ctx.model.classes, dataset, data.train.shape.c, data.train.shape.h,
                                 data.train.shape.w, data.train.classes));
  return data;
}

Json make_report(const Context& ctx, const std::string& backend_name, const std::vector<RankFigures>& figures,
                 const std::vector<std::string>& hosts, const std::vector<EpochStats>& epochs, const Staleness& staleness,
                 const report::CollectiveTimes& collectives, double wall_s);

}  // namespace detail

namespace {

// device "cuda": workers compute on their GPU, parameter servers on the host (their updates are a few
// element-wise passes over the shards, and every byte they handle crosses MPI anyway).
std::unique_ptr<Backend> make_backend(const detail::Context& ctx, bool worker, int threads) {
  const TrainOptions& options = ctx.options;
  if (options.device != "cpu" && options.device != "cuda")
    throw InputError("", "--device", fmt::format("cpu or cuda (got \"{}\")", options.device));
  if (options.device == "cpu" || !worker) return std::make_unique<CpuBackend>(threads);
  const int device = place_on_node(ctx.workers_comm).rank;  // one rank per GPU: its index among the node's workers
  if (options.make_device_backend) return options.make_device_backend(device);
  const int gpus = cuda_device_count();
  if (device >= gpus)
    throw InputError("", "--np", fmt::format("at most one worker rank per GPU with --device cuda: worker {} of its "
                                             "node has no GPU of its own (the node has {})", device, gpus));
  // The CLI has checked cuda_device_available() first. A batch that cannot fit is an input error, before any
  // allocation.
  CudaOptions cuda;
  cuda.precision = ctx.scenario.training.precision == plan::Precision::kBf16   ? CudaPrecision::kBf16
                   : ctx.scenario.training.precision == plan::Precision::kFp16 ? CudaPrecision::kFp16
                                                                                 : CudaPrecision::kFp32;
  if (ctx.scenario.training.precision == plan::Precision::kTf32) cuda.allow_tf32 = true;  // fp32 tensors, TF32 math
  check_cuda_memory(detail::data_parallel_model(ctx), ctx.plan.batch_per_worker, device, cuda);
  return make_cuda_backend(device, cuda);
}

// The workers' communicator on the device (NCCL), bootstrapped over the workers' MPI communicator.
std::unique_ptr<DeviceCommunicator> make_device_communicator(const detail::Context& ctx, Backend& backend) {
  if (ctx.options.make_device_communicator) return ctx.options.make_device_communicator(backend, ctx.workers_comm);
  int rank = 0, ranks = 1;
  ST_MPI_CHECK(MPI_Comm_rank(ctx.workers_comm, &rank));
  ST_MPI_CHECK(MPI_Comm_size(ctx.workers_comm, &ranks));
  const MPI_Comm comm = ctx.workers_comm;
  return make_nccl_communicator(backend, rank, ranks, [comm](void* bytes, size_t size) {
    ST_MPI_CHECK(MPI_Bcast(bytes, static_cast<int>(size), MPI_BYTE, 0, comm));
  });
}

int64_t total_iterations(const detail::Context& ctx) {
  const auto& t = ctx.scenario.training;
  if (ctx.target_accuracy > 0.0) {  // the budget to reach the target in
    const int64_t epochs = ctx.options.max_epochs > 0 ? ctx.options.max_epochs
                           : ctx.options.epochs > 0   ? ctx.options.epochs
                                                      : t.max_epochs;
    return epochs * ctx.iterations_per_epoch;
  }
  if (ctx.options.epochs > 0) return ctx.options.epochs * ctx.iterations_per_epoch;
  if (ctx.options.iterations > 0) return ctx.options.iterations;
  if (t.epochs > 0) return t.epochs * ctx.iterations_per_epoch;
  return t.iterations;
}

// The checkpoint store of the job (null without --checkpoint-every and --resume). Only synchronous plans can be
// resumed exactly: an async server applies pushes in arrival order, which no checkpoint can replay.
std::unique_ptr<CheckpointStore> make_checkpoints(const detail::Context& ctx, Backend& backend,
                                                  const std::string& plan_hash) {
  const TrainOptions& o = ctx.options;
  if (o.checkpoint_every <= 0 && o.resume_dir.empty()) return nullptr;
  if (ctx.plan.sync != plan::SyncKind::kSync)
    throw InputError(ctx.scenario.file, "/scheme/mode",
                     "a synchronous scheme for --checkpoint-every and --resume (an asynchronous parameter server "
                     "applies the workers' pushes in arrival order, so a resumed run could not end with the weights "
                     "of an uninterrupted one)");
  if (o.checkpoint_every > 0 && o.checkpoint_dir.empty())
    throw InputError("", "--checkpoint-dir", "a directory for the checkpoints of --checkpoint-every");
  const plan::Training& t = ctx.scenario.training;
  const Json settings = {{"seed", t.seed}, {"learning_rate", t.learning_rate}, {"lr_reference_batch", t.lr_reference_batch},
                         {"lr_warmup_steps", ctx.lr.warmup_steps}, {"lr_decay_steps", ctx.lr.decay_steps},
                         {"momentum", t.momentum}, {"weight_decay", t.weight_decay}, {"data", plan::data_name(t.data)},
                         {"dataset", t.dataset}, {"samples_per_epoch", ctx.samples_per_epoch},
                         {"precision", plan::precision_name(t.precision)}};
  CheckpointIdentity id{ctx.scenario.name, plan_hash, ctx.ranks, ctx.iterations, hex64(fnv1a64(settings.dump()))};
  return std::make_unique<CheckpointStore>(backend, std::move(id), ctx.comm);
}

}  // namespace

namespace {

// The hybrid's model-parallel fc layers (those whose activations are gathered), checked to split evenly.
void set_model_parallel_layers(detail::Context& ctx, int workers) {
  for (const auto& c : ctx.plan.collectives)
    if (c.purpose == plan::CollectivePurpose::kActivationGather)
      for (int l : c.layers)
        if (ctx.model.layers.at(static_cast<size_t>(l)).kind == models::LayerKind::kFullyConnected) ctx.mp_layers.push_back(l);
  std::sort(ctx.mp_layers.begin(), ctx.mp_layers.end());
  if (!ctx.mp_layers.empty()) ctx.mp_first = ctx.mp_layers.front();
  for (int m : ctx.mp_layers) {  // the hybrid's layouts (trainer_hybrid.cpp) need even slices
    const auto& layer = ctx.model.layers[static_cast<size_t>(m)];
    if (layer.out.elements() % workers != 0)
      throw InputError(ctx.scenario.file, "/scheme/model_parallel",
                       fmt::format("model-parallel layers whose neurons divide evenly among the {} workers (layer "
                                   "\"{}\" has {})", workers, layer.name, layer.out.elements()));
  }
}

// The precision a run trains in is the scenario's, or the run is refused (never run in another precision than it says).
// fp32 everywhere (TF32 convolutions on --device cuda: CudaOptions::allow_tf32, as frameworks do by default); tf32 on
// --device cuda only (fp32 tensors, TF32 tensor-core math). bf16 and fp16 are mixed precision on --device cuda
// (exec/cuda_backend.hpp: half operands on the tensor cores, fp32 master weights); the CPU executor has no such path.
// fp16 scales the loss (exec/loss_scaler.hpp): the workers skip a step whose gradients overflowed, which needs the
// workers to apply the update, so not with parameter servers.
void check_precision(const detail::Context& ctx) {
  const plan::Scenario& scenario = ctx.scenario;
  const plan::Precision p = scenario.training.precision;
  if (p == plan::Precision::kFp32) return;
  const std::string name = plan::precision_name(p);
  if (ctx.options.device != "cuda")
    throw InputError(scenario.file, "/training/precision",
                     fmt::format("\"fp32\" with --device {}: tf32, and bf16 and fp16 mixed precision, run on --device "
                                 "cuda (the CPU executor trains in fp32; got \"{}\")",
                                 ctx.options.device, name));
  const bool servers = std::any_of(ctx.plan.collectives.begin(), ctx.plan.collectives.end(), [](const auto& c) {
    return c.purpose == plan::CollectivePurpose::kPsPushPull;
  });
  if (p == plan::Precision::kFp16 && servers)
    throw InputError(scenario.file, "/training/precision",
                     "\"bf16\" or \"fp32\" with parameter servers: fp16's loss scaling skips the steps whose "
                     "gradients overflow, which the workers find after their backward pass, while the servers apply "
                     "the update (got \"fp16\")");
}

// The executor trains with SGD with momentum, its rate scaled by a stated rule: "lars" and the "tuned" rule (a recipe
// per batch, MLPerf's) are what predict's convergence model reads, not what `run` can train with.
void check_optimizer(const detail::Context& ctx) {
  const plan::Training& t = ctx.scenario.training;
  if (t.optimizer != "sgd")
    throw InputError(ctx.scenario.file, "/training/optimizer",
                     fmt::format("\"sgd\" for run (the executor trains with SGD with momentum; \"{}\" is for predict's "
                                 "convergence model only)", t.optimizer));
  if (t.lr_scaling == "tuned")
    throw InputError(ctx.scenario.file, "/training/lr_scaling",
                     "\"linear\", \"sqrt\" or \"none\" for run (\"tuned\" names a recipe tuned per batch, for predict's "
                     "convergence model only)");
}

void check_batchnorm_values(const detail::Context& ctx);

// What `run` refuses of a scenario's training before it starts: the precision, the optimizer, batch norm's values.
void check_training(const detail::Context& ctx) {
  check_precision(ctx);
  check_optimizer(ctx);
  check_batchnorm_values(ctx);
}

// Training batch norm needs more than one value per channel: a worker's batch times the layer's positions. With one,
// the batch variance is 0 and its unbiased estimate undefined (cuDNN divides by zero; PyTorch refuses such a batch).
void check_batchnorm_values(const detail::Context& ctx) {
  for (const models::Layer& layer : ctx.model.layers) {
    if (layer.kind != models::LayerKind::kBatchNorm || ctx.scenario.batch_per_gpu * layer.out.h * layer.out.w > 1)
      continue;
    throw InputError(ctx.scenario.file, "/batch_per_gpu",
                     fmt::format("a batch of at least 2 (batch norm \"{}\" normalises {}x{} positions per sample "
                                 "and channel, so batch 1 leaves it one value per channel; got 1)",
                                 layer.name, layer.out.h, layer.out.w));
  }
}

void set_target_accuracy(detail::Context& ctx, const TrainOptions& options) {
  const plan::Training& training = ctx.scenario.training;
  ctx.target_accuracy = options.target_accuracy >= 0.0 ? options.target_accuracy : training.target_accuracy;
  if (ctx.target_accuracy > 1.0) throw InputError("", "--target-accuracy", "an accuracy in (0, 1]");
  if (ctx.target_accuracy > 0.0 && (training.data != plan::Data::kReal || !options.evaluate))
    throw InputError(ctx.scenario.file, "/training/data", "real data (a test set to measure the target accuracy on)");
  if (ctx.target_accuracy > 0.0 && !options.resume_dir.empty())
    throw InputError("", "--resume", "a run without a target accuracy (the curve is not checkpointed)");
}

// Iterations, warm-up, evaluation cadence, noise-scale sampling and the learning-rate schedule, from a training
// set of `samples` samples.
void set_schedule(detail::Context& ctx, const TrainOptions& options, int64_t samples, bool worker) {
  const plan::Scenario& scenario = ctx.scenario;
  const plan::Training& training = scenario.training;
  ctx.samples_per_epoch = samples;
  ctx.iterations_per_epoch = samples / ctx.plan.global_batch;
  if (ctx.iterations_per_epoch < 1)
    throw InputError(scenario.file, "/batch_per_gpu",
                     fmt::format("a global batch no larger than the training set ({} > {} samples)",
                                 ctx.plan.global_batch, samples));
  ctx.iterations = total_iterations(ctx);
  if (ctx.iterations < 1) throw InputError(scenario.file, "/training/iterations", "at least one iteration");
  ctx.warmup = std::min(training.warmup_iterations, ctx.iterations - 1);
  const double eval_epochs = options.eval_every_epochs > 0.0 ? options.eval_every_epochs
                             : ctx.target_accuracy > 0.0     ? training.eval_every_epochs
                                                             : 1.0;
  ctx.eval_every = std::max<int64_t>(1, std::llround(eval_epochs * static_cast<double>(ctx.iterations_per_epoch)));
  ctx.noise_scale = worker && detail::plan_measures_noise_scale(ctx.plan);
  ctx.noise_every = options.device == "cuda" ? 8 : 1;

  std::vector<int> talkers;
  for (const auto& c : ctx.plan.collectives)
    if (c.on_demand && std::find(talkers.begin(), talkers.end(), c.participants[0]) == talkers.end())
      talkers.push_back(c.participants[0]);
  ctx.update_batch = talkers.empty() ? ctx.plan.global_batch : ctx.plan.global_batch / static_cast<int64_t>(talkers.size());
  ctx.lr.base_lr = training.learning_rate;
  ctx.lr.reference_batch = training.lr_reference_batch;
  ctx.lr.global_batch = ctx.update_batch;
  ctx.lr.scaling = training.lr_scaling;
  // Step decay at the given fractions of the run, counted in updates (an on-demand server applies one per talker
  // and iteration); none when the run stops at a target.
  const double updates = static_cast<double>(ctx.iterations) * static_cast<double>(std::max<size_t>(1, talkers.size()));
  if (ctx.target_accuracy <= 0.0)
    for (double f : options.lr_decay_at) ctx.lr.decay_steps.push_back(std::llround(f * updates));
  ctx.lr.warmup_steps = warmup_steps_for(static_cast<double>(training.lr_warmup_epochs), samples, ctx.update_batch);
}

// Every rank's figures, on rank 0.
std::vector<detail::RankFigures> gather_figures(const detail::RankFigures& mine, MPI_Comm comm, int ranks) {
  const int per_rank = static_cast<int>(sizeof(detail::RankFigures) / sizeof(double));
  std::vector<detail::RankFigures> figures(static_cast<size_t>(ranks));
  ST_MPI_CHECK(MPI_Gather(&mine, per_rank, MPI_DOUBLE, figures.data(), per_rank, MPI_DOUBLE, 0, comm));
  return figures;
}

// Every rank's host name, on rank 0.
std::vector<std::string> gather_hosts(MPI_Comm comm, int ranks) {
  char host[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  ST_MPI_CHECK(MPI_Get_processor_name(host, &length));
  std::vector<char> flat(static_cast<size_t>(ranks) * MPI_MAX_PROCESSOR_NAME);
  ST_MPI_CHECK(MPI_Gather(host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, flat.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, comm));
  std::vector<std::string> hosts;
  for (int r = 0; r < ranks; ++r) hosts.emplace_back(flat.data() + static_cast<size_t>(r) * MPI_MAX_PROCESSOR_NAME);
  return hosts;
}

// Staleness over the servers and every epoch's loss and accuracy summed over the workers (in place).
Staleness reduce_staleness_and_epochs(const detail::Context& ctx, const detail::RankFigures& mine,
                                       bool worker, std::vector<detail::EpochStats>& epochs) {
  double sums[2] = {mine.pushes, mine.staleness_sum}, totals[2] = {0, 0}, worst = 0;
  ST_MPI_CHECK(MPI_Allreduce(sums, totals, 2, MPI_DOUBLE, MPI_SUM, ctx.comm));
  ST_MPI_CHECK(MPI_Allreduce(&mine.staleness_max, &worst, 1, MPI_DOUBLE, MPI_MAX, ctx.comm));
  if (worker) {
    std::vector<detail::EpochStats> sum(epochs.size());
    const int count = static_cast<int>(epochs.size() * sizeof(detail::EpochStats) / sizeof(double));
    ST_MPI_CHECK(MPI_Allreduce(epochs.data(), sum.data(), count, MPI_DOUBLE, MPI_SUM, ctx.workers_comm));
    epochs = std::move(sum);
  }
  return {static_cast<int64_t>(totals[0]), totals[0] > 0 ? totals[1] / totals[0] : 0.0, static_cast<int64_t>(worst)};
}

// The compute threads of each rank: --threads, else the node's cores shared by its ranks; a waiting rank gives its
// core away only where cores are short.
int compute_threads(MPI_Comm comm, const TrainOptions& options) {
  const int on_node = ranks_on_node(comm);
  const int threads = options.threads > 0 ? options.threads : std::max(1, node_cores() / on_node);
  configure_idle_naps(on_node, threads);
  return threads;
}

}  // namespace

TrainResult train(const plan::Scenario& scenario, const TrainOptions& options, MPI_Comm comm) {
  int ranks = 0;
  ST_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  return train(plan::prepare(scenario, workers_for_ranks(scenario, ranks)), options, comm);
}

TrainResult train(plan::Point point, const TrainOptions& options, MPI_Comm comm) {
  const double start = detail::now_s();
  const plan::Scenario& scenario = point.scenario;
  detail::Context ctx(scenario, options);
  ctx.comm = comm;
  ST_MPI_CHECK(MPI_Comm_rank(comm, &ctx.rank));
  ST_MPI_CHECK(MPI_Comm_size(comm, &ctx.ranks));
  ctx.model = std::move(point.model);
  ctx.plan = std::move(point.plan);
  ST_ASSERT(static_cast<int>(ctx.plan.endpoints.size()) == ctx.ranks,
            fmt::format("the plan has {} endpoints for {} ranks", ctx.plan.endpoints.size(), ctx.ranks));
  check_training(ctx);
  set_model_parallel_layers(ctx, point.gpus);  // the workers
  set_target_accuracy(ctx, options);

  TrainResult result;
  result.plan_hash = hex64(ctx.plan.hash());
  result.rank = ctx.rank;
  result.worker = ctx.plan.endpoints[static_cast<size_t>(ctx.rank)].kind == plan::EndpointKind::kWorker;
  MPI_Comm split = MPI_COMM_NULL;
  ST_MPI_CHECK(MPI_Comm_split(comm, result.worker ? 0 : 1, ctx.rank, &split));
  ctx.workers_comm = result.worker ? split : MPI_COMM_NULL;

  std::unique_ptr<Backend> backend = make_backend(ctx, result.worker, compute_threads(comm, options));
  ctx.backend = backend.get();
  std::unique_ptr<DeviceCommunicator> device;
  if (options.device == "cuda" && result.worker) device = make_device_communicator(ctx, *backend);
  ctx.device = device.get();
  detail::RunnerSet runners(ctx.plan, comm);
  ctx.runners = &runners;

  detail::TrainingData data;
  if (result.worker) data = detail::load_training_data(ctx);
  int64_t samples = data.train.count();
  ST_MPI_CHECK(MPI_Bcast(&samples, 1, MPI_INT64_T, 0, comm));
  set_schedule(ctx, options, samples, result.worker);

  ctx.checkpoints = make_checkpoints(ctx, *backend, result.plan_hash);
  // From here on a rank that stops making progress ends the job (exit 3) instead of hanging it.
  Watchdog watchdog(comm, ctx.rank);
  ctx.watchdog = &watchdog;
  if (ctx.rank == 0 && options.on_start) options.on_start(ctx.plan, ctx.iterations);
  // Times every measured iteration's collectives by plan label (the run record's "collectives") and, with
  // trace_iterations, records the spans of the first ones.
  TraceRecorder trace(ctx.warmup, options.trace_iterations);
  ctx.trace = &trace;
  detail::RankFigures mine;
  std::vector<detail::EpochStats> epochs;
  if (result.worker) {
    detail::WorkerOutcome outcome = detail::run_worker(ctx, data);
    mine = outcome.figures;
    epochs = std::move(outcome.epochs);
    result.weights = std::move(outcome.weights);
  } else {
    mine = detail::run_server(ctx);
  }
  // A run that reached its target stopped early: every rank reports the iterations worker 0 did.
  ST_MPI_CHECK(MPI_Bcast(&ctx.iterations_done, 1, MPI_INT64_T, 0, comm));
  ctx.iterations = ctx.iterations_done;

  result.staleness = reduce_staleness_and_epochs(ctx, mine, result.worker, epochs);
  const std::vector<detail::RankFigures> figures = gather_figures(mine, comm, ctx.ranks);
  const std::vector<std::string> hosts = gather_hosts(comm, ctx.ranks);
  if (!epochs.empty()) {
    result.final_train_loss = epochs.back().samples > 0 ? epochs.back().loss_sum / epochs.back().samples : 0.0;
    result.final_test_accuracy = epochs.back().test_samples > 0 ? epochs.back().test_correct / epochs.back().test_samples : -1.0;
  }
  const report::CollectiveTimes collectives = gather_collective_means(trace, result.worker, ctx.plan, comm);
  if (ctx.rank == 0) {
    result.run = detail::make_report(ctx, backend->name(), figures, hosts, epochs, result.staleness, collectives,
                                     detail::now_s() - start);
    detail::add_curve_figures(ctx, result.run);
  }
  ST_MPI_CHECK(MPI_Bcast(&result.final_test_accuracy, 1, MPI_DOUBLE, 0, comm));
  if (options.trace_iterations > 0) {
    trace.resolve_marks([&backend](int64_t mark) { return backend->mark_time_s(mark); });
    result.trace = gather_chrome_trace(&trace, comm);
  }
  if (split != MPI_COMM_NULL) MPI_Comm_free(&split);
  return result;
}

}  // namespace scaletwin::exec
