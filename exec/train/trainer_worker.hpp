// Internal to exec/trainer*.cpp: the worker endpoint (trainer_worker.cpp; the hybrid's model-parallel head in
// trainer_hybrid.cpp; evaluation and the full weights in trainer_eval.cpp).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "exec/loss_scaler.hpp"

#include "exec/train/trainer_internal.hpp"

namespace scaletwin::exec::detail {

class Worker {
 public:
  Worker(Context& ctx, const TrainingData& data);
  ~Worker();
  WorkerOutcome run();

 private:
  // trainer_worker.cpp
  void find_local_update_ranges();
  bool on_device(int collective) const;  // runs on ctx_.device (NCCL) rather than staged through MPI
  float* buffer_of(int item);
  void on_gradient_ready(int model_layer);
  void load_batch(const std::vector<int64_t>& permutation, int64_t index_in_epoch);
  LossStats iteration(int64_t step, const std::vector<int64_t>& permutation, int64_t index_in_epoch);
  void update(int64_t step);
  // fp16 (scaler_ set): whether every worker's gradients of this step are finite (collective over the workers),
  // and, when they are, the gradients divided by the loss scale; then the scaler's update. Returns whether the
  // step is to be applied.
  bool unscale_gradients();
  float amp_scale() const { return scaler_ ? static_cast<float>(scaler_->scale()) : 1.0f; }
  // The compute span from trace_mark_ to a mark taken now (Backend::mark: on a GPU, where its stream has got to) as
  // `phase`, when the iteration is traced; the next span starts at that mark.
  void trace_span(plan::Phase phase, std::string layer = {});  // layer: a backward_weight span's (trace_recorder.hpp)
  void trace_restart();  // the next compute span starts at a mark taken now
  // trainer_hybrid.cpp
  void make_head();
  LossStats hybrid_pass();
  void gather_output(int head_layer, const float* slice_output, float* full_output, int64_t n);
  void reduce_input_gradient(int head_layer, float* input_gradient, int64_t n);
  // Runs a collective at once (the next compute step needs it), closing the compute span before it as `before`.
  void run_blocking(int collective, plan::Phase before);
  int64_t slice_begin(int64_t features, int rank) const { return plan::part_offset(features, P_, rank); }
  // trainer_eval.cpp
  void evaluate(EpochStats& stats);
  // A curve point after `done` iterations (collective over the workers): the test accuracy (into `epoch` too at
  // an epoch's end), the window's loss and noise-scale sums; true when it reaches the target.
  bool record_point(EpochStats& epoch, int64_t done, double train_s, bool epoch_end);
  std::vector<std::vector<float>> full_weights();
  // trainer_checkpoint.cpp: the iteration to start from (after loading a checkpoint with --resume), the checkpoint
  // hook after each iteration, this worker's state
  int64_t restore(std::vector<EpochStats>& epochs);
  void checkpoint(int64_t iterations_done, const std::vector<EpochStats>& epochs);
  std::vector<StateBuffer> state_buffers();

  Context& ctx_;
  const TrainingData& data_;
  ItemEngine engine_;
  int w_ = 0, P_ = 1;
  int64_t b_ = 0, G_ = 0;
  bool split_ = false, ps_ = false, counts_stats_ = true;
  std::unique_ptr<Network> main_, head_, eval_;
  std::unique_ptr<Sgd> sgd_main_, sgd_head_;
  Buffer shadow_, mp_scratch_;
  std::vector<BucketSlice> slices_;        // per collective
  std::vector<BucketSlice> local_ranges_;  // main_ ranges this worker updates itself
  std::map<int, int> gather_of_, scatter_of_;  // model layer → its all-gather / reduce-scatter collective
  ModelParallelHooks hooks_;
  float* hybrid_buffer_ = nullptr;
  int backward_end_ = -1, update_item_ = -1, data_item_ = -1;
  std::vector<float> images_, labels_, global_labels_;
  float loss_scale_ = 1.0f;
  std::optional<LossScaler> scaler_;  // fp16 mixed precision: dynamic loss scaling
  int64_t trace_mark_ = 0;  // run --trace: the Backend::mark where the current compute span began
  RankFigures fig_;
  // The curve's window since the last point: loss over the samples, the gradient noise scale's norms.
  double window_loss_ = 0.0, window_samples_ = 0.0, local_sq_ = 0.0;
  NoiseScaleWindow noise_;
};

}  // namespace scaletwin::exec::detail
