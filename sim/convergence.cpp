// The convergence model (see convergence.hpp).
#include "sim/convergence.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include <fmt/format.h>

#include "core/error.hpp"

namespace scaletwin::sim {

double lr_ratio(const std::string& lr_scaling, double batch, double reference_batch) {
  ST_ASSERT(batch > 0 && reference_batch > 0, "batches must be positive");
  const double ratio = batch / reference_batch;
  if (lr_scaling == "linear") return ratio;
  if (lr_scaling == "sqrt") return std::sqrt(ratio);
  ST_ASSERT(lr_scaling == "none", "unknown learning-rate scaling " + lr_scaling);
  return 1.0;
}

double lr_rule_factor(const std::string& lr_scaling, double batch, double reference_batch) {
  return batch / reference_batch / lr_ratio(lr_scaling, batch, reference_batch);
}

double images_to_target(const plan::Convergence& c, const std::string& lr_scaling, double reference_batch,
                        double update_batch, double staleness) {
  const double delay = std::max(0.0, staleness) * lr_ratio(lr_scaling, update_batch, reference_batch);
  return c.images_min * lr_rule_factor(lr_scaling, update_batch, reference_batch) *
         (1.0 + update_batch / c.critical_batch) * (1.0 + c.staleness_cost * delay);
}

double update_batch_of(const plan::Scenario& s, int gpus) {
  const double b = static_cast<double>(s.batch_per_gpu);
  if (s.scheme.has_servers() && s.scheme.ps.mode == plan::PsMode::kAsync) return b;
  if (s.scheme.has_servers() && s.scheme.ps.mode == plan::PsMode::kMixedAsync)
    return b * static_cast<double>(std::min(gpus, s.gpus_per_node));
  return b * static_cast<double>(gpus);
}

void add_time_to_target(const plan::Scenario& s, report::Report& report) {
  const plan::Training& t = s.training;
  std::function<double(const report::PointResult& p)> images;  // to the target, per point
  if (t.target_accuracy > 0.0) {
    if (!t.convergence)
      throw InputError(s.file, "/training/convergence",
                       "a convergence model for the target accuracy (inline {images_min, critical_batch, "
                       "staleness_cost, log_sd} or the file of scaletwin calibrate --convergence)");
    const plan::Convergence& c = *t.convergence;
    report.time_basis = fmt::format("test accuracy {} (convergence {}, {} learning-rate scaling from batch {})",
                                    t.target_accuracy, c.source, t.lr_scaling, t.lr_reference_batch);
    report.time_log_sd = std::hypot(c.log_sd, report.interval_log_sd);
    images = [&](const report::PointResult& p) {
      return images_to_target(c, t.lr_scaling, static_cast<double>(t.lr_reference_batch), p.update_batch,
                              p.sync == "sync" ? 0.0 : p.staleness_mean);
    };
  } else if (t.epochs > 0 && t.dataset_images > 0) {
    report.time_basis = fmt::format("{} epochs of {} images (no convergence model: the same epochs at every scale)",
                                    t.epochs, t.dataset_images);
    report.time_log_sd = report.interval_log_sd;
    images = [&](const report::PointResult&) { return static_cast<double>(t.epochs) * static_cast<double>(t.dataset_images); };
  } else {
    return;
  }
  for (report::PointResult& p : report.predictions) {
    p.update_batch = update_batch_of(s, p.gpus);
    p.images_to_target = images(p);
    p.time_to_target_s = p.images_per_sec > 0.0 ? p.images_to_target / p.images_per_sec : 0.0;
  }
}

}  // namespace scaletwin::sim
