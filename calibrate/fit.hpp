// calibrate: fit the simulator's parameters to measured runs.
//
// Method (bounded, multi-start, deterministic least squares on relative error):
//   1. choose the parameters the runs exercise (parameters.hpp), start from the given calibration;
//   2. linearise: simulate every configuration at message level, once per communication parameter (surrogate.hpp);
//   3. solve the linear part directly: one compute scale a (all compute times times a) in closed form,
//        a = sum (C_r/T_r)(1 - E_r/T_r) / sum (C_r/T_r)^2,
//      which gives the first start point;
//   4. minimise sum_r ((predicted_r - measured_r) / measured_r)^2 (+ the measured phases' residuals of the runs
//      that have them, surrogate.hpp) + prior^2 |x - x_start|^2 over the log-parameters
//      x with NLopt's LN_BOBYQA from fixed start points (the solved one, then compute efficiencies x2 and x0.5,
//      knee x10 and /10), communication parameters kept within a trust region of factor 3 around the point of
//      linearisation; the weak prior keeps parameters the runs cannot see where they started;
//   5. repeat 2-4 (re-simulate at the new point) `outer_iterations` times;
//   6. uncertainties from the Jacobian: cov = s^2 (J^T J + prior^2 I)^-1 with s^2 = RSS / (n - p), J the
//      residuals' derivatives in log space (central differences on the surrogate); a value's standard error is
//      value * sqrt(cov_jj) (a relative error in log space, first order).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "calibrate/measurements.hpp"
#include "calibrate/validate.hpp"
#include "sim/calibration.hpp"

namespace scaletwin::calibrate {

struct FitOptions {
  int parallel = 2;                       // simulations at a time
  int outer_iterations = 3;
  double prior = 0.01;                    // weight of the pull toward the start, per unit of log
  std::set<sim::LinkClass> fixed_links;   // link classes set from collective benchmarks: not fitted
  bool validate = true;                   // message-level validation of the fitted runs at the end
  bool model_factors = false;             // fit per-model factors too (parameters.hpp)
  // Fit nothing but a factor per measured model (even a single one; implies model_factors): a user's own network
  // measured on a node or two, every other value kept from the start calibration (a shipped one).
  bool only_model_factors = false;
  // When not empty, only parameters named here are fitted: a full name ("ps_cost_per_byte_s") or its last
  // component ("conv" selects devices/*/conv); the others keep their start values.
  std::vector<std::string> free;
  // Parameters named here (as in `free`) keep their start values: fixed from a source rather than fitted.
  std::vector<std::string> fixed;
  // A device's sourced fields (sim::DeviceEfficiency::sourced: the K80's memory rate, its K½) keep their start
  // values too, unless named here or in `free`.
  std::vector<std::string> fit;
  // A name of `fit` that no parameter of these runs matches is an InputError, unless this is set (validate --cv: a
  // fold may leave out every run of a stack whose cost --fit names): then it is left at its start value and listed in
  // FitResult::fit_not_exercised.
  bool fit_may_name_unexercised = false;
};

struct FittedValue {
  std::string name;       // JSON path in the calibration file
  double value = 0.0;
  double std_error = 0.0;  // first-order standard error; NaN with no more residuals than parameters (JSON null)
  double start = 0.0;
  bool identified = true;  // false: the runs barely constrain it (relative standard error above 100%)
};

struct FitResult {
  sim::Calibration calibration;
  std::vector<FittedValue> values;
  double surrogate_mape = 0.0;  // percent, of the last surrogate
  int runs = 0;
  int configurations = 0;
  int simulations = 0;
  report::Validation in_sample;  // as predict simulates (when FitOptions::validate)
  std::vector<std::string> fit_not_exercised;  // names of FitOptions::fit no run exercised (fit_may_name_unexercised)
  std::vector<std::string> fix_not_exercised;  // names of FitOptions::fixed that name no exercised parameter
};

FitResult fit_calibration(const std::vector<MeasuredRun>& runs, const sim::Calibration& start,
                          const FitOptions& options);

// The "fit" section stored in the calibration file (its reader takes "networks" and "scale" from it, the rest is for
// people) and printed by calibrate --json.
Json fit_to_json(const FitResult& r);
std::string fit_table(const FitResult& r);

}  // namespace scaletwin::calibrate
