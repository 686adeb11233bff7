// The model and the cluster a scenario names, loaded with errors that point back at the scenario.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>

#include "core/error.hpp"
#include "models/model_json.hpp"
#include "plan/iteration_plan.hpp"

namespace scaletwin::plan {

models::Model load_scenario_model(const Scenario& scenario) {
  models::ModelOverrides overrides;
  if (scenario.input) overrides.input = models::Shape{(*scenario.input)[0], (*scenario.input)[1], (*scenario.input)[2]};
  overrides.classes = scenario.classes;
  return models::load_model(scenario.model, overrides, scenario.file, scenario.path_of("/model"));
}

int worker_nodes(const Scenario& scenario, int devices_per_node, int gpus) {
  const int per_node = std::max(1, std::min(scenario.gpus_per_node > 0 ? scenario.gpus_per_node : devices_per_node, gpus));
  return (gpus + per_node - 1) / per_node;
}

int cluster_nodes_needed(const Scenario& scenario, int devices_per_node, int gpus) {
  const int nodes = worker_nodes(scenario, devices_per_node, gpus);
  if (scenario.scheme.data_parallel == SchemeKind::kPs && scenario.scheme.ps.placement == PsPlacement::kDedicated)
    return nodes + scenario.scheme.ps.count(nodes, gpus);
  return nodes;
}

int servers_at(const Scenario& scenario, int devices_per_node, int gpus) {
  if (!scenario.scheme.has_servers()) return 0;
  return scenario.scheme.ps.count(worker_nodes(scenario, devices_per_node, gpus), gpus);
}

int servers_at(const Scenario& scenario, int gpus) {
  const bool per_point = scenario.scheme.has_servers() && scenario.scheme.ps.servers_per != PsScheme::Per::kFixed;
  // The cluster's devices per node matter only where the count follows the point's nodes.
  const int devices_per_node = per_point && scenario.gpus_per_node <= 0
                                   ? load_scenario_cluster_spec(scenario).node.devices_per_node
                                   : scenario.gpus_per_node;
  return servers_at(scenario, devices_per_node, gpus);
}

topology::ClusterSpec load_scenario_cluster_spec(const Scenario& scenario) {
  if (scenario.cluster_json)
    return topology::parse_cluster_spec(*scenario.cluster_json,
                                        fmt::format("{} (cluster \"{}\", synthesized)", scenario.file, scenario.cluster));
  if (!topology::is_builtin_cluster(scenario.cluster) && !std::filesystem::exists(scenario.cluster))
    throw InputError(scenario.file, scenario.path_of("/cluster"),
                     fmt::format("a built-in cluster ({}) or an existing cluster file (got \"{}\")",
                                 fmt::join(topology::builtin_cluster_names(), ", "), scenario.cluster));
  return topology::load_cluster_spec(scenario.cluster);
}

topology::Cluster load_scenario_cluster(const Scenario& scenario, int gpus) {
  topology::ClusterSpec spec = load_scenario_cluster_spec(scenario);
  const int nodes = cluster_nodes_needed(scenario, spec.node.devices_per_node, gpus);
  if (nodes > spec.max_nodes)
    throw InputError(scenario.file, scenario.path_of("/nodes"),
                     fmt::format("at most {} nodes on {} ({} needed)", spec.max_nodes, spec.name, nodes));
  return topology::Cluster(std::move(spec), nodes);
}

}  // namespace scaletwin::plan
