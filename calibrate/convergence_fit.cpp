// Fitting and validating the convergence model (see convergence_fit.hpp).
#include "calibrate/convergence_fit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <sstream>

#include "core/error.hpp"
#include "sim/convergence.hpp"
#include "report/report.hpp"

namespace scaletwin::calibrate {

namespace {

double number_at(const JsonObject& run, const Json& value, const std::string& field) {
  if (!value.is_number()) run.fail(field, "a number");
  return value.get<double>();
}

ConvergenceRun read_run(const JsonObject& run, const std::string& file, ConvergenceData& data, bool first) {
  const Json& raw = run.raw();
  ConvergenceRun r;
  r.file = file;
  r.id = raw.value("id", std::string("?"));
  const Json& t = raw.at("time_to_target");
  if (!t.is_object() || !t.contains("reached") || !t.contains("target_accuracy"))
    run.fail("time_to_target", "an object {target_accuracy, reached, seconds, images} (scaletwin run --target-accuracy)");
  for (const char* key : {"update_batch", "lr_scaling", "lr_reference_batch", "images_per_sec", "gpus", "model"})
    if (!raw.contains(key)) run.fail(key, "a field of scaletwin run --target-accuracy's run record");
  const double target = number_at(run, t["target_accuracy"], "time_to_target");
  const std::string rule = raw["lr_scaling"].get<std::string>();
  const double reference = number_at(run, raw["lr_reference_batch"], "lr_reference_batch");
  const std::string model = raw["model"].get<std::string>();
  if (first) {
    data.target_accuracy = target;
    data.lr_scaling = rule;
    data.reference_batch = reference;
    data.model = model;
  } else {
    if (std::abs(target - data.target_accuracy) > 1e-12)
      run.fail("time_to_target", fmt::format("the target accuracy of the other runs ({}, this run's is {})",
                                             data.target_accuracy, target));
    if (rule != data.lr_scaling || reference != data.reference_batch)
      run.fail("lr_scaling", fmt::format("the learning-rate rule of the other runs ({} from batch {}; this run's is {} "
                                         "from {})", data.lr_scaling, data.reference_batch, rule, reference));
    if (model != data.model)
      run.fail("model", fmt::format("the model of the other runs ({}; this run's is {})", data.model, model));
  }
  r.update_batch = number_at(run, raw["update_batch"], "update_batch");
  r.images_per_sec = number_at(run, raw["images_per_sec"], "images_per_sec");
  r.gpus = raw["gpus"].get<int>();
  // The scheme as its configuration: the fields that set what the updates are (name, mode, algorithm, servers,
  // placement, aggregation), not those a later version of `run` adds to its record (a PS's "tensors").
  r.scheme = "?";
  if (raw.contains("scheme") && raw["scheme"].is_object()) {
    Json key = Json::object();
    for (const char* field : {"name", "mode", "algorithm", "intra", "inter", "servers", "placement", "local_aggregation"})
      if (raw["scheme"].contains(field)) key[field] = raw["scheme"][field];
    r.scheme = key.dump();
  }
  if (raw.contains("staleness") && raw["staleness"].contains("mean"))
    r.staleness = number_at(run, raw["staleness"]["mean"], "staleness");
  r.reached = t["reached"].get<bool>();
  if (r.reached) {
    r.images = number_at(run, t["images"], "time_to_target");
    r.seconds = number_at(run, t["seconds"], "time_to_target");
  }
  if (raw.contains("noise_scale") && raw["noise_scale"].contains("second_half")) {
    const Json& ns = raw["noise_scale"]["second_half"];
    if (ns.is_object() && ns["b_simple"].is_number()) r.noise_scale = ns["b_simple"].get<double>();
  }
  return r;
}

struct Point {
  double log_images = 0.0, batch = 0.0, rho = 1.0, staleness = 0.0;  // staleness: tau · lr(B) / lr(B_ref)
};

std::vector<Point> points_of(const ConvergenceData& data, const std::vector<const ConvergenceRun*>& runs) {
  std::vector<Point> out;
  for (const ConvergenceRun* r : runs)
    out.push_back({std::log(r->images), r->update_batch,
                   sim::lr_rule_factor(data.lr_scaling, r->update_batch, data.reference_batch),
                   r->staleness * sim::lr_ratio(data.lr_scaling, r->update_batch, data.reference_batch)});
  return out;
}

// log E predicted without the images_min term, and the closed-form log images_min for (log B_crit, cost).
double shape(const Point& p, double log_bc, double cost) {
  return std::log(p.rho) + std::log1p(p.batch * std::exp(-log_bc)) + std::log1p(cost * p.staleness);
}
struct Params {
  double log_e = 0.0, log_bc = 0.0, cost = 0.0, sse = 0.0;
};
Params best_for(const std::vector<Point>& pts, double log_bc, double cost) {
  double sum = 0.0;
  for (const Point& p : pts) sum += p.log_images - shape(p, log_bc, cost);
  Params out{sum / static_cast<double>(pts.size()), log_bc, cost, 0.0};
  for (const Point& p : pts) {
    const double r = p.log_images - out.log_e - shape(p, log_bc, cost);
    out.sse += r * r;
  }
  return out;
}

// Grid over log B_crit in [0, log 1e7] and cost in [0, 5] (0 only without stale runs), then a finer grid around
// the best cell, twice.
Params fit_points(const std::vector<Point>& pts) {
  const bool stale = std::any_of(pts.begin(), pts.end(), [](const Point& p) { return p.staleness > 0.0; });
  double lo_b = 0.0, hi_b = std::log(1e7), lo_c = 0.0, hi_c = stale ? 5.0 : 0.0;
  Params best{0, 0, 0, 1e300};
  for (int round = 0; round < 3; ++round) {
    const int nb = 120, nc = stale ? 60 : 0;
    for (int i = 0; i <= nb; ++i)
      for (int j = 0; j <= nc; ++j) {
        const double b = lo_b + (hi_b - lo_b) * i / nb, c = nc > 0 ? lo_c + (hi_c - lo_c) * j / nc : 0.0;
        const Params p = best_for(pts, b, c);
        if (p.sse < best.sse) best = p;
      }
    const double db = 2.0 * (hi_b - lo_b) / nb, dc = stale ? 2.0 * (hi_c - lo_c) / nc : 0.0;
    lo_b = best.log_bc - db, hi_b = best.log_bc + db;
    lo_c = std::max(0.0, best.cost - dc), hi_c = best.cost + dc;
  }
  return best;
}

double predict_log(const Params& p, const Point& x) { return p.log_e + shape(x, p.log_bc, p.cost); }

// Standard errors from the Jacobian of the residuals at the optimum: s² (JᵀJ)⁻¹ over the free parameters.
std::vector<std::optional<double>> standard_errors(const std::vector<Point>& pts, const Params& at, bool stale) {
  const int k = stale ? 3 : 2;
  const int n = static_cast<int>(pts.size());
  std::vector<std::optional<double>> out(3);
  if (n <= k) return out;
  std::vector<std::vector<double>> J(static_cast<size_t>(n), std::vector<double>(static_cast<size_t>(k)));
  for (int i = 0; i < n; ++i) {
    const Point& p = pts[static_cast<size_t>(i)];
    J[i][0] = 1.0;
    const double h = 1e-5;
    J[i][1] = (shape(p, at.log_bc + h, at.cost) - shape(p, at.log_bc - h, at.cost)) / (2 * h);
    if (stale) J[i][2] = (shape(p, at.log_bc, at.cost + h) - shape(p, at.log_bc, std::max(0.0, at.cost - h))) /
                         (at.cost + h - std::max(0.0, at.cost - h));
  }
  double A[3][3] = {};
  for (int i = 0; i < n; ++i)
    for (int a = 0; a < k; ++a)
      for (int b = 0; b < k; ++b) A[a][b] += J[i][a] * J[i][b];
  // Invert the k×k normal matrix (Gauss-Jordan).
  double inv[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  for (int c = 0; c < k; ++c) {
    int piv = c;
    for (int r = c + 1; r < k; ++r)
      if (std::abs(A[r][c]) > std::abs(A[piv][c])) piv = r;
    if (std::abs(A[piv][c]) < 1e-12) return out;  // not identified
    std::swap(A[c], A[piv]);
    std::swap(inv[c], inv[piv]);
    const double d = A[c][c];
    for (int j = 0; j < k; ++j) A[c][j] /= d, inv[c][j] /= d;
    for (int r = 0; r < k; ++r) {
      if (r == c) continue;
      const double f = A[r][c];
      for (int j = 0; j < k; ++j) A[r][j] -= f * A[c][j], inv[r][j] -= f * inv[c][j];
    }
  }
  const double s2 = at.sse / (n - k);
  for (int a = 0; a < k; ++a) out[static_cast<size_t>(a)] = std::sqrt(std::max(0.0, s2 * inv[a][a]));
  return out;
}

std::vector<const ConvergenceRun*> reached_runs(const ConvergenceData& data) {
  std::vector<const ConvergenceRun*> out;
  for (const ConvergenceRun& r : data.runs)
    if (r.reached) out.push_back(&r);
  return out;
}

}  // namespace

ConvergenceData read_convergence_runs(const std::vector<std::string>& files) {
  ConvergenceData data;
  for (const std::string& file : files) {
    const Json doc = load_json_file(file);
    const JsonObject root = JsonObject::root(doc, file);
    const Json& runs = root.get_array("runs");
    for (size_t i = 0; i < runs.size(); ++i) {
      const JsonObject run(runs[i], file, fmt::format("/runs/{}", i));
      if (!runs[i].contains("time_to_target")) continue;
      data.runs.push_back(read_run(run, file, data, data.runs.empty()));
    }
  }
  if (data.runs.empty())
    throw InputError(files.empty() ? std::string() : files.front(), "/runs",
                     "runs with a time_to_target (scaletwin run --target-accuracy A --json FILE)");
  return data;
}

ConvergenceFit fit_convergence(const ConvergenceData& data) {
  const std::vector<const ConvergenceRun*> runs = reached_runs(data);
  const std::string file = data.runs.front().file;
  if (runs.size() < 3)
    throw InputError(file, "/runs", fmt::format("at least 3 runs that reached the target ({} did)", runs.size()));
  double lo = 1e300, hi = 0;
  for (const ConvergenceRun* r : runs) lo = std::min(lo, r->update_batch), hi = std::max(hi, r->update_batch);
  if (hi <= lo) throw InputError(file, "/runs", "runs at two or more update batches (the critical batch is their "
                                                "images' change with the batch)");
  const std::vector<Point> pts = points_of(data, runs);
  const Params best = fit_points(pts);
  const bool stale = std::any_of(pts.begin(), pts.end(), [](const Point& p) { return p.staleness > 0.0; });
  ConvergenceFit fit;
  fit.model.images_min = std::exp(best.log_e);
  fit.model.critical_batch = std::exp(best.log_bc);
  fit.model.staleness_cost = best.cost;
  fit.model.target_accuracy = data.target_accuracy;
  const auto se = standard_errors(pts, best, stale);
  fit.se_log_images_min = se[0];
  fit.se_log_critical_batch = se[1];
  if (stale) fit.se_staleness_cost = se[2];
  double ape = 0.0;
  for (const Point& p : pts) ape += std::abs(std::exp(predict_log(best, p) - p.log_images) - 1.0);
  fit.in_sample_mape = ape / static_cast<double>(pts.size());
  // Leave one configuration out: refit without every run of a configuration (its scheme, workers and update batch:
  // the other seeds of it too), predict each of its runs. The error then holds both what the model's form misses at a
  // configuration it did not see and the run's own seed-to-seed spread (a configuration left alone with runs at one
  // update batch falls back to leaving its runs out one at a time).
  const auto configuration = [](const ConvergenceRun& r) {
    return fmt::format("{}|{}|{}", r.scheme, r.gpus, r.update_batch);
  };
  double sq = 0.0;
  fit.loo_log_errors.assign(pts.size(), 0.0);
  for (size_t i = 0; i < pts.size(); ++i) {
    std::vector<Point> rest;
    double rest_lo = 1e300, rest_hi = 0.0;
    for (size_t j = 0; j < pts.size(); ++j)
      if (configuration(*runs[j]) != configuration(*runs[i])) {
        rest.push_back(pts[j]);
        rest_lo = std::min(rest_lo, pts[j].batch), rest_hi = std::max(rest_hi, pts[j].batch);
      }
    if (rest.size() < 3 || rest_hi <= rest_lo) {
      rest.clear();
      for (size_t j = 0; j < pts.size(); ++j)
        if (j != i) rest.push_back(pts[j]);
    }
    const Params p = fit_points(rest);
    const double e = predict_log(p, pts[i]) - pts[i].log_images;
    fit.loo_log_errors[i] = e;
    sq += e * e;
  }
  fit.model.log_sd = std::sqrt(sq / static_cast<double>(pts.size()));
  return fit;
}

Json convergence_to_json(const ConvergenceFit& fit, const ConvergenceData& data) {
  auto opt = [](const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); };
  Json runs = Json::array();
  size_t k = 0;
  std::vector<double> noise;
  for (const ConvergenceRun& r : data.runs) {
    Json j = {{"id", r.id}, {"file", r.file}, {"update_batch", r.update_batch}, {"staleness", r.staleness},
              {"reached", r.reached}};
    if (r.reached) {
      const double predicted = sim::images_to_target(fit.model, data.lr_scaling, data.reference_batch, r.update_batch,
                                                     r.staleness);
      j["images"] = r.images;
      j["fitted_images"] = predicted;
      j["left_out_log_error"] = fit.loo_log_errors.at(k++);
    }
    if (r.noise_scale) {
      j["noise_scale_b_simple"] = *r.noise_scale;
      noise.push_back(*r.noise_scale);
    }
    runs.push_back(std::move(j));
  }
  Json out = {
      {"format", "scaletwin-convergence/1"},
      {"comment", "images to the target accuracy: images_min * rho(B) * (1 + B / critical_batch) * "
                  "(1 + staleness_cost * staleness * lr(B) / lr(B_ref)), sim/convergence.hpp"},
      {"model", data.model},
      {"target_accuracy", data.target_accuracy},
      {"lr_scaling", data.lr_scaling},
      {"lr_reference_batch", data.reference_batch},
      {"images_min", fit.model.images_min},
      {"critical_batch", fit.model.critical_batch},
      {"staleness_cost", fit.model.staleness_cost},
      {"log_sd", fit.model.log_sd},
      {"standard_errors",
       {{"log_images_min", opt(fit.se_log_images_min)},
        {"log_critical_batch", opt(fit.se_log_critical_batch)},
        {"staleness_cost", opt(fit.se_staleness_cost)}}},
      {"in_sample_mape", fit.in_sample_mape},
      {"runs", runs}};
  if (!noise.empty()) {
    std::sort(noise.begin(), noise.end());
    out["noise_scale"] = {{"median_b_simple", noise[noise.size() / 2]}, {"runs", noise.size()},
                          {"comment", "the gradient noise scale the runs measured (second half of each run): "
                                      "McCandlish et al. find critical_batch close to it"}};
  }
  return out;
}

ConvergenceCheck check_convergence(const plan::Convergence& model, const ConvergenceData& data) {
  ConvergenceCheck check;
  double ape = 0.0;
  std::map<std::string, std::vector<double>> by_config;
  for (const ConvergenceRun& r : data.runs) {
    if (!r.reached) {
      ++check.unreached;
      continue;
    }
    ConvergenceCheck::Row row;
    row.run = &r;
    row.predicted_images =
        sim::images_to_target(model, data.lr_scaling, data.reference_batch, r.update_batch, r.staleness);
    // At the run's own training pace up to the target (its seconds per image there).
    row.predicted_seconds = row.predicted_images * (r.seconds / r.images);
    row.error = row.predicted_seconds / r.seconds - 1.0;
    row.inside = model.log_sd > 0.0 && std::abs(std::log(row.predicted_seconds / r.seconds)) <= report::kZ90 * model.log_sd;
    check.inside += row.inside ? 1 : 0;
    ape += std::abs(row.error);
    check.rows.push_back(row);
    by_config[fmt::format("{} {} {}", r.scheme, r.gpus, r.update_batch)].push_back(r.seconds);
  }
  if (!check.rows.empty()) check.mape = ape / static_cast<double>(check.rows.size());
  double cv_sum = 0.0;
  for (const auto& [key, secs] : by_config) {
    if (secs.size() < 2) continue;
    const double mean = std::accumulate(secs.begin(), secs.end(), 0.0) / static_cast<double>(secs.size());
    double var = 0.0;
    for (double s : secs) var += (s - mean) * (s - mean);
    var /= static_cast<double>(secs.size() - 1);
    cv_sum += std::sqrt(var) / mean;
    ++check.spread_configurations;
  }
  if (check.spread_configurations > 0) check.spread_cv = cv_sum / check.spread_configurations;
  // The slowdown per unit of staleness, measured against the synchronous runs of the same update batch.
  std::map<double, std::vector<double>> sync_images;
  std::map<std::string, std::vector<const ConvergenceRun*>> async_configs;
  for (const ConvergenceRun& r : data.runs) {
    if (!r.reached) continue;
    if (r.staleness > 0.0) async_configs[fmt::format("{} {} {}", r.scheme, r.gpus, r.update_batch)].push_back(&r);
    else sync_images[r.update_batch].push_back(r.images);
  }
  auto mean = [](const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0) / v.size(); };
  for (const auto& [key, runs] : async_configs) {
    const double batch = runs.front()->update_batch;
    const auto sync = sync_images.find(batch);
    if (sync == sync_images.end()) continue;
    ConvergenceCheck::Staleness st;
    std::string name = runs.front()->id;  // the first run's id without its "-seedN"
    if (const size_t at = name.rfind("-seed"); at != std::string::npos) name.erase(at);
    st.configuration = fmt::format("{} (update batch {:.0f})", name, batch);
    st.update_batch = batch;
    std::vector<double> images, tau;
    for (const ConvergenceRun* r : runs) images.push_back(r->images), tau.push_back(r->staleness);
    st.staleness = mean(tau);
    st.weighted = st.staleness * sim::lr_ratio(data.lr_scaling, batch, data.reference_batch);
    st.measured_slowdown = mean(images) / mean(sync->second) - 1.0;
    st.predicted_slowdown = model.staleness_cost * st.weighted;
    st.async_runs = static_cast<int>(runs.size());
    st.sync_runs = static_cast<int>(sync->second.size());
    check.staleness.push_back(st);
  }
  return check;
}

Json convergence_check_json(const ConvergenceCheck& check, const plan::Convergence& model) {
  Json runs = Json::array();
  for (const auto& row : check.rows)
    runs.push_back({{"id", row.run->id},
                    {"update_batch", row.run->update_batch},
                    {"staleness", row.run->staleness},
                    {"measured_images", row.run->images},
                    {"predicted_images", row.predicted_images},
                    {"measured_seconds", row.run->seconds},
                    {"predicted_seconds", row.predicted_seconds},
                    {"error", row.error},
                    {"inside_interval", row.inside}});
  Json stale = Json::array();
  for (const auto& st : check.staleness)
    stale.push_back({{"configuration", st.configuration}, {"update_batch", st.update_batch}, {"staleness", st.staleness},
                     {"rate_weighted_staleness", st.weighted}, {"measured_slowdown", st.measured_slowdown},
                     {"predicted_slowdown", st.predicted_slowdown}, {"async_runs", st.async_runs},
                     {"sync_runs", st.sync_runs}});
  return {{"figure", "time_to_target"},
          {"staleness", stale},
          {"convergence", model.source},
          {"runs", runs},
          {"mape", 100.0 * check.mape},  // percent, as validate's (../shared/spec.md)
          {"inside_interval", check.inside},
          {"unreached", check.unreached},
          {"run_to_run_cv_percent", 100.0 * check.spread_cv},
          {"repeated_configurations", check.spread_configurations}};
}

std::string convergence_check_table(const ConvergenceCheck& check, const plan::Convergence& model) {
  std::ostringstream out;
  out << fmt::format("time to target accuracy {} (convergence {}): images_min {:.0f}, critical batch {:.0f}, staleness "
                     "cost {:.3f}, 90% interval x/{:.2f}\n",
                     model.target_accuracy, model.source, model.images_min, model.critical_batch, model.staleness_cost,
                     report::interval_factor(model.log_sd));
  out << fmt::format("{:<40} {:>8} {:>6} {:>10} {:>10} {:>9} {:>9} {:>8}\n", "run", "batch", "stale", "images",
                     "predicted", "seconds", "predicted", "error");
  for (const auto& row : check.rows)
    out << fmt::format("{:<40} {:>8.0f} {:>6.2f} {:>10.0f} {:>10.0f} {:>9.2f} {:>9.2f} {:>+7.1f}%{}\n", row.run->id,
                       row.run->update_batch, row.run->staleness, row.run->images, row.predicted_images,
                       row.run->seconds, row.predicted_seconds, 100.0 * row.error, row.inside ? "" : " *");
  out << fmt::format("MAPE {:.1f}% over {} runs ({} inside the 90% interval; * outside); {} runs did not reach the "
                     "target\n", 100.0 * check.mape, check.rows.size(), check.inside, check.unreached);
  if (!check.staleness.empty()) {
    out << fmt::format("\nslowdown from staleness against the synchronous runs of the same update batch (model: cost "
                       "{:.3f} per rate-weighted stale update):\n", model.staleness_cost);
    out << fmt::format("{:<52} {:>9} {:>9} {:>10} {:>10} {:>10} {:>10}\n", "asynchronous configuration", "staleness",
                       "weighted", "measured", "predicted", "meas/unit", "runs");
    for (const auto& st : check.staleness)
      out << fmt::format("{:<52} {:>9.2f} {:>9.2f} {:>+9.1f}% {:>+9.1f}% {:>10.3f} {:>4} vs {}\n", st.configuration,
                         st.staleness, st.weighted, 100.0 * st.measured_slowdown, 100.0 * st.predicted_slowdown,
                         st.measured_slowdown / st.weighted, st.async_runs, st.sync_runs);
  }
  if (check.spread_configurations > 0)
    out << fmt::format("run-to-run spread of the measured time: coefficient of variation {:.1f}% (mean over {} "
                       "repeated configurations)\n", 100.0 * check.spread_cv, check.spread_configurations);
  return out.str();
}

}  // namespace scaletwin::calibrate
