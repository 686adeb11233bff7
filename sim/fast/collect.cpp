// The fast mode's sources of rounds (materialized schedules or recipes) and its report::PointResult, computed from the
// twin classes' iteration records exactly as the message-level runner computes it from every endpoint's.
#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"
#include "core/files.hpp"
#include "plan/collectives.hpp"
#include "sim/fast/plan.hpp"
#include "sim/sync_window.hpp"

namespace scaletwin::sim::fast {

CollectiveRounds rounds_for_schedule(const plan::IterationPlan& plan, int s) {
  const plan::Schedule& schedule = plan.schedules.at(static_cast<size_t>(s));
  if (static_cast<int>(schedule.programs.size()) == schedule.ranks) return plan::rounds_of(schedule);
  ST_ASSERT(static_cast<size_t>(s) < plan.recipes.size(),
            "fast mode: schedule " + schedule.name + " is neither materialized nor described by a recipe");
  return plan::recipe_rounds(plan.recipes[static_cast<size_t>(s)]);
}

std::optional<plan::Schedule> dataflow_schedule(const plan::IterationPlan& plan, int s) {
  const plan::Schedule& schedule = plan.schedules.at(static_cast<size_t>(s));
  if (schedule.ranks > kDataflowMaxRanks) return std::nullopt;
  const bool materialized = static_cast<int>(schedule.programs.size()) == schedule.ranks;
  const plan::ScheduleRecipe* recipe = static_cast<size_t>(s) < plan.recipes.size() ? &plan.recipes[static_cast<size_t>(s)] : nullptr;
  ST_ASSERT(materialized || recipe != nullptr,
            "fast mode: schedule " + schedule.name + " is neither materialized nor described by a recipe");
  // The generator's symbolic rounds, when it has them: they may state that lockstep rounds are exact, and they spare
  // extracting the rounds of a schedule generated here.
  std::optional<CollectiveRounds> symbolic;
  if (recipe != nullptr && plan::has_symbolic_rounds(recipe->collective, recipe->algorithm)) {
    symbolic = plan::recipe_rounds(*recipe);
    if (symbolic->lockstep_exact) return std::nullopt;
  }
  plan::Schedule made = materialized ? schedule : plan::make_schedule(*recipe);
  const CollectiveRounds rounds = !materialized && symbolic ? std::move(*symbolic) : plan::rounds_of(made);
  // Every step-level event re-solves the rates of the flows in flight: schedules whose rounds hold more than
  // kDataflowMaxFlowsPerRank flows per rank (all-to-all rounds: p(p-1) at once) stay in lockstep rounds, where that
  // cost is paid once per round and memoized.
  for (const std::vector<RankFlow>& pattern : rounds.patterns)
    if (pattern.size() > static_cast<size_t>(kDataflowMaxFlowsPerRank * schedule.ranks)) return std::nullopt;
  if (made.total_steps() > kDataflowMaxSteps) return std::nullopt;
  return made;
}

report::PointResult FastPlan::collect(const std::vector<std::vector<IterationRecord>>& records, double now_s) const {
  report::PointResult r;
  r.gpus = plan_.workers;
  r.nodes = cluster_.nodes();
  r.plan_hash = hex64(plan_.hash());
  r.sync = "sync";
  r.fidelity = "fast";
  r.simulated_s = now_s;
  const int w0 = options_.warmup - 1, last = options_.warmup + options_.iterations - 1;
  const double n = options_.iterations;
  auto end_of = [&](size_t e, int it) {
    return it < 0 ? 0.0 : records[static_cast<size_t>(class_of_[e])][static_cast<size_t>(it)].end_s;
  };
  const SyncWindow window = sync_window(worker_endpoints(plan_), end_of, w0, last);
  const size_t critical = window.critical;
  r.iteration_s = (window.final_s - window.first_s) / n;
  r.images_per_sec = static_cast<double>(plan_.global_batch) / r.iteration_s;
  r.critical_worker = plan_.endpoints[critical].worker_index;
  std::map<int, double> coll_s;
  const auto& recs = records[static_cast<size_t>(class_of_[critical])];
  for (int it = options_.warmup; it <= last; ++it) {
    const IterationRecord& rec = recs[static_cast<size_t>(it)];
    for (size_t ph = 0; ph < rec.phase_s.size(); ++ph) {
      r.compute_s += rec.phase_s[ph] / n;
      if (rec.phase_s[ph] > 0.0) r.phase_s[plan::phase_name(static_cast<plan::Phase>(ph))] += rec.phase_s[ph] / n;
    }
    for (const auto& [c, sec] : rec.collective_s) coll_s[c] += sec / n;
  }
  for (const auto& [c, sec] : coll_s) {
    const plan::CollectiveInstance& ci = plan_.collectives[static_cast<size_t>(c)];
    r.collectives.push_back({ci.label, plan::collective_purpose_name(ci.purpose),
                             static_cast<double>(plan_.schedules[static_cast<size_t>(ci.schedule)].bytes()), sec});
  }
  r.exposed_comm_s = std::max(0.0, r.iteration_s - r.compute_s);
  for (const plan::Endpoint& ep : plan_.endpoints) r.tracks.push_back(ep.name);
  return r;
}

}  // namespace scaletwin::sim::fast
