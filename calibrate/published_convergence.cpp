// Convergence from published runs (see published_convergence.hpp).
#include "calibrate/published_convergence.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <sstream>

#include "core/error.hpp"
#include "core/files.hpp"
#include "sim/convergence.hpp"

namespace scaletwin::calibrate {

namespace {

double number_of(const JsonObject& o, const Json& v, const std::string& field, const std::string& what) {
  if (!v.is_number()) o.fail(field, what);
  return v.get<double>();
}

// "eval_accuracy (top-1) >= 0.7590" -> 0.759
double target_of(const JsonObject& o, const Json& v) {
  const std::string text = v.is_string() ? v.get<std::string>() : std::string();
  const size_t at = text.find(">=");
  try {
    if (at != std::string::npos) return std::stod(text.substr(at + 2));
  } catch (const std::exception&) {
  }
  o.fail("quality_target", "a target such as \"eval_accuracy (top-1) >= 0.7590\"");
  return 0.0;
}

RcpPoint read_rcp(const JsonObject& o) {
  const Json& raw = o.raw();
  RcpPoint p;
  p.json_path = o.path();
  if (!raw.contains("rcp_key") || !raw["rcp_key"].is_string()) o.fail("rcp_key", "the RCP's name (a string)");
  p.key = raw["rcp_key"].get<std::string>();
  if (!raw.contains("global_batch")) o.fail("global_batch", "the global batch (a number)");
  p.global_batch = number_of(o, raw["global_batch"], "global_batch", "the global batch (a positive number)");
  if (p.global_batch <= 0.0) o.fail("global_batch", "the global batch (a positive number)");
  if (raw.value("convergence_unit", std::string("epochs")) != "epochs")
    o.fail("convergence_unit", "\"epochs\" (the unit of epochs_to_converge)");
  if (!raw.contains("hyperparameters") || !raw["hyperparameters"].is_object())
    o.fail("hyperparameters", "the recipe's hyperparameters (an object)");
  const JsonObject h(raw["hyperparameters"], o.file(), o.path_of("hyperparameters"));
  const Json& hp = h.raw();
  p.optimizer = hp.value("optimizer", raw.value("optimizer", std::string()));
  if (p.optimizer != "lars" && p.optimizer != "sgd") h.fail("optimizer", "\"lars\" or \"sgd\"");
  if (!hp.contains("opt_learning_rate_warmup_epochs"))
    h.fail("opt_learning_rate_warmup_epochs", "the warm-up's length in epochs (a number)");
  p.warmup_epochs = number_of(h, hp["opt_learning_rate_warmup_epochs"], "opt_learning_rate_warmup_epochs",
                              "the warm-up's length in epochs (a number)");
  if (hp.contains("opt_base_learning_rate") && hp["opt_base_learning_rate"].is_number())
    p.base_learning_rate = hp["opt_base_learning_rate"].get<double>();
  if (!raw.contains("epochs_to_converge") || !raw["epochs_to_converge"].is_array() ||
      raw["epochs_to_converge"].empty())
    o.fail("epochs_to_converge", "the epochs each seed needed (a non-empty array of numbers)");
  for (size_t i = 0; i < raw["epochs_to_converge"].size(); ++i) {
    const Json& e = raw["epochs_to_converge"][i];
    if (!e.is_number() || e.get<double>() <= 0.0)
      o.fail(fmt::format("epochs_to_converge/{}", i), "a positive number of epochs");
    p.epochs.push_back(e.get<double>());
  }
  if (raw.contains("mlperf_version") && raw["mlperf_version"].is_array())
    for (const Json& v : raw["mlperf_version"])
      if (v.is_string()) p.rounds.push_back(v.get<std::string>());
  return p;
}

// "23.60 ±0.12" -> {23.60, 0.12}; no value: nullopt.
std::optional<std::pair<double, double>> error_of(const Json& v) {
  if (!v.is_string()) return std::nullopt;
  const std::string text = v.get<std::string>();
  try {
    size_t used = 0;
    const double value = std::stod(text, &used);
    const size_t pm = text.find("\u00b1");
    const double sd = pm == std::string::npos ? 0.0 : std::stod(text.substr(pm + std::string("\u00b1").size()));
    return std::make_pair(value, sd);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

GoyalRow read_goyal(const JsonObject& o, const std::vector<GoyalRow>& before) {
  const Json& raw = o.raw();
  GoyalRow g;
  g.json_path = o.path();
  g.label = raw.value("table_or_section", std::string("?"));
  const std::string model = raw.value("model", std::string());
  const std::string dataset = raw.value("dataset", std::string());
  const std::string rule = raw.contains("lr_rule") && raw["lr_rule"].is_string() ? raw["lr_rule"].get<std::string>() : "";
  const auto error = raw.contains("top1_error") ? error_of(raw["top1_error"]) : std::nullopt;
  const bool at_90 = raw.contains("epochs") && raw["epochs"].is_number() && raw["epochs"].get<double>() == 90.0;
  if (raw.contains("global_batch") && raw["global_batch"].is_number()) g.batch = raw["global_batch"].get<double>();
  if (error) std::tie(g.top1_error, g.sd) = *error;
  for (const GoyalRow& b : before)
    if (b.why_not.empty() && error && b.batch == g.batch && b.top1_error == g.top1_error && model == "ResNet-50")
      g.why_not = "repeats " + b.json_path;
  if (!g.why_not.empty())
    ;
  else if (model != "ResNet-50")
    g.why_not = fmt::format("another model ({})", model);
  else if (dataset != "ImageNet-1k")
    g.why_not = "another training set (" + dataset + ")";
  else if (!at_90 || g.batch <= 0.0 || !error)
    g.why_not = "no top-1 error after 90 epochs at a stated batch";
  else if (rule.find("no warmup") != std::string::npos || rule.find("constant warmup") != std::string::npos)
    g.why_not = "a warm-up variant (" + rule + ")";
  else if (rule.find("linear scaling") == std::string::npos && g.label.rfind("Table 1 (baseline", 0) != 0)
    g.why_not = "not the linear-scaling series (learning rate \"" + rule + "\", " + g.label + ")";
  else if (g.sd <= 0.0)
    g.why_not = "no spread stated";
  g.fitted = g.why_not.empty();
  return g;
}

// Ordinary least squares y = X beta (columns: 1, B, W), with w (the third) free or held at `held`.
struct Ols {
  std::array<double, 3> beta{};
  std::array<std::array<double, 3>, 3> cov{};  // s² (XᵀX)⁻¹ over the free columns (zeros for a held one)
  double s2 = 0.0;
  bool ok = false;
};

bool invert(std::vector<std::vector<double>> a, std::vector<std::vector<double>>& inv) {
  const size_t n = a.size();
  inv.assign(n, std::vector<double>(n, 0.0));
  for (size_t i = 0; i < n; ++i) inv[i][i] = 1.0;
  for (size_t c = 0; c < n; ++c) {
    size_t pivot = c;
    for (size_t r = c + 1; r < n; ++r)
      if (std::abs(a[r][c]) > std::abs(a[pivot][c])) pivot = r;
    if (std::abs(a[pivot][c]) < 1e-12 * (1.0 + std::abs(a[c][c]))) return false;
    std::swap(a[c], a[pivot]);
    std::swap(inv[c], inv[pivot]);
    const double d = a[c][c];
    for (size_t k = 0; k < n; ++k) a[c][k] /= d, inv[c][k] /= d;
    for (size_t r = 0; r < n; ++r) {
      if (r == c) continue;
      const double f = a[r][c];
      for (size_t k = 0; k < n; ++k) a[r][k] -= f * a[c][k], inv[r][k] -= f * inv[c][k];
    }
  }
  return true;
}

struct Obs {
  double batch, warmup, epochs;
};

Ols ols(const std::vector<Obs>& obs, std::optional<double> held_w, double quantization) {
  Ols out;
  const size_t k = held_w ? 2 : 3;
  std::vector<std::vector<double>> xtx(k, std::vector<double>(k, 0.0));
  std::vector<double> xty(k, 0.0);
  auto row = [&](const Obs& o) {
    std::vector<double> x = {1.0, o.batch};
    if (!held_w) x.push_back(o.warmup);
    return x;
  };
  auto target = [&](const Obs& o) { return o.epochs - quantization - (held_w ? *held_w * o.warmup : 0.0); };
  for (const Obs& o : obs) {
    const std::vector<double> x = row(o);
    for (size_t i = 0; i < k; ++i) {
      xty[i] += x[i] * target(o);
      for (size_t j = 0; j < k; ++j) xtx[i][j] += x[i] * x[j];
    }
  }
  std::vector<std::vector<double>> inv;
  if (!invert(xtx, inv)) return out;
  for (size_t i = 0; i < k; ++i)
    for (size_t j = 0; j < k; ++j) out.beta[i] += inv[i][j] * xty[j];
  if (held_w) out.beta[2] = *held_w;
  double sse = 0.0;
  for (const Obs& o : obs) {
    const double r = o.epochs - quantization - out.beta[0] - out.beta[1] * o.batch - out.beta[2] * o.warmup;
    sse += r * r;
  }
  out.s2 = obs.size() > k ? sse / static_cast<double>(obs.size() - k) : 0.0;
  for (size_t i = 0; i < k; ++i)
    for (size_t j = 0; j < k; ++j) out.cov[i][j] = out.s2 * inv[i][j];
  out.ok = out.beta[0] > 0.0;
  return out;
}

// The fit with w in [0, 1]: free where it lands inside, else held at the nearer bound. nullopt where the batches
// cannot identify it (every point at one warm-up): then held at `fallback_w`.
Ols fit_rcp(const std::vector<Obs>& obs, double fallback_w, bool* at_bound) {
  Ols free = ols(obs, std::nullopt, kRcpEvalEveryEpochs / 2.0);
  if (at_bound) *at_bound = false;
  if (!free.ok) return ols(obs, fallback_w, kRcpEvalEveryEpochs / 2.0);
  if (free.beta[2] >= 0.0 && free.beta[2] <= 1.0) return free;
  if (at_bound) *at_bound = true;
  return ols(obs, std::clamp(free.beta[2], 0.0, 1.0), kRcpEvalEveryEpochs / 2.0);
}

double predict_epochs(const Ols& f, double batch, double warmup) {
  return f.beta[0] + f.beta[1] * batch + f.beta[2] * warmup + kRcpEvalEveryEpochs / 2.0;
}

void fit_goyal(PublishedConvergence& data, PublishedFit& fit) {
  const auto base = std::find_if(data.goyal.begin(), data.goyal.end(),
                                 [](const GoyalRow& g) { return g.fitted && g.batch == 256.0; });
  if (base == data.goyal.end()) return;
  const double base_error = base->top1_error;
  for (GoyalRow& g : data.goyal)
    if (g.fitted && g.top1_error - base_error > kSlopeRangePoints) {
      g.fitted = false;
      g.why_not = fmt::format("beyond the slope's range: {:.2f} points above the baseline (at most {})",
                              g.top1_error - base_error, kSlopeRangePoints);
    }
  std::vector<GoyalRow*> rows;
  for (GoyalRow& g : data.goyal)
    if (g.fitted) rows.push_back(&g);
  if (rows.size() < 3) return;
  const auto chi2_at = [&](double bc, double* e0_out) {
    double sw = 0.0, swr = 0.0;
    for (const GoyalRow* g : rows) {
      const double w = 1.0 / (g->sd * g->sd);
      sw += w;
      swr += w * (g->top1_error - kTop1PointsPerEfold * std::log((1.0 + g->batch / bc) / (1.0 + 256.0 / bc)));
    }
    const double e0 = swr / sw;
    double chi2 = 0.0;
    for (const GoyalRow* g : rows) {
      const double r = g->top1_error - e0 - kTop1PointsPerEfold * std::log((1.0 + g->batch / bc) / (1.0 + 256.0 / bc));
      chi2 += r * r / (g->sd * g->sd);
    }
    if (e0_out) *e0_out = e0;
    return chi2;
  };
  const double lo = std::log(256.0), hi = std::log(1e7);
  const int n = 4000;
  double best = 1e300, best_lbc = lo;
  std::vector<double> chi(n + 1);
  for (int i = 0; i <= n; ++i) {
    const double lbc = lo + (hi - lo) * i / n;
    chi[static_cast<size_t>(i)] = chi2_at(std::exp(lbc), nullptr);
    if (chi[static_cast<size_t>(i)] < best) best = chi[static_cast<size_t>(i)], best_lbc = lbc;
  }
  // Standard error from the profile: where chi² rises by the reduced chi² (at least 1: a fit worse than the stated
  // spreads widens its own interval).
  const double dof = static_cast<double>(rows.size()) - 2.0;
  const double rise = std::max(1.0, best / std::max(1.0, dof));
  double low = hi, high = lo;
  for (int i = 0; i <= n; ++i)
    if (chi[static_cast<size_t>(i)] <= best + rise) {
      const double lbc = lo + (hi - lo) * i / n;
      low = std::min(low, lbc);
      high = std::max(high, lbc);
    }
  fit.sgd_critical_batch = std::exp(best_lbc);
  fit.sgd_se_log_critical_batch = (high - low) / 2.0;
  fit.sgd_chi2 = chi2_at(fit.sgd_critical_batch, &fit.sgd_base_error);
  fit.sgd_rows = static_cast<int>(rows.size());
  for (GoyalRow& g : data.goyal)
    if (g.batch > 0.0 && g.top1_error > 0.0)
      g.predicted = fit.sgd_base_error + kTop1PointsPerEfold * std::log((1.0 + g.batch / fit.sgd_critical_batch) /
                                                                         (1.0 + 256.0 / fit.sgd_critical_batch));
}

}  // namespace

bool is_published_convergence(const Json& doc) {
  return doc.is_object() && doc.contains("rcp") && doc["rcp"].is_array();
}

PublishedConvergence read_published_convergence(const std::string& path) {
  const Json doc = load_json_file(path);
  const JsonObject root = JsonObject::root(doc, path);
  PublishedConvergence data;
  data.file = path;
  const Json& rcp = root.get_array("rcp");
  for (size_t i = 0; i < rcp.size(); ++i) {
    const JsonObject o(rcp[i], path, fmt::format("/rcp/{}", i));
    RcpPoint p = read_rcp(o);
    const double target = target_of(o, o.raw().contains("quality_target") ? o.raw()["quality_target"] : Json());
    if (data.rcp.empty()) {
      data.target_accuracy = target;
      data.benchmark = o.raw().value("model_dataset", std::string("?"));
    } else if (std::abs(target - data.target_accuracy) > 1e-9) {
      o.fail("quality_target", fmt::format("the target of the other records ({})", data.target_accuracy));
    }
    const auto same = std::find_if(data.rcp.begin(), data.rcp.end(), [&](const RcpPoint& q) {
      return q.key == p.key && q.epochs == p.epochs && q.warmup_epochs == p.warmup_epochs;
    });
    if (same != data.rcp.end()) {
      data.rcp_repeats.push_back(fmt::format("{} repeats {} ({}: the same {} seeds)", p.json_path, same->json_path,
                                             p.key, p.epochs.size()));
      same->rounds.insert(same->rounds.end(), p.rounds.begin(), p.rounds.end());
      continue;
    }
    data.rcp.push_back(std::move(p));
  }
  if (root.has("goyal_2017")) {
    const Json& goyal = root.get_array("goyal_2017");
    for (size_t i = 0; i < goyal.size(); ++i)
      data.goyal.push_back(read_goyal(JsonObject(goyal[i], path, fmt::format("/goyal_2017/{}", i)), data.goyal));
  }
  return data;
}

PublishedFit fit_published_convergence(PublishedConvergence& data) {
  PublishedFit fit;
  std::map<double, int> batches;
  for (const RcpPoint& p : data.rcp) {
    ++batches[p.global_batch];
    if (p.optimizer != data.rcp.front().optimizer)
      throw InputError(data.file, p.json_path + "/hyperparameters/optimizer",
                       fmt::format("the optimizer of the other records ({}): one fit per optimizer",
                                   data.rcp.front().optimizer));
  }
  if (batches.size() < 3)
    throw InputError(data.file, "/rcp", fmt::format("reference convergence points at 3 global batches or more (got {})",
                                                    batches.size()));
  std::vector<Obs> all;
  for (const RcpPoint& p : data.rcp)
    for (double e : p.epochs) all.push_back({p.global_batch, p.warmup_epochs, e});
  const Ols f = fit_rcp(all, 0.5, &fit.warmup_at_bound);
  ST_ASSERT(f.ok, "the RCP fit has no positive intercept");
  const double m = f.beta[0], slope = std::max(f.beta[1], 1e-12);
  fit.model.images_min = m * kImagenetTrainImages;
  fit.model.critical_batch = m / slope;
  fit.model.warmup_cost = f.beta[2];
  fit.model.dataset_images = kImagenetTrainImages;
  fit.model.optimizer = data.rcp.front().optimizer;
  fit.model.target_accuracy = data.target_accuracy;
  fit.model.source = data.file;
  fit.se_epochs_min = std::sqrt(std::max(0.0, f.cov[0][0]));
  fit.se_warmup_cost = fit.warmup_at_bound ? 0.0 : std::sqrt(std::max(0.0, f.cov[2][2]));
  // log B_crit = log m - log slope: var = var(m)/m² + var(s)/s² - 2 cov(m, s)/(m s).
  fit.model.se_log_critical_batch =
      std::sqrt(std::max(0.0, f.cov[0][0] / (m * m) + f.cov[1][1] / (slope * slope) - 2.0 * f.cov[0][1] / (m * slope)));
  fit.model.batch_low = batches.begin()->first;
  fit.model.batch_high = batches.rbegin()->first;
  // Seed-to-seed spread: pooled within-batch variance of log epochs.
  double ss = 0.0, ape = 0.0, lobo_ss = 0.0, lobo_ape = 0.0;
  int dof = 0, n = 0;
  for (const RcpPoint& p : data.rcp) {
    double mean = 0.0, log_mean = 0.0;
    for (double e : p.epochs) mean += e, log_mean += std::log(e);
    mean /= static_cast<double>(p.epochs.size());
    log_mean /= static_cast<double>(p.epochs.size());
    for (double e : p.epochs) ss += (std::log(e) - log_mean) * (std::log(e) - log_mean);
    dof += static_cast<int>(p.epochs.size()) - 1;
    std::vector<Obs> rest;
    for (const Obs& o : all)
      if (o.batch != p.global_batch) rest.push_back(o);
    const Ols left = fit_rcp(rest, f.beta[2], nullptr);
    PublishedFit::Batch b{&p, mean, predict_epochs(f, p.global_batch, p.warmup_epochs),
                          predict_epochs(left, p.global_batch, p.warmup_epochs)};
    for (double e : p.epochs) ape += std::abs(b.fitted / e - 1.0), ++n;
    lobo_ss += std::pow(std::log(b.left_out / mean), 2);
    lobo_ape += std::abs(b.left_out / mean - 1.0);
    fit.batches.push_back(b);
  }
  fit.seed_log_sd = dof > 0 ? std::sqrt(ss / dof) : 0.0;
  fit.lobo_log_rms = std::sqrt(lobo_ss / static_cast<double>(fit.batches.size()));
  fit.lobo_mape = lobo_ape / static_cast<double>(fit.batches.size());
  fit.in_sample_mape = n > 0 ? ape / n : 0.0;
  fit.model.log_sd = std::hypot(fit.lobo_log_rms, fit.seed_log_sd);
  fit_goyal(data, fit);
  return fit;
}

Json published_fit_to_json(const PublishedFit& fit, const PublishedConvergence& data) {
  const plan::Convergence& c = fit.model;
  Json batches = Json::array();
  for (const PublishedFit::Batch& b : fit.batches)
    batches.push_back({{"rcp", b.point->key},
                       {"record", b.point->json_path},
                       {"mlperf_rounds", b.point->rounds},
                       {"global_batch", b.point->global_batch},
                       {"warmup_epochs", b.point->warmup_epochs},
                       {"base_learning_rate", b.point->base_learning_rate},
                       {"epochs_per_seed", b.point->epochs},
                       {"measured_mean_epochs", b.measured_mean},
                       {"fitted_epochs", b.fitted},
                       {"left_out_epochs", b.left_out},
                       {"left_out_error", b.left_out / b.measured_mean - 1.0}});
  Json goyal = Json::array();
  for (const GoyalRow& g : data.goyal) {
    Json j = {{"record", g.json_path}, {"label", g.label}, {"fitted", g.fitted}};
    if (g.batch > 0.0) j["global_batch"] = g.batch;
    if (g.top1_error > 0.0) j["top1_error"] = g.top1_error;
    if (g.predicted > 0.0) j["predicted_top1_error"] = g.predicted;
    if (!g.fitted) j["why_not"] = g.why_not;
    goyal.push_back(std::move(j));
  }
  Json out = {
      {"format", "scaletwin-convergence/1"},
      {"comment",
       "images to the target accuracy: images_min * rho(B) * (1 + B / critical_batch) * (1 + staleness_cost * "
       "staleness * lr(B) / lr(B_ref)) + warmup_cost * warmup_epochs * dataset_images, sim/convergence.hpp; fitted by "
       "scaletwin calibrate --convergence on published reference convergence points (calibrate/published_convergence.hpp)"},
      {"model", "resnet50"},
      {"dataset", "imagenet-1k"},
      {"target_accuracy", c.target_accuracy},
      {"optimizer", c.optimizer},
      {"lr_scaling", "tuned"},
      {"lr_reference_batch", c.batch_low},
      {"images_min", c.images_min},
      {"critical_batch", c.critical_batch},
      {"staleness_cost", 0.0},
      {"warmup_cost", c.warmup_cost},
      {"dataset_images", c.dataset_images},
      {"batch_range", Json::array({c.batch_low, c.batch_high})},
      {"se_log_critical_batch", c.se_log_critical_batch},
      {"log_sd", c.log_sd},
      {"in_sample_mape", fit.in_sample_mape},
      {"eval_every_epochs", kRcpEvalEveryEpochs},
      {"recipe_warmup_epochs",
       [&] {
         Json r = Json::array();
         for (const PublishedFit::Batch& b : fit.batches)
           r.push_back(Json::array({b.point->global_batch, b.point->warmup_epochs}));
         return r;
       }()},
      {"fit",
       {{"epochs_min", c.images_min / c.dataset_images},
        {"se_epochs_min", fit.se_epochs_min},
        {"warmup_cost_at_bound", fit.warmup_at_bound},
        {"se_warmup_cost", fit.se_warmup_cost},
        {"evaluation_offset_epochs",
         fmt::format("+{} (half of an evaluation every {} epochs, offsets varying between runs)",
                     kRcpEvalEveryEpochs / 2.0, kRcpEvalEveryEpochs)},
        {"seed_log_sd", fit.seed_log_sd},
        {"leave_one_batch_out_log_rms", fit.lobo_log_rms},
        {"leave_one_batch_out_mape", fit.lobo_mape},
        {"batches", batches},
        {"repeated_records", data.rcp_repeats}}},
      {"checks",
       {{"goyal_2017",
         {{"comment", "SGD with momentum, linear scaling, gradual warm-up, 90 epochs: err(B) = err_0 + s ln((1 + B / "
                      "B_crit) / (1 + 256 / B_crit)), s the top-1 points per e-fold of epochs near 90 "
                      "(calibrate/published_convergence.hpp)"},
          {"slope_points_per_efold", kTop1PointsPerEfold},
          {"sgd_critical_batch", fit.sgd_critical_batch},
          {"sgd_se_log_critical_batch", fit.sgd_se_log_critical_batch},
          {"base_top1_error", fit.sgd_base_error},
          {"chi2", fit.sgd_chi2},
          {"rows_fitted", fit.sgd_rows},
          {"rows", goyal}}}}},
      {"provenance", {{"file", data.file}, {"benchmark", data.benchmark}}}};
  return out;
}

std::string published_fit_table(const PublishedFit& fit, const PublishedConvergence& data) {
  const plan::Convergence& c = fit.model;
  std::ostringstream out;
  out << fmt::format("convergence of {} to top-1 {} ({}; {} reference convergence points, {} seeds):\n",
                     data.benchmark, c.target_accuracy, c.optimizer, fit.batches.size(),
                     [&] {
                       size_t n = 0;
                       for (const RcpPoint& p : data.rcp) n += p.epochs.size();
                       return n;
                     }());
  for (const std::string& r : data.rcp_repeats) out << "  read once: " << r << "\n";
  out << fmt::format("  epochs_min      {:.2f} epochs (+/- {:.2f})\n", c.images_min / c.dataset_images, fit.se_epochs_min);
  out << fmt::format("  critical batch  {:.0f} (x/ {:.2f} standard error)\n", c.critical_batch,
                     std::exp(c.se_log_critical_batch));
  out << fmt::format("  warm-up cost    {:.2f} of each warm-up epoch{}\n", c.warmup_cost,
                     fit.warmup_at_bound ? " (at its bound)" : fmt::format(" (+/- {:.2f})", fit.se_warmup_cost));
  out << fmt::format("  evaluation      every {} epochs: a seed's epochs read {} after its crossing on average\n",
                     kRcpEvalEveryEpochs, kRcpEvalEveryEpochs / 2.0);
  out << fmt::format("  spread          seed to seed {:.3f}, leave one batch out {:.3f}: log_sd {:.3f} (90% x/{:.3f})\n",
                     fit.seed_log_sd, fit.lobo_log_rms, c.log_sd, std::exp(1.6448536269514722 * c.log_sd));
  out << fmt::format("{:>8} {:>7} {:>7} {:>10} {:>8} {:>10} {:>8}\n", "batch", "warm-up", "seeds", "measured",
                     "fitted", "left out", "error");
  for (const PublishedFit::Batch& b : fit.batches)
    out << fmt::format("{:>8.0f} {:>7.0f} {:>7} {:>10.2f} {:>8.2f} {:>10.2f} {:>+7.1f}%\n", b.point->global_batch,
                       b.point->warmup_epochs, b.point->epochs.size(), b.measured_mean, b.fitted, b.left_out,
                       100.0 * (b.left_out / b.measured_mean - 1.0));
  out << fmt::format("leave one batch out: MAPE {:.1f}% over {} batches; in sample {:.1f}% over every seed\n",
                     100.0 * fit.lobo_mape, fit.batches.size(), 100.0 * fit.in_sample_mape);
  if (fit.sgd_rows > 0) {
    out << fmt::format("\nGoyal et al. 2017 (SGD, 90 epochs): critical batch {:.0f} (x/ {:.2f}), chi2 {:.1f} over {} "
                       "rows, {:.2f} top-1 points per e-fold of epochs\n",
                       fit.sgd_critical_batch, std::exp(fit.sgd_se_log_critical_batch), fit.sgd_chi2, fit.sgd_rows,
                       kTop1PointsPerEfold);
    for (const GoyalRow& g : data.goyal) {
      if (g.fitted)
        out << fmt::format("  {:>6.0f}  error {:.2f} +/- {:.2f}, fitted {:.2f}\n", g.batch, g.top1_error, g.sd,
                           g.predicted);
      else
        out << fmt::format("  {} not fitted: {}\n", g.json_path, g.why_not);
    }
  }
  return out.str();
}

}  // namespace scaletwin::calibrate
