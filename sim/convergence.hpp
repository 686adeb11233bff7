// Time to accuracy: the convergence model beside the throughput model.
//
// Images a run needs to reach a target accuracy, as a function of the batch B one update averages over (the
// global batch for synchronous schemes; a worker's, or a node's, batch for asynchronous and mixed-asynchronous
// parameter servers), of the mean staleness tau of the updates (updates applied by others between a pull and
// the next push; 0 for synchronous schemes) and of the learning-rate warm-up W (epochs of a D-image training set):
//
//   E(B, tau) = images_min * rho(B) * (1 + B / critical_batch(optimizer)) * (1 + staleness_cost * tau * lr(B) / lr(B_ref))
//               + warmup_cost * W * D
//
// - (1 + B / B_crit): McCandlish et al. 2018 ("An Empirical Model of Large-Batch Training", eq. 2.11): below the
//   critical batch a larger batch needs about as many images (fewer steps), beyond it about as many steps (more
//   images). B_crit is close to the gradient noise scale B_simple that `run` measures (exec/train/noise_scale.hpp).
//   It depends on the optimizer: layer-wise adaptive rates (LARS, You et al. 2017) keep large batches efficient
//   further than SGD with momentum, so a convergence file holds one per optimizer it was fitted for.
// - rho(B) = (B / B_ref) / (lr(B) / lr(B_ref)): the learning-rate rule of the scenario (plan::Training::lr_scaling).
//   In the noise-dominated regime a step's progress grows with the rate, so the steps scale as 1 / lr(B) and the
//   images as B / lr(B): 1 for linear scaling (the regime McCandlish et al. assume, with a tuned rate) and for a
//   recipe tuned per batch, sqrt(B/B_ref) for square-root scaling, B / B_ref for a fixed rate. Stated, not fitted.
// - (1 + staleness_cost * tau * lr(B) / lr(B_ref)): a stale gradient is worth less than a fresh one, by how far the
//   weights moved while it was computed: tau updates of a size proportional to the rate (the delay enters the bounds
//   of asynchronous SGD as the product of rate and staleness, Lian et al. 2015). The cost is fitted; the rate ratio
//   follows from the rule. (A first form without the rate, fitted on the time-to-accuracy study, under-predicted its
//   held-out asynchronous runs at 4x the update batch by 26%: studies/time-to-accuracy/README.md.)
// - warmup_cost * W * D: a warm-up ramps the rate from about 0, and the images trained at a small rate make less
//   progress; the fraction lost is fitted in [0, 1] (MLPerf's reference points at 2- and 5-epoch warm-ups).
//
// A target is seen only at an evaluation: every eval_every_epochs from eval_offset_epochs, so the epochs a run
// trains are the first evaluation at or after E / D (epochs_seen). Time to target = those epochs' images at the
// training images/s + each evaluation's validation images at the inference rate + per-epoch overheads.
//
// The interval: the model's cross-validated spread (fit error and seed-to-seed spread, log_sd) and, beyond the
// largest batch it was fitted on, what the critical batch's standard error adds as the prediction leans on it:
// se(log B_crit) * (g(B) - g(B_high)), g(B) = (B / B_crit) / (1 + B / B_crit), d log E / d log B_crit = -g(B).
// Divergence (a rate beyond the stable one) is outside the model: such a run never reaches the target.
#pragma once

#include <optional>
#include <string>

#include "plan/scenario.hpp"
#include "report/report.hpp"

namespace scaletwin::sim {

// lr(B) / lr(B_ref) under the rule: B / B_ref (linear, and tuned: a recipe tuned per batch scales its rate about
// linearly, which is what weighs staleness), sqrt(B / B_ref) (sqrt), 1 (none).
double lr_ratio(const std::string& lr_scaling, double batch, double reference_batch);
// rho(B) above: (B / B_ref) / lr_ratio; 1 for tuned.
double lr_rule_factor(const std::string& lr_scaling, double batch, double reference_batch);

// The critical batch of `optimizer` ("" the model's own): the model's where it names no optimizer or that one, else
// critical_batch_by_optimizer's; InputError (file, /training/optimizer) naming those it has otherwise.
double critical_batch_for(const plan::Convergence& c, const std::string& optimizer, const std::string& file = "");

// E(B, tau) above, in images, at the model's own critical batch and without a warm-up.
double images_to_target(const plan::Convergence& c, const std::string& lr_scaling, double reference_batch,
                        double update_batch, double staleness);
// The same with every term: the critical batch given, and a warm-up of `warmup_epochs` (counted where the model
// knows its training set's size).
double images_to_target(const plan::Convergence& c, const std::string& lr_scaling, double reference_batch,
                        double update_batch, double staleness, double critical_batch, double warmup_epochs);

// The first evaluation at or after `epochs` (every `every` epochs from `offset`; 0: from `every`), and how many
// evaluations ran up to it, that one included.
struct EvaluationSchedule {
  double epochs = 0.0;
  int evaluations = 0;
};
EvaluationSchedule first_evaluation_at(double epochs, double every, double offset);
// With an offset that varies between runs: on average half a period after `epochs`, and the evaluations run by then
// (a fractional count: its expectation).
struct ExpectedEvaluation {
  double epochs = 0.0;
  double evaluations = 0.0;
};
ExpectedEvaluation expected_evaluation_at(double epochs, double every);

// Images/s of evaluation at a simulated point of `global_batch` images per step: every worker infers its share at its
// forward pass's rate (the critical worker's forward phase; its whole compute where the step has none); 0 without.
double inference_images_per_sec(const report::PointResult& p, double global_batch);

// The log spread the model adds at update batch B beyond the batches it was fitted on (0 within them or without a
// standard error), at critical batch `critical_batch`.
double convergence_extrapolation_log_sd(const plan::Convergence& c, double update_batch, double critical_batch);

// The batch one update of the scenario's scheme averages over, on `gpus` GPUs (nodes of gpus_per_node): the global
// batch (sync), a worker's batch (async parameter server) or a node's (mixed-async).
double update_batch_of(const plan::Scenario& s, int gpus);

// The shipped convergence fit of `model` (calibrations/convergence/*.json, embedded; its source
// "calibrations/convergence/NAME.json (shipped)"), nullopt where none is of that model.
std::optional<plan::Convergence> shipped_convergence(const std::string& model);

// Fills the report's time-to-target figures when the scenario's training block asks for them: with a
// target_accuracy, images from the convergence model (InputError naming /training/convergence when it has none);
// else with epochs and a dataset size, epochs × images. Nothing otherwise. Needs the points' images/s.
void add_time_to_target(const plan::Scenario& s, report::Report& report);

}  // namespace scaletwin::sim
