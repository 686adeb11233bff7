// Internal to exec/trainer*.cpp: what the worker and server loops share (the job context, the layout of the
// plan's buckets in the flat buffers, the figures each rank reports).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "exec/backend.hpp"
#include "exec/train/checkpoint.hpp"
#include "exec/data.hpp"
#include "exec/network.hpp"
#include "exec/train/noise_scale.hpp"
#include "exec/optimizer.hpp"
#include "exec/train/trainer.hpp"
#include "exec/train/trainer_engine.hpp"
#include "exec/train/watchdog.hpp"

namespace scaletwin::exec::detail {

// One evaluation of the run's curve (trainer_curve.cpp): figures summed over the workers.
struct EvalPoint {
  int64_t iteration = 0;        // iterations done
  double train_s = 0.0;         // training seconds so far, evaluations excluded (worker 0's clock)
  double test_accuracy = -1.0;  // -1: no test set
  double train_loss = -1.0;     // mean over the samples since the previous evaluation (-1: none)
  NoiseScaleWindow noise;       // the gradients since the previous evaluation
};

struct Context {
  Context(const plan::Scenario& s, const TrainOptions& o) : scenario(s), options(o) {}
  const plan::Scenario& scenario;
  const TrainOptions& options;
  models::Model model;
  plan::IterationPlan plan;
  MPI_Comm comm = MPI_COMM_NULL;          // the job
  MPI_Comm workers_comm = MPI_COMM_NULL;  // workers only (MPI_COMM_NULL on servers)
  int rank = 0;
  int ranks = 1;
  int64_t iterations = 0;
  int64_t iterations_per_epoch = 1;
  int64_t samples_per_epoch = 0;
  int64_t warmup = 0;                     // iterations excluded from images/s
  int mp_first = -1;                      // first model-parallel layer when the plan splits the model, else -1
  std::vector<int> mp_layers;             // model-parallel fc layers (model numbering)
  Backend* backend = nullptr;
  // run --device cuda, on workers: the workers' NCCL communicator (the backend is then the GPU's; servers keep a
  // CPU backend and this stays null).
  DeviceCommunicator* device = nullptr;
  RunnerSet* runners = nullptr;
  // Times the collectives of the measured iterations; records spans with run --trace (TrainOptions::trace_iterations)
  TraceRecorder* trace = nullptr;
  // Beats after every iteration, evaluated batch and served request (exec/train/watchdog.hpp); null in unit tests
  // that drive a worker without a job.
  Watchdog* watchdog = nullptr;

  // Samples whose gradient one update applies: the global batch for sync plans; for on-demand pushes, the
  // batch of one talker (a worker, or a node's workers when gradients are aggregated inside the node).
  int64_t update_batch = 0;
  LrSchedule lr;  // for update_batch

  std::unique_ptr<CheckpointStore> checkpoints;  // with --checkpoint-every or --resume (sync schemes)
  int64_t resumed_from = 0;                      // iterations done by the checkpoint the run resumed from

  // Evaluation and time to accuracy (trainer_curve.cpp): a curve point after every eval_every iterations, at
  // every epoch's end and at the last iteration; with a target the run stops at the first point at or above it.
  int64_t eval_every = 1;
  double target_accuracy = 0.0;  // 0: none
  bool noise_scale = false;      // workers measure the gradient noise scale (all-reduce plans, ≥ 2 workers)
  // ... on every noise_every-th iteration: 1 on the CPU; on a GPU each layer's norm waits for its gradient (a
  // stream synchronisation inside the backward pass), so it samples one iteration in 8.
  int64_t noise_every = 1;
  // Set by the worker endpoints (rank 0's go into the run record) and, for iterations_done, by train().
  std::vector<EvalPoint> curve;
  double eval_s = 0.0;
  int64_t iterations_done = 0;
};

// trainer_curve.cpp: whether a curve point is due after `done` iterations; the stop decision of the job after
// one (collective over the job at due points of a synchronous plan with a target, so that its parameter servers
// stop with the workers; on-demand servers stop on the workers' stop requests); the curve and the
// time-to-target figures of the run record.
bool evaluation_due(const Context& ctx, int64_t done);
bool share_stop(const Context& ctx, int64_t done, bool stop);
// Whether the plan lets the workers measure the gradient noise scale: every collective an all-reduce of gradients
// among all the workers (the reduced buffer is then the global batch's mean gradient), and at least 2 workers.
bool plan_measures_noise_scale(const plan::IterationPlan& plan);
void add_curve_figures(const Context& ctx, Json& run);

// Offsets of the plan's collectives in the flat buffers of the (data-parallel) network: a bucket's layers are one
// contiguous slice of params()/grads(). Checked against the schedule's element count.
struct BucketSlice {
  int64_t offset = -1;
  int64_t length = 0;
};
std::vector<BucketSlice> bucket_slices(const plan::IterationPlan& plan, const Network& net);

// The data-parallel network of an endpoint: the backbone before the model-parallel classifier, or the whole model.
models::Model data_parallel_model(const Context& ctx);

struct EpochStats {
  double loss_sum = 0.0;
  double correct = 0.0;
  double samples = 0.0;
  double test_correct = 0.0;
  double test_samples = 0.0;
};

struct RankFigures {
  double compute_s = 0.0;       // compute (everything but data and waiting for communication)
  double exposed_comm_s = 0.0;  // blocked on communication
  double data_s = 0.0;          // batch assembly
  double wall_s = 0.0;
  double iterations = 0.0;
  double images = 0.0;
  double images_after_warmup = 0.0;
  double seconds_after_warmup = 0.0;
  double pushes = 0.0;          // servers: on-demand pushes served
  double staleness_sum = 0.0;
  double staleness_max = 0.0;
  // Workers, measured iterations only (after warm-up): the count, sum and sum of squares of each iteration's
  // compute time, for its coefficient of variation (the run record's compute_jitter).
  double jitter_n = 0.0;
  double jitter_sum_s = 0.0;
  double jitter_sum_sq_s2 = 0.0;
  // Workers: the fraction of the host's CPU time its hypervisor stole over the measured iterations
  // (exec/train/host_cpu.hpp); -1 where /proc/stat cannot tell.
  double cpu_steal = -1.0;
  // Workers in fp16: the loss scale at the end and the steps skipped for overflowing gradients (exec/loss_scaler.hpp).
  double loss_scale = 0.0;
  double skipped_steps = 0.0;
};

struct WorkerOutcome {
  RankFigures figures;
  std::vector<EpochStats> epochs;           // this worker's own share (summed over workers by the caller)
  std::vector<std::vector<float>> weights;  // keep_weights: per model layer
  bool counts_training_stats = true;        // false for hybrid workers other than 0 (they see the same batch)
};

struct TrainingData {
  Dataset train, test;
  bool has_test = false;
};
// Real data (Fashion-MNIST or CIFAR-10, by the scenario or the model's input) or the synthetic set.
TrainingData load_training_data(const Context& ctx);

// Checkpoints (trainer_checkpoint.cpp). resume_state: the iteration to start from, 0 without --resume, else the
// checkpoint's after loading state and stats from it. after_iteration: after `done` iterations, the checkpoint when
// one is due (collective over the job) and the fault-injection hook of the tests (SCALETWIN_TEST_KILL=R:K: rank R
// kills itself with SIGKILL after K iterations, like a crashed process).
int64_t resume_state(Context& ctx, const std::vector<StateBuffer>& state, std::vector<double>& stats);
void after_iteration(const Context& ctx, int64_t done, const std::vector<StateBuffer>& state,
                     const std::vector<double>& stats);
std::vector<double> flatten_epochs(const std::vector<EpochStats>& epochs);
void unflatten_epochs(const std::vector<double>& flat, std::vector<EpochStats>& epochs);

WorkerOutcome run_worker(Context& ctx, const TrainingData& data);
RankFigures run_server(Context& ctx);

}  // namespace scaletwin::exec::detail
