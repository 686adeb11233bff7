// A worker endpoint of the training driver: forward and backward on its part of each global batch, the plan's
// gradient collectives started from the gradient-ready callback (overlapped with the rest of backward), then the
// optimizer update or, with parameter servers, the pulled weights. The hybrid scheme's model-parallel classifier
// is in trainer_hybrid.cpp; evaluation and the full weights in trainer_eval.cpp.
#include <fmt/format.h>

#include <cmath>

#include "core/error.hpp"
#include "exec/train/host_cpu.hpp"
#include "exec/train/trainer_worker.hpp"

namespace scaletwin::exec::detail {

using plan::CollectivePurpose;

Worker::Worker(Context& ctx, const TrainingData& data)
    : ctx_(ctx), data_(data), engine_(ctx.plan, ctx.rank, *ctx.runners) {
  const auto& endpoint = ctx.plan.endpoints.at(static_cast<size_t>(ctx.rank));
  w_ = endpoint.worker_index;
  P_ = ctx.plan.workers;
  b_ = ctx.plan.batch_per_worker;
  G_ = ctx.plan.global_batch;
  split_ = ctx.mp_first >= 0;
  for (const auto& c : ctx.plan.collectives) ps_ = ps_ || c.purpose == CollectivePurpose::kPsPushPull;
  counts_stats_ = !split_ || w_ == 0;

  NetworkOptions options;
  options.batch = b_;
  options.seed = ctx.scenario.training.seed;
  options.dropout_seed = splitmix64(ctx.scenario.training.seed * 1000003ull + static_cast<uint64_t>(w_) + 1);
  main_ = std::make_unique<Network>(*ctx.backend, data_parallel_model(ctx), options);
  if (split_) make_head();
  slices_ = bucket_slices(ctx.plan, *main_);
  find_local_update_ranges();
  const auto& training = ctx.scenario.training;
  sgd_main_ = std::make_unique<Sgd>(*ctx.backend, main_->param_count(), static_cast<float>(training.momentum),
                                    static_cast<float>(training.weight_decay));
  if (ps_) {
    shadow_ = ctx.backend->alloc(main_->replicated_param_count());
    ctx.backend->copy(shadow_.data(), main_->params(), main_->replicated_param_count());
  }
  const auto& items = engine_.program().items;
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i].kind != plan::Item::Kind::kCompute) continue;
    if (items[i].compute.phase == plan::Phase::kUpdate) update_item_ = static_cast<int>(i);
    else backward_end_ = static_cast<int>(i);
  }
  data_item_ = engine_.compute_item(plan::Phase::kData, -1);
  engine_.set_buffers([this](int item) { return buffer_of(item); });
  if (ctx.device != nullptr) engine_.set_device(ctx.backend, ctx.device, [this](int c) { return on_device(c); });
  engine_.set_trace(ctx.trace);
  const int64_t input = ctx.model.input.elements();
  images_.resize(static_cast<size_t>(b_ * input));
  labels_.resize(static_cast<size_t>(b_));
  global_labels_.resize(static_cast<size_t>(G_));
  loss_scale_ = 1.0f / static_cast<float>(ctx.update_batch);
  if (ctx.scenario.training.precision == plan::Precision::kFp16) scaler_.emplace();
}

Worker::~Worker() = default;

void Worker::find_local_update_ranges() {
  // The worker applies SGD to every segment that no parameter server updates for it.
  std::vector<bool> by_server(ctx_.model.layers.size(), false);
  for (const auto& c : ctx_.plan.collectives)
    if (c.purpose == CollectivePurpose::kPsPushPull)
      for (int l : c.layers) by_server.at(static_cast<size_t>(l)) = true;
  for (const ParamSegment& s : main_->segments()) {
    if (by_server[static_cast<size_t>(s.layer)]) continue;
    if (!local_ranges_.empty() && local_ranges_.back().offset + local_ranges_.back().length == s.offset)
      local_ranges_.back().length += s.length;
    else
      local_ranges_.push_back({s.offset, s.length});
  }
}

bool Worker::on_device(int collective) const {
  // Gradient all-reduces among all the workers, in worker order (schedule rank = worker index = NCCL rank) run
  // on the device communicator; the rest (parameter servers, a node's subset, the hybrid's all-gathers and
  // reduce-scatters) is staged through host memory and MPI (ItemEngine::set_device).
  const auto& c = ctx_.plan.collectives.at(static_cast<size_t>(collective));
  if (c.purpose != CollectivePurpose::kGradients || ctx_.device->ranks() != P_) return false;
  if (ctx_.plan.schedules.at(static_cast<size_t>(c.schedule)).ranks != P_) return false;
  for (size_t p = 0; p < c.participants.size(); ++p)
    if (c.participants[p] != static_cast<int>(p)) return false;
  return static_cast<int>(c.participants.size()) == P_;
}

float* Worker::buffer_of(int item) {
  const plan::Item& it = engine_.program().items.at(static_cast<size_t>(item));
  const auto& c = ctx_.plan.collectives.at(static_cast<size_t>(it.collective));
  const auto& s = ctx_.plan.schedules.at(static_cast<size_t>(c.schedule));
  const BucketSlice& slice = slices_.at(static_cast<size_t>(it.collective));
  switch (c.purpose) {
    case CollectivePurpose::kGradients:
      return main_->grads() + slice.offset;
    case CollectivePurpose::kPsPushPull:
      return s.initial.at(static_cast<size_t>(plan::rank_in(c, ctx_.rank))) == plan::InitialData::kOwn
                 ? main_->grads() + slice.offset
                 : shadow_.data() + slice.offset;
    case CollectivePurpose::kLocalAggregation:
      return s.collective == plan::Collective::kReduce ? main_->grads() + slice.offset : shadow_.data() + slice.offset;
    case CollectivePurpose::kActivationGather:
    case CollectivePurpose::kGradientScatter:
      return hybrid_buffer_;
  }
  return nullptr;
}

void Worker::on_gradient_ready(int model_layer) {
  const int item = engine_.compute_item(plan::Phase::kBackwardWeight, model_layer);
  if (item >= 0) engine_.complete_compute_through(item);
  const auto& layers = ctx_.model.layers;
  trace_span(plan::Phase::kBackwardWeight,
             model_layer >= 0 && static_cast<size_t>(model_layer) < layers.size() ? layers[static_cast<size_t>(model_layer)].name
                                                                                   : std::string());
  engine_.pump();
}

void Worker::trace_span(plan::Phase phase, std::string layer) {
  if (!ctx_.trace->active()) return;  // a GPU's mark is an event: none outside the traced iterations
  const int64_t m = ctx_.backend->mark();
  ctx_.trace->compute_marks(phase, trace_mark_, m, std::move(layer));
  trace_mark_ = m;
}

void Worker::trace_restart() {
  if (ctx_.trace->active()) trace_mark_ = ctx_.backend->mark();
}

void Worker::load_batch(const std::vector<int64_t>& permutation, int64_t index_in_epoch) {
  const int64_t first = index_in_epoch * G_;
  gather_batch(data_.train, permutation.data() + first + w_ * b_, b_, images_.data(), labels_.data());
  if (split_)
    for (int64_t s = 0; s < G_; ++s)
      global_labels_[static_cast<size_t>(s)] = data_.train.labels[static_cast<size_t>(permutation[static_cast<size_t>(first + s)])];
}

LossStats Worker::iteration(int64_t step, const std::vector<int64_t>& permutation, int64_t index_in_epoch) {
  const double t0 = now_s();
  const double wait0 = engine_.wait_s();
  if (ctx_.trace) ctx_.trace->begin_iteration(step, t0);
  load_batch(permutation, index_in_epoch);
  const double t_data = now_s();
  engine_.begin_iteration();
  LossStats stats;
  trace_restart();
  // The gradient noise scale is sampled on this iteration (plans that measure it have no model-parallel head).
  const bool noise = ctx_.noise_scale && step % ctx_.noise_every == 0;
  if (split_) {
    stats = hybrid_pass();
  } else {
    stats = main_->forward(images_.data(), labels_.data(), b_, true);
    trace_span(plan::Phase::kForward);
    local_sq_ = 0.0;
    main_->backward([this, noise](const ParamSegment& s) {
      // The noise scale's |g_b|²: this worker's gradient before the collective that reduces it in place.
      if (noise) local_sq_ += ctx_.backend->sum_squares(main_->grads() + s.offset, s.length);
      on_gradient_ready(s.layer);
    }, loss_scale_ * amp_scale());
    trace_span(plan::Phase::kBackwardInput);
  }
  if (backward_end_ >= 0) engine_.complete_compute_through(backward_end_);
  engine_.pump();
  engine_.wait_all_comm();  // the update depends on every collective of the iteration
  const float applied_scale = amp_scale();
  const bool apply = unscale_gradients();
  if (noise && apply) {
    local_sq_ /= static_cast<double>(applied_scale) * applied_scale;  // |g_b|² was taken on the scaled gradient
    // grads() holds (1/G)·Σ over this worker's b samples before the all-reduce (b/G · g_b), and g_B after it.
    const double up = static_cast<double>(G_) / static_cast<double>(b_);
    noise_.small_sq += local_sq_ * up * up;
    noise_.big_sq += ctx_.backend->sum_squares(main_->grads(), main_->replicated_param_count());
    noise_.samples += 1.0;
  }
  trace_restart();
  if (apply) update(step);  // fp16: a step whose gradients overflowed is skipped (all workers agree)
  if (update_item_ >= 0) engine_.complete(update_item_);
  const double t1 = now_s();
  // Traced as the plan has them: no update where servers update everything, data only for real data (assembled by
  // the host: host times).
  if (update_item_ >= 0) trace_span(plan::Phase::kUpdate);
  if (data_item_ >= 0) ctx_.trace->compute(plan::Phase::kData, t0, t_data);
  fig_.data_s += t_data - t0;
  fig_.exposed_comm_s += engine_.wait_s() - wait0;
  const double compute = (t1 - t_data) - (engine_.wait_s() - wait0);
  fig_.compute_s += compute;
  if (step >= ctx_.warmup) {
    fig_.jitter_n += 1.0;
    fig_.jitter_sum_s += compute;
    fig_.jitter_sum_sq_s2 += compute * compute;
  }
  fig_.iterations += 1;
  fig_.images += static_cast<double>(b_);
  return stats;
}

bool Worker::unscale_gradients() {
  if (!scaler_) return true;
  Backend& be = *ctx_.backend;
  // A sum of squares is finite exactly when every gradient is (it is taken in double: no finite fp32 value
  // overflows it).
  double sq = be.sum_squares(main_->grads(), main_->param_count());
  if (split_) sq += be.sum_squares(head_->grads(), head_->param_count());
  int finite = std::isfinite(sq) ? 1 : 0;
  ST_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &finite, 1, MPI_INT, MPI_MIN, ctx_.workers_comm));
  if (finite != 0) {
    const float inverse = 1.0f / amp_scale();
    be.scale(main_->grads(), inverse, main_->param_count());
    if (split_) be.scale(head_->grads(), inverse, head_->param_count());
  }
  const bool apply = scaler_->update(finite != 0);
  fig_.loss_scale = scaler_->scale();
  fig_.skipped_steps = static_cast<double>(scaler_->skipped_steps());
  return apply;
}

void Worker::update(int64_t step) {
  const float lr = static_cast<float>(ctx_.lr.lr(step));
  for (const BucketSlice& r : local_ranges_) sgd_main_->step(main_->params(), main_->grads(), lr, r.offset, r.length);
  if (ps_) ctx_.backend->copy(main_->params(), shadow_.data(), main_->replicated_param_count());
  if (split_) sgd_head_->step(head_->params(), head_->grads(), lr);
}

bool Worker::record_point(EpochStats& epoch, int64_t done, double train_s, bool epoch_end) {
  EpochStats local;
  const bool test = ctx_.options.evaluate && data_.has_test;
  if (test) evaluate(local);
  if (epoch_end) {
    epoch.test_correct = local.test_correct;
    epoch.test_samples = local.test_samples;
  }
  double sums[7] = {local.test_correct, local.test_samples, window_loss_, window_samples_,
                    noise_.small_sq,    noise_.big_sq,      noise_.samples};
  ST_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, sums, 7, MPI_DOUBLE, MPI_SUM, ctx_.workers_comm));
  EvalPoint p;
  p.iteration = done;
  p.train_s = train_s;
  p.test_accuracy = test && sums[1] > 0 ? sums[0] / sums[1] : -1.0;
  p.train_loss = sums[3] > 0 ? sums[2] / sums[3] : -1.0;
  p.noise = {sums[4], sums[5], sums[6]};
  ctx_.curve.push_back(p);
  window_loss_ = window_samples_ = 0.0;
  noise_ = {};
  return ctx_.target_accuracy > 0.0 && p.test_accuracy >= ctx_.target_accuracy;
}

WorkerOutcome Worker::run() {
  WorkerOutcome out;
  const int64_t per_epoch = ctx_.iterations_per_epoch;
  const int64_t epochs = (ctx_.iterations + per_epoch - 1) / per_epoch;
  out.epochs.resize(static_cast<size_t>(std::max<int64_t>(epochs, 1)));
  std::vector<int64_t> permutation;
  const double start = now_s();
  double warm_start = start, eval_after_warmup_s = 0.0;
  std::optional<HostCpuTimes> cpu_warm = read_host_cpu_times();
  const int64_t first_step = restore(out.epochs);  // 0, or the checkpoint's with --resume
  int64_t done = first_step;
  while (done < ctx_.iterations) {
    const int64_t step = done, epoch = step / per_epoch, index = step % per_epoch;
    if (index == 0 || step == first_step)
      permutation = epoch_permutation(data_.train.count(), ctx_.scenario.training.seed, epoch);
    const LossStats stats = iteration(step, permutation, index);
    done = step + 1;
    EpochStats& e = out.epochs[static_cast<size_t>(epoch)];
    if (counts_stats_) {
      e.loss_sum += stats.loss_sum;
      e.correct += static_cast<double>(stats.correct);
      e.samples += static_cast<double>(stats.samples);
      window_loss_ += stats.loss_sum;
      window_samples_ += static_cast<double>(stats.samples);
    }
    if (done == ctx_.warmup) {
      warm_start = now_s();
      cpu_warm = read_host_cpu_times();
    }
    bool stop = false;
    if (evaluation_due(ctx_, done)) {
      const double t = now_s();
      stop = record_point(e, done, t - start - ctx_.eval_s, index + 1 == per_epoch || done == ctx_.iterations);
      ctx_.eval_s += now_s() - t;
      if (done > ctx_.warmup) eval_after_warmup_s += now_s() - t;
    }
    checkpoint(done, out.epochs);
    if (share_stop(ctx_, done, stop)) break;
  }
  ctx_.iterations_done = done;
  out.epochs.resize(static_cast<size_t>(std::max<int64_t>((done + per_epoch - 1) / per_epoch, 1)));
  engine_.send_stop_requests();  // on-demand initiators: the servers may stop once every initiator has
  ctx_.backend->synchronize();   // a GPU's last update is still queued when the host gets here
  const double end = now_s();
  fig_.cpu_steal = steal_fraction(cpu_warm, read_host_cpu_times()).value_or(-1.0);
  fig_.wall_s = end - start - ctx_.eval_s;
  const int64_t measured = done > ctx_.warmup ? done - ctx_.warmup : done;
  fig_.images_after_warmup = static_cast<double>(measured * b_);
  fig_.seconds_after_warmup = (done > ctx_.warmup ? end - warm_start : end - start) - eval_after_warmup_s;
  out.figures = fig_;
  out.counts_training_stats = counts_stats_;
  if (ctx_.options.keep_weights) out.weights = full_weights();
  return out;
}

WorkerOutcome run_worker(Context& ctx, const TrainingData& data) {
  Worker worker(ctx, data);
  return worker.run();
}

}  // namespace scaletwin::exec::detail
