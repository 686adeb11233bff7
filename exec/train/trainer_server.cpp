// A parameter-server endpoint of the training driver. The server holds a copy of the data-parallel parameters
// (built from the same seed as the workers' replicas) and momentum, and owns, in every bucket, the slice that the
// push schedule reduces onto it (Schedule::slice_offset of its rank).
//   sync:      runs its program every iteration: push (the workers' gradients summed into its slice), SGD on the
//              slice (the kServerUpdate item), pull (its slice sent back to the workers).
//   on demand: (async; mixed_async between node leaders and servers) waits for requests, in arrival order
//              (MPI_ANY_SOURCE on the request tag; the payload names the collective), runs that collective's
//              schedule with its initiator, and after a push applies SGD to its slice at once. Staleness: for each
//              push, the updates this server applied to the bucket since that initiator's last pull of it.
// It stops when every initiator has sent its stop request (on demand) or after the iterations (sync).
// Traced (run --trace), with predict's names: sync, its program's collectives by label and each update as
// "server_update" (compute); on demand, each request served as "LABEL (serve)" (the collective and, after a push,
// the update), with the round of requests (served pushes / push collectives it serves) as its iteration.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/error.hpp"
#include "exec/train/trainer_internal.hpp"

namespace scaletwin::exec::detail {

namespace {

bool is_push(const plan::Schedule& s) { return s.initial.at(0) == plan::InitialData::kOwn; }

class Server {
 public:
  explicit Server(Context& ctx) : ctx_(ctx), engine_(ctx.plan, ctx.rank, *ctx.runners) {
    NetworkOptions options;
    options.batch = 1;
    options.seed = ctx.scenario.training.seed;
    net_ = std::make_unique<Network>(*ctx.backend, data_parallel_model(ctx), options);
    slices_ = bucket_slices(ctx.plan, *net_);
    const auto& training = ctx.scenario.training;
    sgd_ = std::make_unique<Sgd>(*ctx.backend, net_->param_count(), static_cast<float>(training.momentum),
                                 static_cast<float>(training.weight_decay));
    engine_.set_buffers([this](int item) {
      const auto& it = engine_.program().items.at(static_cast<size_t>(item));
      return buffer(it.collective);
    });
    engine_.set_trace(ctx.trace);
    engine_.set_before_start([this](int item) {
      const auto& it = engine_.program().items.at(static_cast<size_t>(item));
      clear_push_buffer(it.collective);
    });
  }

  RankFigures run() {
    const double start = now_s();
    if (ctx_.plan.sync == plan::SyncKind::kSync) {
      // Checkpoints (sync only): the server's state is its copy of the parameters and its momentum.
      const std::vector<StateBuffer> state = {{"params", net_->params(), net_->param_count()},
                                              {"momentum", sgd_->momentum_buffer(), sgd_->count()}};
      std::vector<double> no_stats;
      for (int64_t step = resume_state(ctx_, state, no_stats); step < ctx_.iterations; ++step) {
        run_iteration(step);
        after_iteration(ctx_, step + 1, state, no_stats);
        if (share_stop(ctx_, step + 1, false)) break;  // the workers reached the target accuracy
      }
    } else {
      serve_on_demand();
    }
    fig_.wall_s = now_s() - start;
    fig_.exposed_comm_s += engine_.wait_s();
    return fig_;
  }

 private:
  float* buffer(int collective) {
    const auto& c = ctx_.plan.collectives.at(static_cast<size_t>(collective));
    const auto& s = ctx_.plan.schedules.at(static_cast<size_t>(c.schedule));
    const int64_t offset = slices_.at(static_cast<size_t>(collective)).offset;
    return (is_push(s) ? net_->grads() : net_->params()) + offset;
  }

  void clear_push_buffer(int collective) {
    const auto& c = ctx_.plan.collectives.at(static_cast<size_t>(collective));
    const auto& s = ctx_.plan.schedules.at(static_cast<size_t>(c.schedule));
    if (is_push(s)) ctx_.backend->fill(buffer(collective), 0.0f, s.elements);
  }

  // SGD on this server's slice of the bucket that `collective` pushed.
  void apply_update(int collective, int64_t step) {
    const double t0 = now_s();
    const auto& c = ctx_.plan.collectives.at(static_cast<size_t>(collective));
    const auto& s = ctx_.plan.schedules.at(static_cast<size_t>(c.schedule));
    int rank = -1;
    for (size_t r = 0; r < c.participants.size(); ++r)
      if (c.participants[r] == ctx_.rank) rank = static_cast<int>(r);
    ST_ASSERT(rank >= 0, "a server updates a bucket it does not serve");
    const int64_t offset = slices_.at(static_cast<size_t>(collective)).offset + s.slice_offset.at(static_cast<size_t>(rank));
    const int64_t length = s.slice_length.at(static_cast<size_t>(rank));
    if (length > 0)
      sgd_->step(net_->params(), net_->grads(), static_cast<float>(ctx_.lr.lr(step)), offset, length);
    const double t1 = now_s();
    fig_.compute_s += t1 - t0;
    if (ctx_.plan.sync == plan::SyncKind::kSync) ctx_.trace->compute(plan::Phase::kServerUpdate, t0, t1);
  }

  void run_iteration(int64_t step) {
    ctx_.trace->begin_iteration(step, now_s());
    engine_.begin_iteration();
    const auto& items = engine_.program().items;
    for (size_t i = 0; i < items.size(); ++i) {
      if (items[i].kind != plan::Item::Kind::kCompute) continue;
      int pushed = -1;
      for (int d : items[i].deps) {
        if (items[static_cast<size_t>(d)].kind != plan::Item::Kind::kComm) continue;
        engine_.wait_for(d);
        pushed = items[static_cast<size_t>(d)].collective;
      }
      ST_ASSERT(pushed >= 0, "a server update without its push");
      apply_update(pushed, step);
      engine_.complete(static_cast<int>(i));
      engine_.pump();
    }
    engine_.wait_all_comm();
    fig_.iterations += 1;
  }

  void serve_on_demand() {
    std::set<int> initiators;
    for (const auto& c : ctx_.plan.collectives)
      if (c.on_demand)
        for (size_t p = 1; p < c.participants.size(); ++p)
          if (c.participants[p] == ctx_.rank) initiators.insert(c.participants[0]);
    int64_t push_collectives = 0;  // per round: one push of every bucket by every initiator it serves
    for (const auto& c : ctx_.plan.collectives)
      if (c.on_demand && c.has_serve_compute &&
          std::find(c.participants.begin() + 1, c.participants.end(), ctx_.rank) != c.participants.end())
        ++push_collectives;
    std::map<int64_t, int64_t> version;                      // bucket offset → updates applied
    std::map<std::pair<int, int64_t>, int64_t> last_pulled;  // (initiator, bucket offset) → version pulled
    size_t stops = 0;
    int64_t round = -1;
    while (stops < initiators.size()) {
      int collective = 0;
      MPI_Status status;
      recv_with_backoff(&collective, 1, MPI_INT, MPI_ANY_SOURCE, kRequestTag, ctx_.runners->request_comm(), &status);
      if (ctx_.watchdog != nullptr) ctx_.watchdog->beat();
      if (collective == kStopRequest) {
        ++stops;
        continue;
      }
      const int64_t this_round = static_cast<int64_t>(fig_.pushes) / std::max<int64_t>(1, push_collectives);
      if (this_round != round) ctx_.trace->begin_iteration(round = this_round, now_s());
      const auto& c = ctx_.plan.collectives.at(static_cast<size_t>(collective));
      const auto& s = ctx_.plan.schedules.at(static_cast<size_t>(c.schedule));
      ST_ASSERT(c.on_demand && c.participants.at(0) == status.MPI_SOURCE, "a request for a collective it cannot be");
      clear_push_buffer(collective);
      ScheduleRunner& runner = ctx_.runners->of_collective(collective);
      const double t0 = now_s();
      runner.wait(runner.start(s, buffer(collective), ElementType::kFloat32));
      fig_.exposed_comm_s += now_s() - t0;
      const int64_t bucket = slices_.at(static_cast<size_t>(collective)).offset;
      const auto key = std::make_pair(status.MPI_SOURCE, bucket);
      if (is_push(s)) {
        const int64_t stale = version[bucket] - (last_pulled.count(key) ? last_pulled[key] : 0);
        fig_.pushes += 1;
        fig_.staleness_sum += static_cast<double>(stale);
        fig_.staleness_max = std::max(fig_.staleness_max, static_cast<double>(stale));
        if (c.has_serve_compute) apply_update(collective, version[bucket]);
        ++version[bucket];
      } else {
        last_pulled[key] = version[bucket];
      }
      ctx_.trace->add(c.label + " (serve)", plan::collective_purpose_name(c.purpose), kTraceCommTrack, t0, now_s());
    }
  }

  Context& ctx_;
  ItemEngine engine_;
  std::unique_ptr<Network> net_;
  std::unique_ptr<Sgd> sgd_;
  std::vector<BucketSlice> slices_;
  RankFigures fig_;
};

}  // namespace

RankFigures run_server(Context& ctx) {
  Server server(ctx);
  return server.run();
}

}  // namespace scaletwin::exec::detail
