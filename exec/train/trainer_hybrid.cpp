// The hybrid scheme on a worker (Krizhevsky 2014, "One weird trick"): the backbone runs data-parallel on the
// local batch, the classifier model-parallel on the global batch G = P · b, each worker computing its slice of
// output neurons [part_offset(out, P, w), part_offset(out, P, w + 1)) of every model-parallel fc layer.
//
// The data moves through the plan's own collectives (kActivationGather, kGradientScatter), run on layouts that
// make each worker's part of the schedule's buffer contiguous (part r of an all-gather or reduce-scatter of E
// elements is [E·r/P, E·(r+1)/P)):
//   - the first fc layer's input: the backbone outputs, G × in row-major; worker w's rows are [w·b, (w+1)·b), so
//     the all-gather runs straight on the head's input buffer and the reduce-scatter of the input gradient on
//     the head's input gradient (worker w keeps the summed rows of its own samples, the backbone's seed);
//   - a later layer's input (the previous slice's neurons): column blocks, block r = G × width_r row-major, so
//     slices are copied in with copy_2d before an all-gather and out after it (and the other way round for the
//     reduce-scatter, after which only this worker's columns are exact: the only ones its slice reads).
// This needs every model-parallel layer's neuron count to be a multiple of P (checked).
// Traced compute spans (run --trace): "forward" up to each blocking all-gather and after it, "backward_input" up to
// each blocking reduce-scatter, "backward_weight" up to each weight gradient (as in the data-parallel pass).
// The loss is computed on the whole global batch by every worker (a few FLOPs per logit), so its gradient is the
// gradient of the mean over G and no worker needs the others' labels.
#include <fmt/format.h>

#include "core/error.hpp"
#include "exec/train/trainer_worker.hpp"

namespace scaletwin::exec::detail {

using plan::CollectivePurpose;

void Worker::make_head() {
  const auto& model = ctx_.model;
  for (size_t c = 0; c < ctx_.plan.collectives.size(); ++c) {
    const auto& col = ctx_.plan.collectives[c];
    if (col.purpose == CollectivePurpose::kActivationGather) gather_of_[col.layers.at(0)] = static_cast<int>(c);
    if (col.purpose == CollectivePurpose::kGradientScatter) scatter_of_[col.layers.at(0)] = static_cast<int>(c);
  }
  NetworkOptions options;
  options.batch = G_;
  options.seed = ctx_.scenario.training.seed;
  options.dropout_seed = ctx_.scenario.training.seed;  // the head runs on the same rows everywhere
  options.input_gradient = true;
  int64_t widest = model.layers.at(static_cast<size_t>(ctx_.mp_first - 1)).out.elements();
  for (int m : ctx_.mp_layers) {
    const int64_t out = model.layers.at(static_cast<size_t>(m)).out.elements();
    ST_ASSERT(out % P_ == 0, "model-parallel slices of equal width (checked by train())");
    options.fc_slices[m - (ctx_.mp_first - 1)] = FcSlice{slice_begin(out, w_), slice_begin(out, w_ + 1)};
    widest = std::max(widest, out);
  }
  head_ = std::make_unique<Network>(*ctx_.backend, split_model(model, ctx_.mp_first).head, options);
  mp_scratch_ = ctx_.backend->alloc(G_ * widest);
  const auto& training = ctx_.scenario.training;
  sgd_head_ = std::make_unique<Sgd>(*ctx_.backend, head_->param_count(), static_cast<float>(training.momentum),
                                    static_cast<float>(training.weight_decay));
  hooks_.gather_output = [this](int layer, const float* slice, float* full, int64_t n) {
    gather_output(layer, slice, full, n);
  };
  hooks_.reduce_input_gradient = [this](int layer, float* gradient, int64_t n) {
    reduce_input_gradient(layer, gradient, n);
  };
}

LossStats Worker::hybrid_pass() {
  Backend& be = *ctx_.backend;
  const int last = ctx_.mp_first - 1;
  const int64_t in = ctx_.model.layers.at(static_cast<size_t>(last)).out.elements();
  main_->forward(images_.data(), nullptr, b_, true);
  be.copy(head_->input_buffer() + w_ * b_ * in, main_->output(last), b_ * in);
  hybrid_buffer_ = head_->input_buffer();
  run_blocking(gather_of_.at(ctx_.mp_first), plan::Phase::kForward);
  const LossStats stats = head_->forward(nullptr, global_labels_.data(), G_, true, &hooks_);
  trace_span(plan::Phase::kForward);
  const int offset = ctx_.mp_first - 1;
  // The mean over the global batch (0: Network's 1/n), times the loss scale in fp16.
  const float head_scale = scaler_ ? amp_scale() / static_cast<float>(G_) : 0.0f;
  head_->backward([this, offset](const ParamSegment& s) { on_gradient_ready(s.layer + offset); }, head_scale, &hooks_);
  be.copy(main_->seed_gradient(), head_->input_gradient() + w_ * b_ * in, b_ * in);
  main_->backward([this](const ParamSegment& s) { on_gradient_ready(s.layer); }, 1.0f);
  trace_span(plan::Phase::kBackwardInput);
  return stats;
}

void Worker::run_blocking(int collective, plan::Phase before) {
  trace_span(before);  // the compute up to here; the wait is the collective's span on the communication track
  engine_.run_now(engine_.comm_item(collective));
  trace_restart();
}

void Worker::gather_output(int head_layer, const float* slice_output, float* full_output, int64_t n) {
  ST_ASSERT(n == G_, "the model-parallel head runs on the global batch");
  Backend& be = *ctx_.backend;
  const int m = head_layer + ctx_.mp_first - 1;
  const int64_t out = ctx_.model.layers.at(static_cast<size_t>(m)).out.elements();
  auto next = gather_of_.upper_bound(m);  // the next layer that gathers its input: this output, whole
  ST_ASSERT(next != gather_of_.end(), fmt::format("no all-gather after model-parallel layer {}", m));
  float* blocks = mp_scratch_.data();
  be.copy(blocks + G_ * slice_begin(out, w_), slice_output, G_ * (slice_begin(out, w_ + 1) - slice_begin(out, w_)));
  hybrid_buffer_ = blocks;
  run_blocking(next->second, plan::Phase::kForward);
  for (int r = 0; r < P_; ++r) {
    const int64_t begin = slice_begin(out, r), width = slice_begin(out, r + 1) - begin;
    be.copy_2d(full_output + begin, out, blocks + G_ * begin, width, G_, width);
  }
}

void Worker::reduce_input_gradient(int head_layer, float* input_gradient, int64_t n) {
  ST_ASSERT(n == G_, "the model-parallel head runs on the global batch");
  Backend& be = *ctx_.backend;
  const int m = head_layer + ctx_.mp_first - 1;
  const int scatter = scatter_of_.at(m);
  if (m == ctx_.mp_first) {  // rows of samples: already in the schedule's layout
    hybrid_buffer_ = input_gradient;
    run_blocking(scatter, plan::Phase::kBackwardInput);
    return;
  }
  const int64_t in = ctx_.model.layers.at(static_cast<size_t>(m - 1)).out.elements();
  float* blocks = mp_scratch_.data();
  for (int r = 0; r < P_; ++r) {
    const int64_t begin = slice_begin(in, r), width = slice_begin(in, r + 1) - begin;
    be.copy_2d(blocks + G_ * begin, width, input_gradient + begin, in, G_, width);
  }
  hybrid_buffer_ = blocks;
  run_blocking(scatter, plan::Phase::kBackwardInput);
  const int64_t begin = slice_begin(in, w_), width = slice_begin(in, w_ + 1) - begin;
  be.copy_2d(input_gradient + begin, in, blocks + G_ * begin, width, G_, width);
}

}  // namespace scaletwin::exec::detail
