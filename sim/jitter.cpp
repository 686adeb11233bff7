// Expected wait for the slowest synchronous worker (see jitter.hpp).
#include "sim/jitter.hpp"

#include <cmath>
#include <numeric>
#include <vector>

#include "sim/compute_model.hpp"

namespace scaletwin::sim {

double expected_max_of_normals(int g) {
  if (g <= 1) return 0.0;
  // E[max] = integral of x g phi(x) Phi(x)^(g-1) dx; the integrand is negligible outside [-9, 9] for any g a plan
  // can have, and smooth: the trapezoid rule on 1/1000 steps is exact to ~1e-9.
  const double lo = -9.0, hi = 9.0, h = 1e-3;
  const double inv_sqrt_2pi = 0.3989422804014327;
  double sum = 0.0;
  for (double x = lo; x <= hi; x += h) {
    const double phi = inv_sqrt_2pi * std::exp(-0.5 * x * x);
    const double cdf = 0.5 * std::erfc(-x / std::sqrt(2.0));
    sum += x * g * phi * std::pow(cdf, g - 1);
  }
  return sum * h;
}

int synchronous_group_size(const plan::IterationPlan& plan, int endpoint) {
  // Union-find over endpoints, joined by every collective that is not on demand.
  std::vector<size_t> parent(plan.endpoints.size());
  std::iota(parent.begin(), parent.end(), size_t{0});
  const auto find = [&](size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  for (const plan::CollectiveInstance& c : plan.collectives) {
    if (c.on_demand || c.participants.empty()) continue;
    const size_t first = find(static_cast<size_t>(c.participants.front()));
    for (int e : c.participants) parent[find(static_cast<size_t>(e))] = first;
  }
  const size_t root = find(static_cast<size_t>(endpoint));
  int workers = 0;
  for (size_t e = 0; e < plan.endpoints.size(); ++e)
    if (plan.endpoints[e].kind == plan::EndpointKind::kWorker && find(e) == root) ++workers;
  return workers;
}

std::vector<double> synchronous_segments(const plan::IterationPlan& plan, const topology::Cluster& cluster,
                                         const Calibration& calibration, int endpoint) {
  const auto synchronous = [&](const plan::Item& item) {
    return item.kind == plan::Item::Kind::kComm && !plan.collectives.at(static_cast<size_t>(item.collective)).on_demand;
  };
  const std::vector<plan::Item>& items = plan.program(endpoint).items;
  std::vector<bool> read(items.size(), false);  // a compute item has waited for it already
  bool any = false;
  for (const plan::Item& item : items) any = any || synchronous(item);
  if (!any) return {};
  // Walk the compute items in program order (one compute stream), closing a segment before each item that is the
  // first to need a synchronous collective.
  const ComputeModel model(calibration, false);
  const Processor processor = endpoint_processor(plan.endpoints.at(static_cast<size_t>(endpoint)), cluster);
  std::vector<double> segments;
  double open = 0.0, total = 0.0;
  for (const plan::Item& item : items) {
    if (item.kind != plan::Item::Kind::kCompute) continue;
    bool waits = false;
    for (int d : item.deps) {
      const plan::Item& dep = items.at(static_cast<size_t>(d));
      if (synchronous(dep) && !read[static_cast<size_t>(d)]) waits = read[static_cast<size_t>(d)] = true;
    }
    if (waits) {
      segments.push_back(open);
      open = 0.0;
    }
    if (item.compute.phase == plan::Phase::kData) continue;
    const double t = model.op_time_s(item.compute, processor);
    open += t;
    total += t;
  }
  bool unread = false;  // waited for at the end of the iteration
  for (size_t i = 0; i < items.size(); ++i) unread = unread || (synchronous(items[i]) && !read[i]);
  if (unread || segments.empty()) {
    segments.push_back(open);
  } else {
    segments.front() += open;  // the last point's compute runs on to the next iteration's first point
  }
  if (total <= 0.0) return {};
  std::vector<double> fractions;
  for (double s : segments)
    if (s > 0.0) fractions.push_back(s / total);
  return fractions;
}

void apply_compute_jitter(report::PointResult& point, const plan::IterationPlan& plan, const topology::Cluster& cluster,
                          const Calibration& calibration) {
  int critical = -1;
  for (size_t e = 0; e < plan.endpoints.size(); ++e)
    if (plan.endpoints[e].kind == plan::EndpointKind::kWorker && plan.endpoints[e].worker_index == point.critical_worker)
      critical = static_cast<int>(e);
  if (critical < 0 || point.iteration_s <= 0.0) return;
  const Processor processor = endpoint_processor(plan.endpoints[static_cast<size_t>(critical)], cluster);
  const double cv = calibration.device(processor.name, processor.family).compute_jitter;
  if (cv <= 0.0) return;
  const int group = synchronous_group_size(plan, critical);
  if (group <= 1) return;
  double spread = 0.0;  // sum over synchronisation points of sqrt(f_k)
  for (double f : synchronous_segments(plan, cluster, calibration, critical)) spread += std::sqrt(f);
  const auto data = point.phase_s.find("data");
  const double compute = point.compute_s - (data != point.phase_s.end() ? data->second : 0.0);
  const double wait = cv * compute * expected_max_of_normals(group) * spread;
  if (wait <= 0.0) return;
  // Every worker of the group waits as long; asynchronous groups keep their own pace, so each worker's rate (and
  // their sum, images_per_sec) shrinks by the same factor.
  point.images_per_sec *= point.iteration_s / (point.iteration_s + wait);
  point.iteration_s += wait;
  point.exposed_comm_s += wait;
  point.jitter_wait_s = wait;
}

}  // namespace scaletwin::sim
