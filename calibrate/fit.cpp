// The calibration fit (method in fit.hpp).
#include "calibrate/fit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlopt.hpp>

#include "calibrate/surrogate.hpp"
#include "core/error.hpp"
#include "core/progress.hpp"

namespace scaletwin::calibrate {

namespace {

struct Problem {
  const Surrogate* surrogate = nullptr;
  const std::vector<Parameter>* params = nullptr;
  const std::vector<double>* measured = nullptr;
  std::vector<double> x_start;  // log-parameters the prior pulls toward
  double prior = 0.0;
  sim::Calibration base;

  sim::Calibration at(const std::vector<double>& x) const {
    sim::Calibration c = base;
    for (size_t j = 0; j < x.size(); ++j) (*params)[j].set(c, std::exp(x[j]));
    return c;
  }
  // Relative errors of images/s, one per run.
  std::vector<double> rate_residuals(const sim::Calibration& c) const {
    const std::vector<double> predicted = surrogate->predict(c);
    std::vector<double> r;
    for (size_t i = 0; i < predicted.size(); ++i) r.push_back(predicted[i] / (*measured)[i] - 1.0);
    return r;
  }
  // Those, then the measured phases' (surrogate.hpp): what the fit minimises.
  std::vector<double> residuals(const std::vector<double>& x) const {
    const sim::Calibration c = at(x);
    std::vector<double> r = rate_residuals(c);
    const std::vector<double> phases = surrogate->phase_residuals(c);
    r.insert(r.end(), phases.begin(), phases.end());
    return r;
  }
  double objective(const std::vector<double>& x) const {
    double sum = 0.0;
    for (double r : residuals(x)) sum += r * r;
    for (size_t j = 0; j < x.size(); ++j) sum += prior * prior * (x[j] - x_start[j]) * (x[j] - x_start[j]);
    return sum;
  }
};

double nlopt_objective(unsigned n, const double* x, double* /*grad*/, void* data) {
  return static_cast<const Problem*>(data)->objective(std::vector<double>(x, x + n));
}

std::vector<double> log_values(const std::vector<Parameter>& params, const sim::Calibration& c) {
  std::vector<double> x;
  for (const Parameter& p : params) x.push_back(std::log(p.get(c)));
  return x;
}

bool ends_with(const std::string& s, const std::string& tail) { return s.ends_with(tail); }

// The linear part solved directly: all compute times scaled by one factor a (closed form, see fit.hpp).
double compute_scale(const Surrogate& s, const sim::Calibration& c, size_t runs) {
  double num = 0.0, den = 0.0;
  for (size_t r = 0; r < runs; ++r) {
    const double T = s.measured_iteration_s(r);
    const double C = s.compute_s(r, c) / T;
    num += C * (1.0 - s.exposed_s(r) / T);
    den += C * C;
  }
  return den > 0.0 && num > 0.0 ? num / den : 1.0;
}

// Start points: the solved one, then compute efficiencies x2 / x0.5, knee x10 / x0.1, and per-op costs (the
// device's and a framework's dispatch) x10 with efficiencies x1 / x2: a per-op cost started at its small start value
// and one started high settle in different basins (a left-out ResNet-50 was predicted to 9.3% from one, 4.0% from the
// other, on an earlier model).
std::vector<std::vector<double>> start_points(const std::vector<Parameter>& params, const std::vector<double>& x0) {
  std::vector<std::vector<double>> starts{x0};
  const auto moved = [&](double eff_factor, double knee_factor, double overhead_factor) {
    std::vector<double> x = x0;
    for (size_t j = 0; j < params.size(); ++j) {
      const std::string& n = params[j].name;
      if (ends_with(n, "/conv") || ends_with(n, "/matmul") || ends_with(n, "/memory")) x[j] += std::log(eff_factor);
      if (ends_with(n, "_knee_flops_per_byte")) x[j] += std::log(knee_factor);
      if (ends_with(n, "/op_overhead_s")) x[j] += std::log(overhead_factor);
    }
    return x;
  };
  starts.push_back(moved(2.0, 1.0, 1.0));
  starts.push_back(moved(0.5, 1.0, 1.0));
  starts.push_back(moved(2.0, 10.0, 1.0));
  starts.push_back(moved(1.0, 0.1, 1.0));
  starts.push_back(moved(1.0, 1.0, 10.0));
  starts.push_back(moved(2.0, 1.0, 10.0));
  return starts;
}

std::vector<double> minimise(const Problem& problem, const std::vector<double>& x0, const std::vector<double>& lo,
                             const std::vector<double>& hi) {
  std::vector<double> best = x0;
  double best_f = problem.objective(x0);
  for (std::vector<double> x : start_points(*problem.params, x0)) {
    for (size_t j = 0; j < x.size(); ++j) x[j] = std::clamp(x[j], lo[j], hi[j]);
    nlopt::opt opt(nlopt::LN_BOBYQA, static_cast<unsigned>(x.size()));
    opt.set_lower_bounds(lo);
    opt.set_upper_bounds(hi);
    opt.set_min_objective(nlopt_objective, const_cast<Problem*>(&problem));
    opt.set_xtol_abs(1e-6);
    opt.set_ftol_rel(1e-12);
    opt.set_maxeval(4000);
    double f = 0.0;
    try {
      opt.optimize(x, f);
    } catch (const std::exception&) {
      f = problem.objective(x);  // roundoff-limited stops still leave a valid point
    }
    if (f < best_f) best_f = f, best = x;
  }
  return best;
}

// Diagonal of A^-1 for a symmetric positive definite n x n A, row-major (Cholesky); n is the parameter count.
std::vector<double> spd_inverse_diagonal(const std::vector<double>& a, size_t n) {
  std::vector<double> l(n * n, 0.0);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j <= i; ++j) {
      double s = a[i * n + j];
      for (size_t k = 0; k < j; ++k) s -= l[i * n + k] * l[j * n + k];
      l[i * n + j] = i == j ? std::sqrt(std::max(s, 1e-300)) : s / l[j * n + j];
    }
  std::vector<double> diag(n, 0.0), y(n, 0.0), x(n, 0.0);
  for (size_t c = 0; c < n; ++c) {
    for (size_t i = 0; i < n; ++i) {
      double s = i == c ? 1.0 : 0.0;
      for (size_t k = 0; k < i; ++k) s -= l[i * n + k] * y[k];
      y[i] = s / l[i * n + i];
    }
    for (size_t i = n; i-- > 0;) {
      double s = y[i];
      for (size_t k = i + 1; k < n; ++k) s -= l[k * n + i] * x[k];
      x[i] = s / l[i * n + i];
    }
    diag[c] = x[c];
  }
  return diag;
}

// Standard errors of the log-parameters from the residuals' Jacobian (central differences). NaN for every
// parameter when there are no more residuals than parameters: the fit then passes through the runs whatever the
// parameters' uncertainty, and the residual variance that scales it cannot be estimated.
std::vector<double> log_std_errors(const Problem& problem, const std::vector<double>& x) {
  constexpr double kH = 1e-3;
  const size_t p = x.size();
  const std::vector<double> r0 = problem.residuals(x);
  const size_t n = r0.size();
  if (n <= p) return std::vector<double>(p, std::numeric_limits<double>::quiet_NaN());
  std::vector<double> jac(p * n, 0.0);  // row j: d residuals / d x_j
  for (size_t j = 0; j < p; ++j) {
    std::vector<double> up = x, down = x;
    up[j] += kH;
    down[j] -= kH;
    const std::vector<double> ru = problem.residuals(up), rd = problem.residuals(down);
    for (size_t i = 0; i < n; ++i) jac[j * n + i] = (ru[i] - rd[i]) / (2 * kH);
  }
  double rss = 0.0;
  for (double r : r0) rss += r * r;
  const double s2 = rss / static_cast<double>(n - p);
  std::vector<double> a(p * p, 0.0);
  for (size_t i = 0; i < p; ++i)
    for (size_t j = 0; j < p; ++j) {
      for (size_t k = 0; k < n; ++k) a[i * p + j] += jac[i * n + k] * jac[j * n + k];
      if (i == j) a[i * p + j] += problem.prior * problem.prior;
    }
  const std::vector<double> cov_diag = spd_inverse_diagonal(a, p);
  std::vector<double> out;
  for (size_t j = 0; j < p; ++j) out.push_back(std::sqrt(std::max(0.0, s2 * cov_diag[j])));
  return out;
}

double mape_of(const std::vector<double>& residuals) {
  double s = 0.0;
  for (double r : residuals) s += std::abs(r);
  return residuals.empty() ? 0.0 : 100.0 * s / static_cast<double>(residuals.size());
}

// The parameters the runs exercise, narrowed by --free and --fix (a parameter's full name or its last
// component(s)), less the start's sourced device fields that neither --fit nor --free names.
std::vector<Parameter> selected_parameters(const Surrogate& surrogate, const FitOptions& options,
                                           const sim::Calibration& start, std::vector<std::string>& not_exercised) {
  std::vector<Parameter> params = choose_parameters(
      surrogate.exercised(), ParameterChoice{options.fixed_links, options.model_factors || options.only_model_factors,
                                             options.only_model_factors, options.fit});
  const auto named_in = [](const Parameter& p, const std::vector<std::string>& names) {
    return parameter_named(p.name, names);
  };
  for (const std::string& f : options.fit)  // a name that matches nothing is a typo or a field the runs leave alone
    if (std::none_of(params.begin(), params.end(), [&](const Parameter& p) { return parameter_named(p.name, {f}); })) {
      if (options.fit_may_name_unexercised) {
        not_exercised.push_back("--fit " + f);
        continue;
      }
      throw InputError("", "--fit",
                       fmt::format("a parameter these runs exercise: a device's sourced field (devices/DEVICE/FIELD) "
                                   "or a stack's fixed cost (stacks/STACK/KEY) (got \"{}\", which names none)", f));
    }
  if (!options.free.empty()) std::erase_if(params, [&](const Parameter& p) { return !named_in(p, options.free); });
  const auto model_factor = [](const Parameter& p) { return p.name.find("/model_factors/") != std::string::npos; };
  if (options.only_model_factors) {
    std::erase_if(params, [&](const Parameter& p) { return !model_factor(p); });
    if (params.empty())
      throw InputError("", "--model-factors-only", "runs whose compute a model factor scales (a network's layers)");
  }
  // A --fix name that names none of the parameters these runs exercise fixes nothing (a field they leave alone, or a
  // misspelt name): said, not silent (FitResult::fix_not_exercised).
  for (const std::string& f : options.fixed)
    if (std::none_of(params.begin(), params.end(), [&](const Parameter& p) { return parameter_named(p.name, {f}); }))
      not_exercised.push_back("--fix " + f);
  std::erase_if(params, [&](const Parameter& p) { return named_in(p, options.fixed); });
  const auto sourced = [&](const Parameter& p) {  // "devices/NAME/FIELD" with FIELD sourced for NAME
    for (const std::string& d : surrogate.exercised().devices) {
      const std::string prefix = "devices/" + d + "/";
      if (p.name.starts_with(prefix) && start.device(d).sourced.count(p.name.substr(prefix.size())) != 0) return true;
    }
    return false;
  };
  std::erase_if(params, [&](const Parameter& p) {
    return sourced(p) && !named_in(p, options.fit) && !named_in(p, options.free);
  });
  if (params.empty()) throw InputError("", "--free", "at least one parameter the runs exercise");
  return params;
}

// Moves the compute parameters (log values x) by one common scale a of the compute time, solved directly: rates
// divided by a, times multiplied by it (knees, the shared-node slowdown and model factors excepted).
void scale_compute(const std::vector<Parameter>& params, double a, std::vector<double>& x) {
  for (size_t j = 0; j < params.size(); ++j) {
    const std::string& n = params[j].name;
    if (params[j].kind != ParameterKind::kCompute || ends_with(n, "_knee_flops_per_byte") ||
        ends_with(n, "/shared_node_slowdown") || n.find("/model_factors/") != std::string::npos)
      continue;
    const bool is_time = ends_with(n, "_s");
    x[j] = std::clamp(x[j] + (is_time ? std::log(a) : -std::log(a)), std::log(params[j].lower),
                      std::log(params[j].upper));
  }
}

// The bounds of round `outer`'s search (log values): each parameter's physical bounds, and for communication
// parameters a trust region around their value at c (a factor 3, then 2, then 1.5), where the linearisation
// holds; x is clamped into them.
void trust_region(const std::vector<Parameter>& params, const sim::Calibration& c, int outer, std::vector<double>& x,
                  std::vector<double>& lo, std::vector<double>& hi) {
  const double trust = outer == 0 ? 3.0 : outer == 1 ? 2.0 : 1.5;
  for (size_t j = 0; j < params.size(); ++j) {
    lo.push_back(std::log(params[j].lower));
    hi.push_back(std::log(params[j].upper));
    if (params[j].kind == ParameterKind::kComm) {
      const double at = std::log(params[j].get(c));
      lo[j] = std::max(lo[j], at - std::log(trust));
      hi[j] = std::min(hi[j], at + std::log(trust));
    }
    x[j] = std::clamp(x[j], lo[j], hi[j]);
  }
}

}  // namespace

FitResult fit_calibration(const std::vector<MeasuredRun>& runs, const sim::Calibration& start,
                          const FitOptions& options) {
  if (runs.empty()) throw InputError("calibrate: no measured runs to fit");
  Surrogate surrogate(runs, start);
  std::vector<std::string> not_exercised;
  const std::vector<Parameter> params = selected_parameters(surrogate, options, start, not_exercised);
  sim::Calibration c = start;
  prepare_start(c, surrogate.exercised(), params);
  const sim::Calibration first = c;
  std::vector<double> measured;
  for (const MeasuredRun& r : runs) measured.push_back(r.images_per_sec);

  Problem problem{&surrogate, &params, &measured, log_values(params, c), options.prior, c};
  std::vector<double> x = problem.x_start;
  // Each round: linearise at c (the surrogate is then exact there), keep the best point seen, then move.
  sim::Calibration best_c = c;
  std::vector<double> best_x = x;
  double best_f = std::numeric_limits<double>::infinity();
  int best_round = 0;
  const int rounds = std::max(1, options.outer_iterations);
  for (int outer = 0; outer <= rounds; ++outer) {
    problem.base = c;
    label_current_progress(fmt::format("calibrate: linearise {}/{} (simulations)", outer + 1, rounds + 1));
    surrogate.linearize(c, params, options.parallel);
    const double here = problem.objective(x);
    if (here < best_f) best_f = here, best_c = c, best_x = x, best_round = outer;
    if (outer == rounds) break;
    if (outer == 0) scale_compute(params, compute_scale(surrogate, c, runs.size()), x);  // the linear part
    std::vector<double> lo, hi;
    trust_region(params, c, outer, x, lo, hi);
    label_current_progress(fmt::format("calibrate: fit {}/{} (simulations)", outer + 1, rounds));
    x = minimise(problem, x, lo, hi);
    c = problem.at(x);
  }
  c = best_c;
  x = best_x;
  if (best_round != rounds) {  // the uncertainties below need the surrogate linearised at c
    problem.base = c;
    surrogate.linearize(c, params, options.parallel);
  }
  FitResult result;
  for (const std::string& n : not_exercised)
    (n.starts_with("--fix ") ? result.fix_not_exercised : result.fit_not_exercised).push_back(n.substr(6));
  result.calibration = c;
  // How far each stack's dispatch reaches on the runs is a property of the runs a calibration was fitted on
  // (scripts/fit-calibrations measures it for the shipped one): a start's does not carry over to a new fit, unless
  // only model factors moved (the dispatch and the runs it was measured on are the start's).
  if (!options.only_model_factors) result.calibration.dispatch_support.clear();
  // The networks each device's values now rest on: these runs', and where only model factors moved, the start's too.
  if (!options.only_model_factors) result.calibration.fitted_networks.clear();
  for (const auto& [device, network] : surrogate.exercised().device_models)
    result.calibration.fitted_networks[device].insert(network);
  // The scale each stack's runs reach, likewise (predict says where a sweep goes beyond it).
  if (!options.only_model_factors) result.calibration.fitted_scale.clear();
  for (const auto& [stack, use] : surrogate.exercised().stacks) {
    sim::Calibration::Scale& scale = result.calibration.fitted_scale[stack];
    scale.nodes = std::max(scale.nodes, use.nodes);
    scale.gpus = std::max(scale.gpus, use.gpus);
  }
  result.runs = static_cast<int>(runs.size());
  result.configurations = static_cast<int>(surrogate.configurations());
  result.surrogate_mape = mape_of(problem.rate_residuals(problem.at(x)));
  const std::vector<double> se = log_std_errors(problem, x);
  for (size_t j = 0; j < params.size(); ++j) {
    const double v = params[j].get(c);
    result.values.push_back(FittedValue{params[j].name, v, v * se[j], params[j].get(first), se[j] <= 1.0});
  }
  label_current_progress("calibrate: validate (simulations)");
  if (options.validate) result.in_sample = validate_runs(runs, c, options.parallel);
  result.simulations = surrogate.simulations() + (options.validate ? result.runs : 0);
  return result;
}

Json fit_to_json(const FitResult& r) {
  Json values = Json::array();
  for (const FittedValue& v : r.values)
    values.push_back({{"name", v.name}, {"value", v.value},
                      {"std_error", std::isnan(v.std_error) ? Json() : Json(v.std_error)}, {"start", v.start},
                      {"identified", v.identified}});
  Json j = {{"parameters", values}, {"runs", r.runs}, {"configurations", r.configurations},
            {"simulations", r.simulations}, {"surrogate_mape", r.surrogate_mape}};
  if (!r.in_sample.rows.empty()) j["in_sample_mape"] = r.in_sample.mape;
  for (const auto& [device, networks] : r.calibration.fitted_networks) j["networks"][device] = networks;
  for (const auto& [stack, scale] : r.calibration.fitted_scale)
    j["scale"][stack] = {{"nodes", scale.nodes}, {"gpus", scale.gpus}};
  return j;
}

std::string fit_table(const FitResult& r) {
  std::string out = fmt::format("fitted {} parameters to {} runs ({} configurations, {} simulations)\n",
                                r.values.size(), r.runs, r.configurations, r.simulations);
  size_t width = 9;
  for (const FittedValue& v : r.values) width = std::max(width, v.name.size());
  out += fmt::format("  {:<{}} {:>12} {:>12} {:>12}\n", "parameter", width, "value", "std. error", "start");
  for (const FittedValue& v : r.values)
    out += fmt::format("  {:<{}} {:>12.4g} {:>12} {:>12.4g}{}\n", v.name, width, v.value,
                       std::isnan(v.std_error) ? "n/a" : fmt::format("{:.3g}", v.std_error), v.start,
                       v.identified ? "" : "  (barely constrained)");
  if (!r.values.empty() && std::isnan(r.values.front().std_error))
    out += fmt::format("{} runs for {} parameters: no residual degrees of freedom, so no uncertainty and no "
                       "parameter identified; fit fewer (--fix, or a calibration to --start from) or measure more\n",
                       r.runs, r.values.size());
  out += fmt::format("surrogate MAPE {:.2f}%", r.surrogate_mape);
  if (!r.in_sample.rows.empty()) out += fmt::format(", in-sample MAPE (message-level simulation) {:.2f}%", r.in_sample.mape);
  return out + "\n";
}

}  // namespace scaletwin::calibrate
