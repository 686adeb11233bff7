// The run record of `scaletwin run`: the measurements format of the spec (id, source, cluster, nodes,
// gpus_per_node, model, batch_per_gpu, data, scheme, images_per_sec) plus what the run knows besides: the plan hash,
// per-phase times, loss and accuracy per epoch, the test accuracy, staleness (async) and per-rank figures.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/files.hpp"
#include "exec/train/trainer_internal.hpp"
#include "report/run_record.hpp"

namespace scaletwin::exec::detail {

namespace {

Json or_null(double value, bool valid) { return valid ? Json(value) : Json(nullptr); }

Json epochs_json(const Context& ctx, const std::vector<EpochStats>& epochs) {
  Json out = Json::array();
  for (size_t e = 0; e < epochs.size(); ++e) {
    const EpochStats& s = epochs[e];
    const double iterations_done =
        std::min<double>(static_cast<double>(ctx.iterations_per_epoch),
                         static_cast<double>(ctx.iterations) - static_cast<double>(e * ctx.iterations_per_epoch));
    out.push_back({{"epoch", e + 1},
                   {"fraction", iterations_done / static_cast<double>(ctx.iterations_per_epoch)},
                   {"train_loss", or_null(s.loss_sum / std::max(1.0, s.samples), s.samples > 0)},
                   {"train_accuracy", or_null(s.correct / std::max(1.0, s.samples), s.samples > 0)},
                   {"test_accuracy", or_null(s.test_correct / std::max(1.0, s.test_samples), s.test_samples > 0)}});
  }
  return out;
}

// Coefficient of variation of a worker's compute time per measured iteration (population, n >= 2).
double compute_cv(const RankFigures& f) {
  const double mean = f.jitter_sum_s / f.jitter_n;
  const double var = std::max(0.0, f.jitter_sum_sq_s2 / f.jitter_n - mean * mean);
  return mean > 0.0 ? std::sqrt(var) / mean : 0.0;
}

// The workers' figures summed over ranks, and each rank's entry of the record's "ranks".
struct RankTotals {
  int worker_nodes = 0, on_first_node = 0;
  double images = 0, seconds = 0, compute = 0, comm = 0, data = 0, iterations = 0, rate_sum = 0;
  double jitter_sum = 0, steal_sum = 0;
  int jitter_ranks = 0, steal_ranks = 0;
  Json ranks = Json::array();
};

RankTotals rank_totals(const Context& ctx, const std::vector<RankFigures>& figures, const std::vector<std::string>& hosts) {
  const auto& plan = ctx.plan;
  RankTotals t;
  for (size_t r = 0; r < figures.size(); ++r) {
    const auto& e = plan.endpoints[r];
    const RankFigures& f = figures[r];
    const bool worker = e.kind == plan::EndpointKind::kWorker;
    if (worker) {
      t.worker_nodes = std::max(t.worker_nodes, e.node + 1);
      t.on_first_node += e.node == 0 ? 1 : 0;
      t.images += f.images_after_warmup;
      t.seconds = std::max(t.seconds, f.seconds_after_warmup);
      t.compute += f.compute_s;
      t.comm += f.exposed_comm_s;
      t.data += f.data_s;
      t.iterations += f.iterations;
    }
    Json rank = {{"rank", r}, {"endpoint", e.name}, {"kind", worker ? "worker" : "server"}, {"host", hosts.at(r)},
                 {"node", e.node}, {"compute_s", f.compute_s}, {"exposed_comm_s", f.exposed_comm_s},
                 {"wall_s", f.wall_s}};
    if (worker) {
      rank["iterations"] = f.iterations;
      rank["data_s"] = f.data_s;
      const double rate = f.seconds_after_warmup > 0 ? f.images_after_warmup / f.seconds_after_warmup : 0.0;
      rank["images_per_sec"] = rate;
      t.rate_sum += rate;
      if (f.cpu_steal >= 0.0) {
        rank["cpu_steal"] = f.cpu_steal;
        t.steal_sum += f.cpu_steal;
        t.steal_ranks += 1;
      }
      if (f.jitter_n >= 2.0) {
        const double cv = compute_cv(f);
        rank["compute_cv"] = cv;
        t.jitter_sum += cv;
        t.jitter_ranks += 1;
      }
    } else if (plan.sync != plan::SyncKind::kSync) {
      rank["pushes_served"] = f.pushes;
      rank["staleness_mean"] = f.pushes > 0 ? f.staleness_sum / f.pushes : 0.0;
      rank["staleness_max"] = f.staleness_max;
    }
    t.ranks.push_back(std::move(rank));
  }
  return t;
}

}  // namespace

Json make_report(const Context& ctx, const std::string& backend_name, const std::vector<RankFigures>& figures,
                 const std::vector<std::string>& hosts, const std::vector<EpochStats>& epochs, const Staleness& staleness,
                 const report::CollectiveTimes& collectives, double wall_s) {
  const auto& plan = ctx.plan;
  const auto& s = ctx.scenario;
  RankTotals t = rank_totals(ctx, figures, hosts);
  const int worker_nodes = t.worker_nodes, on_first_node = t.on_first_node;
  const double images = t.images, seconds = t.seconds, compute = t.compute, comm = t.comm, data = t.data,
               iterations = t.iterations, rate_sum = t.rate_sum;
  const double per = std::max(1.0, iterations);
  // Sync: the images of every worker over the last one's time (they move in lockstep). Async (ps async,
  // mixed_async): every worker keeps its own pace and runs the same number of iterations, so the faster ones stop
  // early and the last one runs its tail alone; as the simulator reports it (sim/runner.hpp), the job's rate is
  // the sum of each worker's own rate (images over the last worker's time would count the others' idle end).
  const double images_per_sec =
      plan.sync == plan::SyncKind::kSync ? (seconds > 0 ? images / seconds : 0.0) : rate_sum;
  const int servers = static_cast<int>(plan.endpoints.size()) - plan.workers;
  // The figures go through the record a prediction also becomes (report/run_record.hpp), so compare and validate
  // read both sides as one type; the scenario's fields and what only a run knows are added beside them.
  report::RunRecord record;
  record.id = fmt::format("{}-{}gpu{}", s.name.empty() ? ctx.model.name : s.name, plan.workers,
                          servers > 0 ? fmt::format("-{}ps", servers) : "");
  record.source = fmt::format("scaletwin run on {} ({} MPI ranks, {})", hosts.at(0), plan.endpoints.size(), backend_name);
  record.plan_hash = hex64(plan.hash());
  record.gpus = plan.workers;
  record.images_per_sec = images_per_sec;
  record.iteration_s = images_per_sec > 0.0 ? static_cast<double>(plan.global_batch) / images_per_sec : 0.0;
  record.phases_s = {{"compute", compute / per}, {"exposed_comm", comm / per}, {"data", data / per}};
  record.collectives_s = collectives;  // the workers' mean per label
  Json run = report::record_json(record);
  const Json scenario_fields = {
      {"cluster", s.cluster},
      {"nodes", worker_nodes},
      {"gpus_per_node", on_first_node},
      {"model", s.model},
      {"batch_per_gpu", s.batch_per_gpu},
      {"data", plan::data_name(s.training.data)},
      {"precision", plan::precision_name(s.training.precision)},
      {"scheme", s.scheme.to_json()},
      {"servers", servers},
      {"device", ctx.options.device},
      {"backend", backend_name},
      {"global_batch", plan.global_batch},
      {"iterations", ctx.iterations},
      {"warmup_iterations", ctx.warmup},
      {"iterations_per_epoch", ctx.iterations_per_epoch},
      {"wall_s", wall_s},
      {"epochs", epochs_json(ctx, epochs)},
  };
  run.update(scenario_fields);
  const EpochStats* last = epochs.empty() ? nullptr : &epochs.back();
  run["train_loss"] = or_null(last ? last->loss_sum / std::max(1.0, last->samples) : 0.0, last && last->samples > 0);
  run["test_accuracy"] =
      or_null(last ? last->test_correct / std::max(1.0, last->test_samples) : 0.0, last && last->test_samples > 0);
  // The spread of a worker's compute time from one measured iteration to the next (coefficient of variation,
  // mean over workers): synchronous schemes wait for the slowest worker of each iteration, which a calibration
  // turns into the expected wait (sim/jitter.hpp).
  if (t.jitter_ranks > 0) run["compute_jitter"] = t.jitter_sum / t.jitter_ranks;
  // The share of the host's CPU time taken by other virtual machines during the measured iterations (mean over
  // workers; each reads its host's /proc/stat): a run with more of it ran on a slower machine.
  if (t.steal_ranks > 0) run["cpu_steal"] = t.steal_sum / t.steal_ranks;
  // fp16 mixed precision: the dynamic loss scale at the end and the steps skipped for overflowing gradients (the
  // workers agree on both; exec/loss_scaler.hpp).
  if (s.training.precision == plan::Precision::kFp16)
    for (size_t r = 0; r < figures.size(); ++r)
      if (plan.endpoints[r].kind == plan::EndpointKind::kWorker) {
        run["loss_scaling"] = {{"final_scale", figures[r].loss_scale},
                               {"skipped_steps", figures[r].skipped_steps}};
        break;
      }
  if (plan.sync != plan::SyncKind::kSync)
    run["staleness"] = {{"pushes", staleness.pushes}, {"mean", staleness.mean}, {"max", staleness.max}};
  if (ctx.resumed_from > 0) run["resumed_from_iteration"] = ctx.resumed_from;  // --resume: figures after it
  run["ranks"] = std::move(t.ranks);
  return run;
}

}  // namespace scaletwin::exec::detail
