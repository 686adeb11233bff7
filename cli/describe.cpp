// scaletwin describe: the resolved description of a scenario, a model or a cluster, as a table or as JSON.
//
//   scaletwin describe SCENARIO                       scenario, model totals, cluster, plan per sweep point
//   scaletwin describe --model NAME_OR_FILE           layers, parameters, FLOPs
//   scaletwin describe --cluster NAME_OR_FILE [--nodes N]   devices, links, bandwidths, routes
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <set>

#include "cli/command.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "models/describe.hpp"
#include "models/model_json.hpp"
#include "plan/collectives.hpp"
#include "plan/iteration_plan.hpp"
#include "sim/stacks.hpp"

namespace scaletwin::cli {

namespace {

struct DescribeOptions {
  std::string scenario;
  std::string model;
  std::string cluster;
  int nodes = 0;
  std::string json;
};

// The largest share of the parameters one server holds (its slices of every bucket over all the servers' slices),
// from the recipes of the pushes (a plan lowered in shells has no steps): 1/servers where every tensor is sliced,
// more where tensors sit whole on servers (plan::TensorPlacement). Null without servers.
Json largest_server_share(const plan::IterationPlan& p) {
  std::map<int, double> held;  // server endpoint -> elements
  std::set<std::string> buckets;  // an asynchronous bucket has a push per worker over the same slices
  for (const plan::CollectiveInstance& c : p.collectives) {
    const plan::ScheduleRecipe& r = p.recipes.at(static_cast<size_t>(c.schedule));
    if (c.purpose != plan::CollectivePurpose::kPsPushPull || r.algorithm != plan::Algorithm::kPush) continue;
    if (!buckets.insert(c.label).second) continue;
    const std::vector<int64_t> bounds = plan::ps_shard_bounds(r.servers, r.elements, r.shard_sizes);
    for (int j = 0; j < r.servers; ++j)
      held[c.participants.at(static_cast<size_t>(r.ranks + j))] +=
          static_cast<double>(bounds[static_cast<size_t>(j) + 1] - bounds[static_cast<size_t>(j)]);
  }
  double total = 0.0, most = 0.0;
  for (const auto& [server, n] : held) total += n, most = std::max(most, n);
  return total > 0.0 ? Json(most / total) : Json(nullptr);
}

Json describe_scenario_json(const plan::Scenario& s) {
  const models::Model model = plan::load_scenario_model(s);
  const std::vector<int> sweep = s.sweep_gpus.empty() ? std::vector<int>{} : s.sweep_gpus;
  Json points = Json::array();
  for (int gpus : sweep) {
    const plan::Point point = plan::prepare(s, gpus);
    const plan::IterationPlan& p = point.plan;
    const size_t items = p.total_items();
    const auto servers = std::count_if(p.endpoints.begin(), p.endpoints.end(), [](const plan::Endpoint& e) {
      return e.kind == plan::EndpointKind::kServer;
    });
    points.push_back({{"gpus", gpus},
                      {"nodes", p.nodes},
                      {"servers", servers},
                      {"largest_server_share", largest_server_share(p)},
                      {"endpoints", p.endpoints.size()},
                      {"items", items},
                      {"collectives", p.collectives.size()},
                      {"schedules", p.schedules.size()},
                      {"global_batch", p.global_batch},
                      {"plan_hash", hex64(p.hash())}});
  }
  return {{"scenario", s.name},
          {"file", s.file},
          {"model", s.model},
          {"params", model.params()},
          {"fwd_flops_per_sample", model.fwd_flops_per_sample()},
          {"cluster", s.cluster},
          {"nodes", s.nodes},
          {"gpus_per_node", s.gpus_per_node},
          {"batch_per_gpu", s.batch_per_gpu},
          {"scheme", s.scheme.to_json()},
          {"stack", sim::run_stack(s, plan::load_scenario_cluster(s, 1))},
          {"sweep", points}};
}

std::string format_scenario(const Json& j) {
  std::string out = fmt::format("scenario  {}\nmodel     {} ({} parameters, {:.3g} GFLOP forward per sample)\n",
                                j["scenario"].get<std::string>(), j["model"].get<std::string>(),
                                models::group_thousands(j["params"].get<int64_t>()),
                                j["fwd_flops_per_sample"].get<double>() / 1e9);
  out += fmt::format("cluster   {} ({} nodes{})\nbatch     {} per GPU\nscheme    {}\nstack     {}\n\n",
                     j["cluster"].get<std::string>(), j["nodes"].get<int>(),
                     j["gpus_per_node"].get<int>() > 0 ? fmt::format(", {} GPUs per node", j["gpus_per_node"].get<int>())
                                                       : std::string(),
                     j["batch_per_gpu"].get<int64_t>(), j["scheme"].dump(), j["stack"].get<std::string>());
  out += fmt::format("{:>6} {:>6} {:>8} {:>10} {:>10} {:>8} {:>12} {:>10} {:>12}  {}\n", "gpus", "nodes", "servers",
                     "max share", "endpoints", "items", "collectives", "schedules", "global batch", "plan hash");
  for (const auto& p : j["sweep"])
    out += fmt::format("{:>6} {:>6} {:>8} {:>10} {:>10} {:>8} {:>12} {:>10} {:>12}  {}\n", p["gpus"].get<int>(),
                       p["nodes"].get<int>(), p["servers"].get<int>(),
                       p["largest_server_share"].is_null()
                           ? std::string("-")
                           : fmt::format("{:.1f}%", 100.0 * p["largest_server_share"].get<double>()),
                       p["endpoints"].get<size_t>(),
                       p["items"].get<size_t>(),
                       p["collectives"].get<size_t>(), p["schedules"].get<size_t>(), p["global_batch"].get<int64_t>(),
                       p["plan_hash"].get<std::string>());
  return out;
}

int run_describe(const DescribeOptions& o) {
  const int chosen = !o.scenario.empty() + !o.model.empty() + !o.cluster.empty();
  if (chosen != 1) throw InputError("describe: give exactly one of SCENARIO, --model NAME_OR_FILE, --cluster NAME_OR_FILE");
  if (o.nodes != 0 && o.cluster.empty()) throw InputError("describe: --nodes goes with --cluster");
  Json json;
  std::string table;
  if (!o.model.empty()) {
    const models::Model model = models::load_model(o.model);
    json = models::describe_model_json(model);
    if (o.json.empty()) table = models::format_model_table(model);
  } else if (!o.cluster.empty()) {
    if (o.nodes < 0) throw InputError("", "--nodes", "a positive number of nodes");
    const topology::Cluster cluster = topology::load_cluster(o.cluster, o.nodes);
    json = topology::describe_cluster_json(cluster);
    if (o.json.empty()) table = topology::format_cluster_table(cluster);
  } else {
    plan::Scenario s = plan::load_scenario(o.scenario);
    sim::apply_stack_defaults(s);
    if (s.sweep_gpus.empty()) {
      const topology::ClusterSpec spec = plan::load_scenario_cluster_spec(s);
      s.sweep_gpus = {s.nodes * (s.gpus_per_node > 0 ? s.gpus_per_node : spec.node.devices_per_node)};
    }
    json = describe_scenario_json(s);
    if (o.json.empty()) table = format_scenario(json);
  }
  if (!o.json.empty()) write_json_output(o.json, json);
  if (o.json != "-") std::cout << table;
  return 0;
}

}  // namespace

void add_describe_command(CLI::App& root, Action& action) {
  auto opts = std::make_shared<DescribeOptions>();
  auto* sub = root.add_subcommand("describe", "Print the resolved description of a scenario, a model or a cluster");
  sub->add_option("scenario", opts->scenario, "Scenario JSON file");
  sub->add_option("--model", opts->model, "Built-in model name or model JSON file");
  sub->add_option("--cluster", opts->cluster, "Built-in cluster name or cluster JSON file");
  sub->add_option("--nodes", opts->nodes, "Number of nodes of the cluster (default: the cluster's)")
      ->check(positive_count("nodes"));
  sub->add_option("--json", opts->json, "Write the result as JSON to FILE (- for standard output)");
  sub->callback([opts, &action] { action = [opts] { return run_describe(*opts); }; });
}

}  // namespace scaletwin::cli
