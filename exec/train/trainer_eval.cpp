// A worker's view of the whole model: its full weights (the hybrid's slices gathered from every worker) and the
// test accuracy of those weights on the worker's shard of the test set (summed over workers by the caller).
#include <fmt/format.h>

#include "core/error.hpp"
#include "exec/train/trainer_worker.hpp"

namespace scaletwin::exec::detail {

namespace {

std::vector<std::vector<float>> per_layer(const Network& net, size_t layers, int layer_offset) {
  std::vector<std::vector<float>> out(layers);
  const std::vector<float> host = net.download_params();
  for (const ParamSegment& s : net.segments()) {
    const auto first = host.begin() + s.offset;
    out.at(static_cast<size_t>(s.layer + layer_offset)).assign(first, first + s.length);
  }
  return out;
}

std::vector<float> allgather_rows(const std::vector<float>& mine, int64_t first, int64_t count, int64_t row,
                                  int64_t rows_total, int parts, MPI_Comm comm) {
  std::vector<int> counts(static_cast<size_t>(parts)), displs(static_cast<size_t>(parts));
  for (int r = 0; r < parts; ++r) {
    const int64_t begin = plan::part_offset(rows_total, parts, r), end = plan::part_offset(rows_total, parts, r + 1);
    counts[static_cast<size_t>(r)] = static_cast<int>((end - begin) * row);
    displs[static_cast<size_t>(r)] = static_cast<int>(begin * row);
  }
  std::vector<float> full(static_cast<size_t>(rows_total * row));
  ST_MPI_CHECK(MPI_Allgatherv(mine.data() + first, static_cast<int>(count * row), MPI_FLOAT, full.data(), counts.data(),
                              displs.data(), MPI_FLOAT, comm));
  return full;
}

}  // namespace

std::vector<std::vector<float>> Worker::full_weights() {
  const size_t layers = ctx_.model.layers.size();
  std::vector<std::vector<float>> out = per_layer(*main_, layers, 0);
  if (!split_) return out;
  const std::vector<std::vector<float>> head = per_layer(*head_, layers, ctx_.mp_first - 1);
  for (int m : ctx_.mp_layers) {
    const auto& layer = ctx_.model.layers.at(static_cast<size_t>(m));
    const int64_t outs = layer.out.elements();
    const int64_t in = ctx_.model.layers.at(static_cast<size_t>(m - 1)).out.elements();
    const int64_t rows = slice_begin(outs, w_ + 1) - slice_begin(outs, w_);
    const std::vector<float>& mine = head.at(static_cast<size_t>(m));
    std::vector<float> weights = allgather_rows(mine, 0, rows, in, outs, P_, ctx_.workers_comm);
    if (layer.fc.bias) {
      const std::vector<float> bias = allgather_rows(mine, rows * in, rows, 1, outs, P_, ctx_.workers_comm);
      weights.insert(weights.end(), bias.begin(), bias.end());
    }
    ST_ASSERT(static_cast<int64_t>(weights.size()) == layer.params,
              fmt::format("gathered layer {} has {} parameters, expected {}", layer.name, weights.size(), layer.params));
    out[static_cast<size_t>(m)] = std::move(weights);
  }
  return out;
}

void Worker::evaluate(EpochStats& stats) {
  Network* net = main_.get();
  if (split_) {
    // The whole model with the gathered weights (collective over the workers).
    const auto weights = full_weights();
    if (!eval_) {
      NetworkOptions options;
      options.batch = b_;
      options.seed = ctx_.scenario.training.seed;
      eval_ = std::make_unique<Network>(*ctx_.backend, ctx_.model, options);
    }
    std::vector<float> host(static_cast<size_t>(eval_->param_count()));
    for (const ParamSegment& s : eval_->segments()) {
      const auto& w = weights.at(static_cast<size_t>(s.layer));
      ST_ASSERT(static_cast<int64_t>(w.size()) == s.length, "evaluation network layout");
      std::copy(w.begin(), w.end(), host.begin() + s.offset);
    }
    eval_->upload_params(host);
    net = eval_.get();
  }
  const ShardRange range = shard_range(data_.test.count(), w_, P_);
  std::vector<int64_t> indices(static_cast<size_t>(b_));
  for (int64_t first = range.begin; first < range.end; first += b_) {
    const int64_t n = std::min(b_, range.end - first);
    for (int64_t s = 0; s < n; ++s) indices[static_cast<size_t>(s)] = first + s;
    gather_batch(data_.test, indices.data(), n, images_.data(), labels_.data());
    const LossStats st = net->forward(images_.data(), labels_.data(), n, false);
    stats.test_correct += static_cast<double>(st.correct);
    stats.test_samples += static_cast<double>(st.samples);
    if (ctx_.watchdog != nullptr) ctx_.watchdog->beat();
  }
}

}  // namespace scaletwin::exec::detail
