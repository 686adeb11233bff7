// Checkpoints inside the training driver: what a worker's state is (its replicas' weights, momentum and batch-norm
// statistics, a parameter-server scheme's shadow copy, the hybrid's classifier slice), when a checkpoint is due,
// the fault-injection hook the tests kill a rank with, and the progress tick (rank 0 ticks the command's progress,
// core/progress.hpp, once per iteration). A server's state is in trainer_server.cpp. The files
// themselves are exec/train/checkpoint.cpp's.
#include <fmt/format.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "core/error.hpp"
#include "core/progress.hpp"
#include "exec/train/trainer_worker.hpp"

namespace scaletwin::exec::detail {

namespace {

constexpr size_t kStatsPerEpoch = 5;  // the fields of EpochStats
static_assert(sizeof(EpochStats) == kStatsPerEpoch * sizeof(double), "EpochStats changed: update the checkpoint");

// SCALETWIN_TEST_KILL=R:K — rank R raises SIGKILL after K iterations (after the checkpoint at K, if one is due).
void test_kill_hook(int rank, int64_t done) {
  const char* spec = std::getenv("SCALETWIN_TEST_KILL");
  if (spec == nullptr) return;
  int kill_rank = -1;
  long long kill_at = -1;
  if (std::sscanf(spec, "%d:%lld", &kill_rank, &kill_at) != 2) return;
  if (kill_rank != rank || kill_at != done) return;
  const double unix_s = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  std::cerr << fmt::format("SCALETWIN_TEST_KILL: rank {} kills itself after iteration {} at unix time {:.3f}\n", rank,
                           done, unix_s);
  std::cerr.flush();
  std::raise(SIGKILL);
}

}  // namespace

std::vector<double> flatten_epochs(const std::vector<EpochStats>& epochs) {
  std::vector<double> flat;
  for (const EpochStats& e : epochs)
    flat.insert(flat.end(), {e.loss_sum, e.correct, e.samples, e.test_correct, e.test_samples});
  return flat;
}

void unflatten_epochs(const std::vector<double>& flat, std::vector<EpochStats>& epochs) {
  ST_ASSERT(flat.size() == epochs.size() * kStatsPerEpoch, "checkpoint: epoch statistics of another run length");
  for (size_t i = 0; i < epochs.size(); ++i) {
    const double* f = flat.data() + i * kStatsPerEpoch;
    epochs[i] = {f[0], f[1], f[2], f[3], f[4]};
  }
}

int64_t resume_state(Context& ctx, const std::vector<StateBuffer>& state, std::vector<double>& stats) {
  if (ctx.options.resume_dir.empty()) return 0;
  ctx.resumed_from = ctx.checkpoints->load(ctx.options.resume_dir, state, stats);
  if (ctx.rank == 0) tick_current_progress(static_cast<size_t>(ctx.resumed_from));
  return ctx.resumed_from;
}

void after_iteration(const Context& ctx, int64_t done, const std::vector<StateBuffer>& state,
                     const std::vector<double>& stats) {
  const int64_t every = ctx.options.checkpoint_every;
  if (every > 0 && done % every == 0) ctx.checkpoints->save(ctx.options.checkpoint_dir, done, state, stats);
  if (ctx.rank == 0) tick_current_progress();
  if (ctx.watchdog != nullptr) ctx.watchdog->beat(done);
  test_kill_hook(ctx.rank, done);
}

std::vector<StateBuffer> Worker::state_buffers() {
  std::vector<StateBuffer> out;
  auto add = [&](const char* name, float* data, int64_t count) {
    if (count > 0) out.push_back({name, data, count});
  };
  add("params", main_->params(), main_->param_count());
  add("momentum", sgd_main_->momentum_buffer(), sgd_main_->count());
  add("batchnorm_statistics", main_->state(), main_->state_count());
  if (ps_) add("ps_shadow", shadow_.data(), main_->replicated_param_count());
  if (split_) {
    add("head_params", head_->params(), head_->param_count());
    add("head_momentum", sgd_head_->momentum_buffer(), sgd_head_->count());
    add("head_batchnorm_statistics", head_->state(), head_->state_count());
  }
  return out;
}

int64_t Worker::restore(std::vector<EpochStats>& epochs) {
  std::vector<double> stats;
  const int64_t first = resume_state(ctx_, state_buffers(), stats);
  if (first == 0) return 0;
  if (scaler_) {  // fp16: the loss scaler's state follows the epochs' statistics (checkpoint below)
    ST_ASSERT(stats.size() >= LossScaler::kStateSize, "checkpoint: no loss scaler state");
    const auto at = stats.end() - static_cast<std::ptrdiff_t>(LossScaler::kStateSize);
    scaler_->restore(std::vector<double>(at, stats.end()));
    stats.erase(at, stats.end());
    fig_.loss_scale = scaler_->scale();
    fig_.skipped_steps = static_cast<double>(scaler_->skipped_steps());
  }
  unflatten_epochs(stats, epochs);
  // Dropout masks are drawn from (seed, training forwards so far, layer): one forward per iteration.
  main_->set_steps(static_cast<uint64_t>(first));
  if (split_) head_->set_steps(static_cast<uint64_t>(first));
  return first;
}

void Worker::checkpoint(int64_t done, const std::vector<EpochStats>& epochs) {
  std::vector<double> stats = flatten_epochs(epochs);
  if (scaler_) {
    const std::vector<double> scaler = scaler_->state();
    stats.insert(stats.end(), scaler.begin(), scaler.end());
  }
  after_iteration(ctx_, done, state_buffers(), stats);
}

}  // namespace scaletwin::exec::detail
