// Compute jitter from measured runs (see jitter.hpp).
#include "calibrate/jitter.hpp"

#include <map>

#include "topology/cluster.hpp"

namespace scaletwin::calibrate {

std::string run_device(const MeasuredRun& run) { return topology::load_cluster_spec(run.cluster).node.device.name; }

std::vector<MeasuredJitter> apply_measured_jitter(const std::vector<MeasuredRun>& runs, sim::Calibration& c) {
  // Per device: the runs with co-runners and all runs that carry a jitter.
  std::map<std::string, std::pair<std::vector<const MeasuredRun*>, std::vector<const MeasuredRun*>>> by_device;
  for (const MeasuredRun& r : runs) {
    if (!r.compute_jitter) continue;
    auto& [shared, all] = by_device[run_device(r)];
    all.push_back(&r);
    if (r.gpus_per_node >= 2) shared.push_back(&r);
  }
  std::vector<MeasuredJitter> out;
  for (const auto& [device, lists] : by_device) {
    const auto& used = lists.first.empty() ? lists.second : lists.first;
    MeasuredJitter m;
    m.device = device;
    for (const MeasuredRun* r : used) {
      m.value += *r->compute_jitter / static_cast<double>(used.size());
      m.runs.push_back(r->id);
    }
    // A device without its own entry starts from "default" (Calibration::device), as the fit does.
    sim::DeviceEfficiency d = c.device(device);
    d.compute_jitter = m.value;
    c.devices[device] = d;
    out.push_back(std::move(m));
  }
  return out;
}

Json measured_jitter_to_json(const std::vector<MeasuredJitter>& jitter) {
  Json out = Json::array();
  for (const MeasuredJitter& m : jitter) out.push_back({{"device", m.device}, {"compute_jitter", m.value}, {"runs", m.runs}});
  return out;
}

}  // namespace scaletwin::calibrate
