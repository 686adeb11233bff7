// Time to accuracy: the convergence model beside the throughput model.
//
// Images a run needs to reach a target accuracy, as a function of the batch B one update averages over (the
// global batch for synchronous schemes; a worker's, or a node's, batch for asynchronous and mixed-asynchronous
// parameter servers) and of the mean staleness tau of the updates (updates applied by others between a pull and
// the next push; 0 for synchronous schemes):
//
//   E(B, tau) = images_min * rho(B) * (1 + B / critical_batch) * (1 + staleness_cost * tau * lr(B) / lr(B_ref))
//
// - (1 + B / B_crit): McCandlish et al. 2018 ("An Empirical Model of Large-Batch Training", eq. 2.11): below the
//   critical batch a larger batch needs about as many images (fewer steps), beyond it about as many steps (more
//   images). B_crit is close to the gradient noise scale B_simple that `run` measures (exec/train/noise_scale.hpp).
// - rho(B) = (B / B_ref) / (lr(B) / lr(B_ref)): the learning-rate rule of the scenario (plan::Training::lr_scaling).
//   In the noise-dominated regime a step's progress grows with the rate, so the steps scale as 1 / lr(B) and the
//   images as B / lr(B): 1 for linear scaling (the regime McCandlish et al. assume, with a tuned rate), sqrt(B/B_ref)
//   for square-root scaling, B / B_ref for a fixed rate. The rule is stated, not fitted.
// - (1 + staleness_cost * tau * lr(B) / lr(B_ref)): a stale gradient is worth less than a fresh one, by how far the
//   weights moved while it was computed: tau updates of a size proportional to the rate (the delay enters the bounds
//   of asynchronous SGD as the product of rate and staleness, Lian et al. 2015). The cost is fitted; the rate ratio
//   follows from the rule. (A first form without the rate, fitted on the time-to-accuracy study, under-predicted its
//   held-out asynchronous runs at 4x the update batch by 26%: studies/time-to-accuracy/README.md.)
// Divergence (a rate beyond the stable one) is outside the model: such a run never reaches the target.
#pragma once

#include <optional>
#include <string>

#include "plan/scenario.hpp"
#include "report/report.hpp"

namespace scaletwin::sim {

// lr(B) / lr(B_ref) under the rule: B / B_ref (linear), sqrt(B / B_ref) (sqrt), 1 (none).
double lr_ratio(const std::string& lr_scaling, double batch, double reference_batch);
// rho(B) above: (B / B_ref) / lr_ratio.
double lr_rule_factor(const std::string& lr_scaling, double batch, double reference_batch);

// E(B, tau) above, in images.
double images_to_target(const plan::Convergence& c, const std::string& lr_scaling, double reference_batch,
                        double update_batch, double staleness);

// The batch one update of the scenario's scheme averages over, on `gpus` GPUs (nodes of gpus_per_node): the global
// batch (sync), a worker's batch (async parameter server) or a node's (mixed-async).
double update_batch_of(const plan::Scenario& s, int gpus);

// Fills the report's time-to-target figures when the scenario's training block asks for them: with a
// target_accuracy, images from the convergence model (InputError naming /training/convergence when it has none);
// else with epochs and a dataset size, epochs × images. Nothing otherwise. Needs the points' images/s.
void add_time_to_target(const plan::Scenario& s, report::Report& report);

}  // namespace scaletwin::sim
