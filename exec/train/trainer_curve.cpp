// The run's curve and time to accuracy: when a curve point is due, the job's stop decision, and the run record's
// "curve", "time_to_target" and "noise_scale" figures (see trainer_internal.hpp).
#include <fmt/format.h>

#include <cmath>

#include "core/error.hpp"
#include "exec/train/trainer_internal.hpp"

namespace scaletwin::exec::detail {

bool evaluation_due(const Context& ctx, int64_t done) {
  return done % ctx.eval_every == 0 || done % ctx.iterations_per_epoch == 0 || done == ctx.iterations;
}

bool share_stop(const Context& ctx, int64_t done, bool stop) {
  if (ctx.target_accuracy <= 0.0 || !evaluation_due(ctx, done)) return false;
  // Every worker took the same decision from the same summed accuracy; a synchronous plan's servers run the
  // iterations in step with them and learn it from rank 0 (worker 0).
  if (ctx.plan.sync != plan::SyncKind::kSync) return stop;
  int flag = stop ? 1 : 0;
  ST_MPI_CHECK(MPI_Bcast(&flag, 1, MPI_INT, 0, ctx.comm));
  return flag != 0;
}

bool plan_measures_noise_scale(const plan::IterationPlan& plan) {
  if (plan.workers < 2 || plan.collectives.empty()) return false;
  for (const auto& c : plan.collectives)
    if (c.purpose != plan::CollectivePurpose::kGradients || static_cast<int>(c.participants.size()) != plan.workers)
      return false;
  return true;
}

namespace {

Json noise_json(const NoiseScaleWindow& w, const Context& ctx) {
  const auto est = estimate_noise_scale(w, static_cast<double>(ctx.plan.batch_per_worker),
                                        static_cast<double>(ctx.plan.global_batch));
  if (!est) return nullptr;
  return {{"b_simple", est->b_simple ? Json(*est->b_simple) : Json(nullptr)},
          {"gradient_sq", est->gradient_sq},
          {"trace_sigma", est->trace_sigma},
          {"samples", w.samples}};
}

Json or_null(double v) { return v >= 0.0 ? Json(v) : Json(nullptr); }

}  // namespace

void add_curve_figures(const Context& ctx, Json& run) {
  const double per_epoch = static_cast<double>(ctx.iterations_per_epoch);
  const double G = static_cast<double>(ctx.plan.global_batch);
  Json curve = Json::array();
  NoiseScaleWindow whole, second_half;
  const EvalPoint* reached = nullptr;
  const EvalPoint* before = nullptr;  // the evaluation before it (below the target)
  for (size_t i = 0; i < ctx.curve.size(); ++i) {
    const EvalPoint& p = ctx.curve[i];
    Json point = {{"iteration", p.iteration},
                  {"epoch", static_cast<double>(p.iteration) / per_epoch},
                  {"images", static_cast<double>(p.iteration) * G},
                  {"train_s", p.train_s},
                  {"test_accuracy", or_null(p.test_accuracy)},
                  {"train_loss", or_null(p.train_loss)}};
    if (ctx.noise_scale) point["noise_scale"] = noise_json(p.noise, ctx);
    curve.push_back(std::move(point));
    whole.add(p.noise);
    if (2 * p.iteration > ctx.iterations_done) second_half.add(p.noise);
    if (!reached && ctx.target_accuracy > 0.0 && p.test_accuracy >= ctx.target_accuracy) {
      reached = &p;
      if (i > 0 && ctx.curve[i - 1].test_accuracy >= 0.0) before = &ctx.curve[i - 1];
    }
  }
  run["curve"] = std::move(curve);
  run["eval_every_iterations"] = ctx.eval_every;
  run["eval_s"] = ctx.eval_s;
  run["seed"] = ctx.scenario.training.seed;
  run["lr_scaling"] = ctx.scenario.training.lr_scaling;
  run["lr_reference_batch"] = ctx.scenario.training.lr_reference_batch;
  run["update_batch"] = ctx.update_batch;  // the samples one update averages (the convergence model's B)
  run["learning_rate"] = ctx.lr.scaled_lr();
  // McCandlish et al.'s B_simple over the whole run and over its second half (it grows as the loss falls).
  if (ctx.noise_scale)
    run["noise_scale"] = {{"whole_run", noise_json(whole, ctx)}, {"second_half", noise_json(second_half, ctx)},
                          {"method", "McCandlish et al. 2018, appendix A.1: per-worker and all-reduced gradient norms"}};
  if (ctx.target_accuracy > 0.0) {
    Json t = {{"target_accuracy", ctx.target_accuracy}, {"reached", reached != nullptr}};
    if (reached) {
      // Where the accuracy crossed the target, interpolated linearly between the evaluation below it and the one
      // at or above it (the evaluations' own figures under "at_evaluation"): without it the figure would move by
      // up to an evaluation interval.
      double f = 1.0;
      if (before && reached->test_accuracy > before->test_accuracy)
        f = (ctx.target_accuracy - before->test_accuracy) / (reached->test_accuracy - before->test_accuracy);
      const double it0 = before ? static_cast<double>(before->iteration) : 0.0, s0 = before ? before->train_s : 0.0;
      const double it = it0 + f * (static_cast<double>(reached->iteration) - it0);
      t["seconds"] = s0 + f * (reached->train_s - s0);
      t["iterations"] = it;
      t["images"] = it * G;
      t["epochs"] = it / per_epoch;
      t["at_evaluation"] = {{"seconds", reached->train_s}, {"iterations", reached->iteration},
                            {"images", static_cast<double>(reached->iteration) * G}};
    } else {
      t["seconds"] = nullptr;
      t["images"] = nullptr;
    }
    run["time_to_target"] = std::move(t);
  }
}

}  // namespace scaletwin::exec::detail
