// The training driver: one MPI rank per endpoint of the IterationPlan runs that endpoint's program for real.
//
// train() lowers the scenario for the communicator's size (workers = ranks − parameter servers), so that rank r is
// plan.endpoints[r] (workers first, then servers), and executes every endpoint's program item by item: a worker's
// compute items are Network forward / backward / optimizer work, its communication items are the plan's
// CollectiveInstances, run by ScheduleRunner (exec/comm/comm.hpp) on slices of the flat parameter and gradient
// buffers, started as soon as the plan's deps are met (a gradient bucket right after its last layer's weight
// gradient, while the rest of the backward pass runs). Servers apply SGD to their shard of each bucket between the
// push and the pull; on-demand collectives (async, and between node leaders and servers for mixed_async) are
// requested by their initiator and served in arrival order. The hybrid scheme runs the backbone data-parallel and
// the model-parallel classifier on the global batch through the plan's all-gather and reduce-scatter schedules.
//
// Data: epoch e is a permutation of the training set drawn from (seed, e); iteration i of the epoch takes the
// global batch at positions [i·G, (i+1)·G) and worker w the w-th of its P equal parts, so that the same seed
// gives the same global batches for any worker count (1 rank with batch G sees exactly what P ranks with G / P
// see together; in deterministic CPU mode the weights then agree up to float reassociation).
//
// The result is a run record of the measurements format (../shared/spec.md) with images/s after warm-up,
// per-phase times, loss and accuracy per epoch, test accuracy, per-rank figures, staleness, the plan hash and the
// precision (bf16 and fp16 mixed precision on --device cuda only; fp16's final loss scale and skipped steps under
// "loss_scaling"), the curve (test
// accuracy, loss and the gradient noise scale at every evaluation) and the time to the target accuracy.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/json_reader.hpp"
#include "exec/comm/mpi_check.hpp"
#include "exec/cuda_backend.hpp"
#include "plan/iteration_plan.hpp"
#include "plan/scenario.hpp"

namespace scaletwin::exec {

struct TrainOptions {
  int64_t iterations = 0;          // > 0: train this many iterations (overrides the scenario)
  int64_t epochs = 0;              // > 0: train this many epochs (overrides the scenario and iterations)
  std::string device = "cpu";      // cpu | cuda (workers on GPUs; parameter servers stay on the host's CPU)
  int threads = 0;                 // compute threads per rank; 0: the node's cores / ranks on the node
  bool keep_weights = false;       // return the final full weights of the model on every worker (tests)
  int64_t synthetic_samples = 0;   // synthetic data: training-set size (0: 64 global batches)
  // The rate is divided by 10 after these fractions of the run: Goyal et al.'s step decay (÷10 at epochs 30, 60
  // and 80 of 90) compressed into a short run as one step at 3/4, which is what lets lenet5 settle above 88% on
  // Fashion-MNIST in 2 epochs (without it the last epoch's test accuracy wanders between 86 and 88%).
  std::vector<double> lr_decay_at = {0.75};
  bool evaluate = true;            // test accuracy at every curve point (real data only)
  // Time to accuracy (< 0 or 0: the scenario's training block): stop at the first evaluation whose test accuracy
  // reaches target_accuracy, after at most max_epochs epochs, evaluating every eval_every_epochs epochs (and at
  // every epoch's end). With a target the rate has no step decay (warm-up, then constant), so that the time to
  // the target does not depend on the epoch budget.
  double target_accuracy = -1.0;
  int64_t max_epochs = 0;
  double eval_every_epochs = 0.0;
  // Checkpoints (exec/train/checkpoint.hpp; synchronous schemes only): after every checkpoint_every iterations into
  // checkpoint_dir; resume_dir: continue from the checkpoint there, ending with exactly the weights of an
  // uninterrupted run (deterministic CPU mode: same threads). Setting either on an async scheme is an InputError.
  int64_t checkpoint_every = 0;
  std::string checkpoint_dir;
  std::string resume_dir;
  // > 0: record the first trace_iterations measured iterations (after warm-up) into TrainResult::trace
  // (exec/train/trace_recorder.hpp).
  int64_t trace_iterations = 0;
  // device "cuda": a worker's backend on its GPU and the workers' device communicator (collective over the
  // workers' communicator). Empty: make_cuda_backend(local worker index) and make_nccl_communicator bootstrapped
  // with MPI_Bcast (exec/cuda_backend.hpp). The tests put a recording fake here (tests/exec/test_trainer_device.cpp).
  std::function<std::unique_ptr<Backend>(int device)> make_device_backend;
  std::function<std::unique_ptr<DeviceCommunicator>(Backend& backend, MPI_Comm workers)> make_device_communicator;
  // Called on rank 0 once the plan is lowered, before training (the CLI prints the plan hash there).
  std::function<void(const plan::IterationPlan& plan, int64_t iterations)> on_start;
};

struct Staleness {
  int64_t pushes = 0;        // on-demand pushes served
  double mean = 0.0;         // updates applied by the server between a talker's pull and its next push
  int64_t max = 0;
};

struct TrainResult {
  std::string plan_hash;                     // hex64(plan.hash()), as the simulator prints it
  int rank = 0;
  bool worker = true;
  Json run;                                  // the measurements run record (complete on rank 0)
  double final_test_accuracy = -1.0;         // -1: no test set (synthetic data) or not evaluated
  double final_train_loss = 0.0;
  Json trace;                                // rank 0 with trace_iterations: the Chrome trace of every rank
  Staleness staleness;                       // async / mixed_async (every rank gets the job's figures)
  std::vector<std::vector<float>> weights;   // keep_weights, workers: per model layer, the whole layer's params
};

// Workers and server endpoints of a scenario on `ranks` MPI ranks: the GPU count is ranks minus the servers of
// a parameter-server scheme (plan::servers_at: with "servers": "per_node" or "per_gpu", the worker count that
// adds up to ranks with its servers). InputError when ranks leave no worker.
int workers_for_ranks(const plan::Scenario& scenario, int ranks);
// The server ranks beside `workers` worker ranks.
int servers_of(const plan::Scenario& scenario, int workers);

// Trains a prepared point (plan::prepare) on every rank of comm (collective): one rank per endpoint of its plan.
// Exceptions propagate: wrap the call in run_or_abort.
TrainResult train(plan::Point point, const TrainOptions& options, MPI_Comm comm);
// The same for a scenario on comm's ranks: plan::prepare(scenario, workers_for_ranks(scenario, ranks)), then the
// above.
TrainResult train(const plan::Scenario& scenario, const TrainOptions& options, MPI_Comm comm);

// {"format": "scaletwin-measurements/1", "runs": [run]}
Json measurements_document(const Json& run);

}  // namespace scaletwin::exec
