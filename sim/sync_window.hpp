// The measured window of a synchronous simulation, shared by both fidelities' collectors (sim/runner.cpp,
// sim/fast/collect.cpp): it opens when the last worker has ended the last warm-up iteration and closes when the
// last worker ends the last measured one; that last worker is the critical worker.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "core/error.hpp"
#include "plan/iteration_plan.hpp"

namespace scaletwin::sim {

// The endpoints of `plan` that are workers, in endpoint order (never empty for a lowered plan).
inline std::vector<size_t> worker_endpoints(const plan::IterationPlan& plan) {
  std::vector<size_t> workers;
  for (size_t e = 0; e < plan.endpoints.size(); ++e)
    if (plan.endpoints[e].kind == plan::EndpointKind::kWorker) workers.push_back(e);
  ST_ASSERT(!workers.empty(), "plan without workers");
  return workers;
}

struct SyncWindow {
  double first_s = 0.0;  // the last worker's end of iteration `warmup_end`
  double final_s = 0.0;  // the last worker's end of iteration `last`
  size_t critical = 0;   // the endpoint that ends last
};

// end_of(endpoint, iteration) -> end time of that iteration on that endpoint (0 for iteration -1).
template <class EndOf>
SyncWindow sync_window(const std::vector<size_t>& workers, const EndOf& end_of, int warmup_end, int last) {
  SyncWindow w;
  w.critical = workers.front();
  for (size_t e : workers) {
    w.first_s = std::max(w.first_s, end_of(e, warmup_end));
    if (end_of(e, last) > w.final_s) {
      w.final_s = end_of(e, last);
      w.critical = e;
    }
  }
  return w;
}

}  // namespace scaletwin::sim
