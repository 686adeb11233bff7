// The convergence model (see convergence.hpp).
#include "sim/convergence.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/json_reader.hpp"
#include "sim/builtin_texts.hpp"

namespace scaletwin::sim {

double lr_ratio(const std::string& lr_scaling, double batch, double reference_batch) {
  ST_ASSERT(batch > 0 && reference_batch > 0, "batches must be positive");
  const double ratio = batch / reference_batch;
  if (lr_scaling == "linear" || lr_scaling == "tuned") return ratio;
  if (lr_scaling == "sqrt") return std::sqrt(ratio);
  ST_ASSERT(lr_scaling == "none", "unknown learning-rate scaling " + lr_scaling);
  return 1.0;
}

double lr_rule_factor(const std::string& lr_scaling, double batch, double reference_batch) {
  if (lr_scaling == "tuned") return 1.0;
  return batch / reference_batch / lr_ratio(lr_scaling, batch, reference_batch);
}

double critical_batch_for(const plan::Convergence& c, const std::string& optimizer, const std::string& file) {
  if (optimizer.empty() || c.optimizer.empty() || c.optimizer == optimizer) return c.critical_batch;
  const auto other = c.critical_batch_by_optimizer.find(optimizer);
  if (other != c.critical_batch_by_optimizer.end()) return other->second;
  std::string fitted = c.optimizer;
  for (const auto& [name, batch] : c.critical_batch_by_optimizer)
    if (name != c.optimizer) fitted += ", " + name;
  throw InputError(file, "/training/optimizer",
                   fmt::format("an optimizer the convergence model ({}) was fitted for: {} (got \"{}\")", c.source,
                               fitted, optimizer));
}

double images_to_target(const plan::Convergence& c, const std::string& lr_scaling, double reference_batch,
                        double update_batch, double staleness) {
  return images_to_target(c, lr_scaling, reference_batch, update_batch, staleness, c.critical_batch, 0.0);
}

double images_to_target(const plan::Convergence& c, const std::string& lr_scaling, double reference_batch,
                        double update_batch, double staleness, double critical_batch, double warmup_epochs) {
  const double delay = std::max(0.0, staleness) * lr_ratio(lr_scaling, update_batch, reference_batch);
  return c.images_min * lr_rule_factor(lr_scaling, update_batch, reference_batch) *
             (1.0 + update_batch / critical_batch) * (1.0 + c.staleness_cost * delay) +
         c.warmup_cost * std::max(0.0, warmup_epochs) * c.dataset_images;
}

EvaluationSchedule first_evaluation_at(double epochs, double every, double offset) {
  ST_ASSERT(every > 0.0, "an evaluation period must be positive");
  const double first = offset > 0.0 ? offset : every;
  if (epochs <= first) return {first, 1};
  // A crossing within a part per million of an evaluation is seen at it (floating point, not a later evaluation).
  const double periods = std::ceil((epochs - first) / every - 1e-6);
  return {first + periods * every, static_cast<int>(periods) + 1};
}

ExpectedEvaluation expected_evaluation_at(double epochs, double every) {
  ST_ASSERT(every > 0.0, "an evaluation period must be positive");
  const double seen = std::max(0.0, epochs) + every / 2.0;
  return {seen, seen / every};
}

double inference_images_per_sec(const report::PointResult& p, double global_batch) {
  const auto forward = p.phase_s.find("forward");
  const double per_batch = forward != p.phase_s.end() && forward->second > 0.0 ? forward->second : p.compute_s;
  return per_batch > 0.0 ? global_batch / per_batch : 0.0;
}

double convergence_extrapolation_log_sd(const plan::Convergence& c, double update_batch, double critical_batch) {
  if (c.se_log_critical_batch <= 0.0 || c.batch_high <= 0.0 || update_batch <= c.batch_high) return 0.0;
  const auto g = [&](double b) { return (b / critical_batch) / (1.0 + b / critical_batch); };
  return c.se_log_critical_batch * (g(update_batch) - g(c.batch_high));
}

double update_batch_of(const plan::Scenario& s, int gpus) {
  const double b = static_cast<double>(plan::with_point_batch(s, gpus).batch_per_gpu);
  if (s.scheme.has_servers() && s.scheme.ps.mode == plan::PsMode::kAsync) return b;
  if (s.scheme.has_servers() && s.scheme.ps.mode == plan::PsMode::kMixedAsync)
    return b * static_cast<double>(std::min(gpus, s.gpus_per_node));
  return b * static_cast<double>(gpus);
}

std::optional<plan::Convergence> shipped_convergence(const std::string& model) {
  for (const detail::BuiltinText& t : detail::builtin_convergence_texts()) {
    const std::string file = "calibrations/convergence/" + std::string(t.name) + ".json (shipped)";
    plan::Convergence c = plan::parse_convergence(parse_json_text(std::string(t.text), file), file);
    if (c.model == model) return c;
  }
  return std::nullopt;
}

namespace {

// The time of `epochs` at the point: training at its images/s, its evaluations, the per-epoch overheads.
void set_time(const plan::Scenario& s, double epochs, double evaluations, report::PointResult& p) {
  const plan::Training& t = s.training;
  const double dataset = static_cast<double>(t.dataset_images);
  p.epochs_to_target = epochs;
  p.evaluations = static_cast<int>(std::lround(evaluations));
  p.images_to_target = epochs * dataset;
  const double eval_rate = inference_images_per_sec(
      p, static_cast<double>(p.gpus) * static_cast<double>(plan::with_point_batch(s, p.gpus).batch_per_gpu));
  p.eval_s = t.eval_images > 0 && eval_rate > 0.0 ? evaluations * static_cast<double>(t.eval_images) / eval_rate : 0.0;
  p.time_to_target_s = p.images_per_sec > 0.0 ? p.images_to_target / p.images_per_sec + p.eval_s +
                                                    epochs * t.epoch_overhead_s
                                              : 0.0;
}

}  // namespace

void add_time_to_target(const plan::Scenario& s, report::Report& report) {
  const plan::Training& t = s.training;
  if (t.target_accuracy > 0.0) {
    if (!t.convergence)
      throw InputError(s.file, "/training/convergence",
                       "a convergence model for the target accuracy (inline {images_min, critical_batch, "
                       "staleness_cost, log_sd} or the file of scaletwin calibrate --convergence)");
    const plan::Convergence& c = *t.convergence;
    const double critical = critical_batch_for(c, t.optimizer, s.file);
    const bool in_epochs = t.dataset_images > 0;
    std::string counted;
    if (in_epochs)
      counted = fmt::format("; epochs to the first evaluation that sees it (every {} epochs {}){}{}",
                            t.eval_every_epochs,
                            t.eval_offset_varies ? std::string("from an offset that varies: half a period after the "
                                                               "crossing on average")
                                                 : fmt::format("from epoch {}", t.eval_offset_epochs > 0.0
                                                                                    ? t.eval_offset_epochs
                                                                                    : t.eval_every_epochs),
                            t.eval_images > 0 ? fmt::format(", each evaluating {} images at the inference rate",
                                                            t.eval_images)
                                              : std::string(", evaluation time not counted"),
                            t.epoch_overhead_s > 0.0 ? fmt::format(", {} s per epoch", t.epoch_overhead_s) : "");
    report.time_basis = fmt::format(
        "test accuracy {} (convergence {}, {} optimizer, critical batch {:.0f}, {} learning-rate scaling from batch "
        "{}{}){}; initialisation excluded",
        t.target_accuracy, c.source, t.optimizer, critical, t.lr_scaling, t.lr_reference_batch,
        c.warmup_cost > 0.0 && c.dataset_images > 0.0
            ? (!s.sweep_lr_warmup_epochs.empty() ? std::string(", the sweep's warm-up per point")
               : t.lr_warmup_epochs > 0          ? fmt::format(", a {}-epoch warm-up", t.lr_warmup_epochs)
                                                 : std::string())
            : std::string(),
        counted);
    report.time_log_sd = std::hypot(c.log_sd, report.interval_log_sd);
    for (report::PointResult& p : report.predictions) {
      p.update_batch = update_batch_of(s, p.gpus);
      const double warmup = static_cast<double>(plan::with_point_batch(s, p.gpus).training.lr_warmup_epochs);
      const double images = images_to_target(c, t.lr_scaling, static_cast<double>(t.lr_reference_batch),
                                             p.update_batch, p.sync == "sync" ? 0.0 : p.staleness_mean, critical, warmup);
      p.convergence_extrapolation_log_sd = convergence_extrapolation_log_sd(c, p.update_batch, critical);
      if (in_epochs && t.eval_offset_varies) {
        const ExpectedEvaluation seen =
            expected_evaluation_at(images / static_cast<double>(t.dataset_images), t.eval_every_epochs);
        set_time(s, seen.epochs, seen.evaluations, p);
      } else if (in_epochs) {
        const EvaluationSchedule seen = first_evaluation_at(images / static_cast<double>(t.dataset_images),
                                                            t.eval_every_epochs, t.eval_offset_epochs);
        set_time(s, seen.epochs, seen.evaluations, p);
      } else {
        p.images_to_target = images;
        p.time_to_target_s = p.images_per_sec > 0.0 ? images / p.images_per_sec : 0.0;
      }
    }
  } else if (t.epochs > 0 && t.dataset_images > 0) {
    report.time_basis = fmt::format("{} epochs of {} images (no convergence model: the same epochs at every scale){}",
                                    t.epochs, t.dataset_images,
                                    t.eval_images > 0 ? fmt::format(", evaluating {} images every {} epochs",
                                                                    t.eval_images, t.eval_every_epochs)
                                                      : std::string());
    report.time_log_sd = report.interval_log_sd;
    for (report::PointResult& p : report.predictions) {
      p.update_batch = update_batch_of(s, p.gpus);
      // The evaluations within the epochs: at the offset and every period after it, up to the last epoch.
      const double first = t.eval_offset_epochs > 0.0 ? t.eval_offset_epochs : t.eval_every_epochs;
      const double epochs = static_cast<double>(t.epochs);
      const double evaluations =
          t.eval_images > 0 && epochs >= first ? std::floor((epochs - first) / t.eval_every_epochs + 1e-6) + 1.0 : 0.0;
      set_time(s, epochs, evaluations, p);
    }
  }
}

}  // namespace scaletwin::sim
