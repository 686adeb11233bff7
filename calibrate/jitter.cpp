// Compute jitter from measured runs (see jitter.hpp).
#include "calibrate/jitter.hpp"

#include <array>
#include <map>

#include "topology/cluster.hpp"

namespace scaletwin::calibrate {

std::string run_device(const MeasuredRun& run) { return topology::load_cluster_spec(run.cluster).node.device.name; }

std::vector<MeasuredJitter> apply_measured_jitter(const std::vector<MeasuredRun>& runs, sim::Calibration& c) {
  // Per device, the runs that carry a jitter in tiers: co-runners without servers, co-runners, all.
  std::map<std::string, std::array<std::vector<const MeasuredRun*>, 3>> by_device;
  for (const MeasuredRun& r : runs) {
    if (!r.compute_jitter) continue;
    auto& tiers = by_device[run_device(r)];
    tiers[2].push_back(&r);
    if (r.gpus_per_node >= 2) tiers[1].push_back(&r);
    if (r.gpus_per_node >= 2 && !r.scheme.has_servers()) tiers[0].push_back(&r);
  }
  std::vector<MeasuredJitter> out;
  for (const auto& [device, tiers] : by_device) {
    const auto& used = !tiers[0].empty() ? tiers[0] : !tiers[1].empty() ? tiers[1] : tiers[2];
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
