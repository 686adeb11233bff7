// scaletwin explore: the fastest or cheapest way to a target, searched over the candidates of a space file.
//
//   scaletwin explore SPACE.json [--json FILE] [--write-frontier DIR] [--quiet]
//
// SPACE.json ("scaletwin-space/1", docs/reference/explore.md): a model, a training block as a scenario's (a target
// accuracy with a convergence model, or epochs, and the training set's size), candidate clusters with an optional
// price per GPU-hour and its source, and lists of GPU counts, schemes, batches per GPU and precisions; an objective
// ("time" or "cost") and caps (max_gpus, max_cost, max_time_s). Every combination is a candidate scenario, predicted
// exactly as `predict` predicts it at that GPU count (fast fidelity, the device's shipped calibration), so the
// answer is the one an exhaustive loop of `predict` gives. A candidate whose batch does not fit the device's memory,
// or beyond max_gpus, is pruned before it is simulated and counted. Output: every candidate's time to target, cost
// and 90% interval, the Pareto frontier of time against cost, and the best candidate under the caps; --json the same
// as "scaletwin-explore/1"; --write-frontier DIR each frontier candidate as a scenario file `predict` and `run` read.
// This version runs the candidates one after another in one process.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <optional>
#include <sstream>

#include "cli/command.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/json_reader.hpp"
#include "core/progress.hpp"
#include "core/staged_directory.hpp"
#include "plan/iteration_plan.hpp"
#include "sim/memory_fit.hpp"
#include "sim/predict.hpp"
#include "sim/stacks.hpp"

namespace scaletwin::cli {

namespace {

struct ExploreArgs {
  std::string space;
  std::string json;
  std::string frontier_dir;
  bool quiet = false;
};

struct ClusterChoice {
  std::string cluster;
  double price_per_gpu_hour = 0.0;  // 0: not priced (cost not known)
  std::string price_source;
};

struct Space {
  std::string file, name;
  Json model, framework, training;
  std::vector<ClusterChoice> clusters;
  std::vector<int> gpus;
  std::vector<Json> schemes;
  std::vector<int64_t> batches;
  std::vector<std::string> precisions;
  std::string objective = "time";
  int max_gpus = 0;
  double max_cost = 0.0, max_time_s = 0.0;
};

struct Candidate {
  Json scenario;  // the scenario file it is
  std::string label, cluster, scheme, precision;
  int gpus = 0;
  int64_t batch_per_gpu = 0;
  double price_per_gpu_hour = 0.0;
  std::string pruned;  // why it was not simulated ("" when it was)
  double images_per_sec = 0.0, time_s = 0.0, time_low_s = 0.0, time_high_s = 0.0, epochs = 0.0;
  double cost = 0.0, cost_low = 0.0, cost_high = 0.0;  // dollars (0: not priced)
  bool frontier = false, within_caps = true;
};

template <typename T>
std::vector<T> list_of(const JsonObject& o, const std::string& key, const std::string& what) {
  const Json& a = o.get_array(key);
  if (a.empty()) o.fail(key, "a non-empty list of " + what);
  std::vector<T> out;
  for (size_t i = 0; i < a.size(); ++i) {
    try {
      out.push_back(a[i].get<T>());
    } catch (const Json::exception&) {
      throw InputError(o.file(), o.path_of(fmt::format("{}/{}", key, i)), what);
    }
  }
  return out;
}

Space read_space(const std::string& path) {
  const Json doc = load_json_file(path);
  const JsonObject o = JsonObject::root(doc, path);
  Space s;
  s.file = path;
  if (o.get_string("format", "scaletwin-space/1") != "scaletwin-space/1") o.fail("format", "\"scaletwin-space/1\"");
  o.ignore("comment");
  s.name = o.get_string("name", "space");
  s.model = *o.get_any("model");
  if (!s.model.is_string()) o.fail("model", "a built-in model name or a model file");
  if (const Json* f = o.get_any("framework")) s.framework = *f;
  const JsonObject training = o.get_object("training");
  s.training = training.raw();
  if (!s.training.contains("target_accuracy") && !s.training.contains("epochs"))
    training.fail("target_accuracy", "a target: target_accuracy with a convergence model, or epochs (with "
                                     "dataset_images in both cases)");
  const Json& clusters = o.get_array("clusters");
  if (clusters.empty()) o.fail("clusters", "a non-empty list of {cluster, price_per_gpu_hour?, price_source?}");
  for (size_t i = 0; i < clusters.size(); ++i) {
    const JsonObject c(clusters[i], path, fmt::format("/clusters/{}", i));
    ClusterChoice choice{c.get_string("cluster"), c.get_number("price_per_gpu_hour", 0.0, 0.0, 1e6),
                         c.get_string("price_source", "")};
    c.ignore("comment");
    c.finish();
    s.clusters.push_back(std::move(choice));
  }
  s.gpus = list_of<int>(o, "gpus", "GPU counts (integers >= 1)");
  for (size_t i = 0; i < s.gpus.size(); ++i)
    if (s.gpus[i] < 1) throw InputError(path, fmt::format("/gpus/{}", i), "a GPU count >= 1");
  const Json& schemes = o.get_array("schemes");
  if (schemes.empty()) o.fail("schemes", "a non-empty list of schemes (as a scenario's \"scheme\")");
  for (const Json& sc : schemes) s.schemes.push_back(sc);
  s.batches = list_of<int64_t>(o, "batch_per_gpu", "batches per GPU (integers >= 1)");
  for (size_t i = 0; i < s.batches.size(); ++i)
    if (s.batches[i] < 1) throw InputError(path, fmt::format("/batch_per_gpu/{}", i), "a batch per GPU >= 1");
  s.precisions = o.has("precision") ? list_of<std::string>(o, "precision", "precision names (fp32, tf32, bf16, fp16)")
                                    : std::vector<std::string>{"fp32"};
  s.objective = o.get_enum("objective", {"time", "cost"}, std::string("time"));
  s.max_gpus = static_cast<int>(o.get_int("max_gpus", 0, 0, 1 << 20));
  s.max_cost = o.get_number("max_cost", 0.0, 0.0, 1e12);
  s.max_time_s = o.get_number("max_time_s", 0.0, 0.0, 1e12);
  if (s.objective == "cost" &&
      std::any_of(s.clusters.begin(), s.clusters.end(), [](const ClusterChoice& c) { return c.price_per_gpu_hour <= 0; }))
    o.fail("objective", "\"time\", or a price_per_gpu_hour for every cluster (the cost objective needs them)");
  o.finish();
  return s;
}

// Every combination, as the scenario JSON `predict` would read (GPUs per node: the cluster's own).
std::vector<Candidate> candidates_of(const Space& s) {
  std::vector<Candidate> out;
  for (const ClusterChoice& c : s.clusters)
    for (const int g : s.gpus)
      for (size_t k = 0; k < s.schemes.size(); ++k)
        for (const int64_t b : s.batches)
          for (const std::string& p : s.precisions) {
            Candidate x;
            x.cluster = c.cluster;
            x.gpus = g;
            x.batch_per_gpu = b;
            x.precision = p;
            x.price_per_gpu_hour = c.price_per_gpu_hour;
            x.scheme = s.schemes[k].is_object() ? s.schemes[k].value("name", "?") : "?";
            if (s.schemes[k].is_object() && s.schemes[k].contains("algorithm"))
              x.scheme += "/" + s.schemes[k]["algorithm"].get<std::string>();
            x.label = fmt::format("{}-{}gpu-{}-b{}-{}", c.cluster, g, x.scheme, b, p);
            std::replace(x.label.begin(), x.label.end(), '/', '_');
            Json training = s.training;
            training["precision"] = p;
            x.scenario = {{"name", s.name + "-" + x.label}, {"model", s.model},   {"cluster", c.cluster},
                          {"nodes", 1},                    {"batch_per_gpu", b}, {"scheme", s.schemes[k]},
                          {"sweep", {{"gpus", {g}}}},      {"training", training}};
            if (!s.framework.is_null()) x.scenario["framework"] = s.framework;
            out.push_back(std::move(x));
          }
  return out;
}

// The candidate's scenario, its cluster grown to the nodes its GPUs need (as predict --gpus grows it).
plan::Scenario scenario_of(const Space& s, const Candidate& x) {
  Json j = x.scenario;
  plan::Scenario probe = plan::parse_scenario(j, s.file);
  const int per_node = plan::load_scenario_cluster_spec(probe).node.devices_per_node;
  j["nodes"] = (x.gpus + per_node - 1) / per_node;
  plan::Scenario scenario = plan::parse_scenario(j, s.file);
  sim::apply_stack_defaults(scenario);
  return scenario;
}

void evaluate(const Space& s, Candidate& x) {
  if (s.max_gpus > 0 && x.gpus > s.max_gpus) {
    x.pruned = fmt::format("more GPUs than max_gpus ({})", s.max_gpus);
    return;
  }
  const plan::Scenario scenario = scenario_of(s, x);
  const topology::ClusterSpec spec = plan::load_scenario_cluster_spec(scenario);
  try {  // the memory bound first: a batch that cannot fit is never simulated
    sim::check_memory_fit(scenario, plan::load_scenario_model(scenario), spec.node);
  } catch (const InputError& e) {
    x.pruned = std::string("does not fit: ") + e.what();
    return;
  }
  sim::PredictOptions options;
  options.gpus = {x.gpus};
  options.fidelity = sim::Fidelity::kFast;
  sim::ChosenCalibration chosen = sim::choose_calibration("", spec.node.device.name, spec.node.device.family);
  options.calibration = std::move(chosen.calibration);
  options.calibration_source = chosen.source;
  const report::Report r = sim::predict(scenario, options);
  const report::PointResult& p = r.predictions.front();
  x.images_per_sec = p.images_per_sec;
  x.time_s = p.time_to_target_s;
  x.epochs = p.epochs_to_target;
  const double log_sd = std::hypot(r.time_log_sd, p.convergence_extrapolation_log_sd);
  const auto [lo, hi] = report::interval_ratios(log_sd, p);
  x.time_low_s = x.time_s / hi;
  x.time_high_s = x.time_s / lo;
  if (x.price_per_gpu_hour > 0.0) {
    const double rate = x.price_per_gpu_hour * x.gpus / 3600.0;
    x.cost = x.time_s * rate, x.cost_low = x.time_low_s * rate, x.cost_high = x.time_high_s * rate;
  }
  x.within_caps = (s.max_cost <= 0.0 || x.cost <= s.max_cost) && (s.max_time_s <= 0.0 || x.time_s <= s.max_time_s);
}

// The Pareto frontier of time against cost over the simulated candidates: no other is at least as fast and as cheap
// and better in one. Without prices, the fastest alone.
void mark_frontier(std::vector<Candidate>& all) {
  for (Candidate& a : all) {
    if (!a.pruned.empty() || a.time_s <= 0.0) continue;
    a.frontier = std::none_of(all.begin(), all.end(), [&](const Candidate& b) {
      if (&a == &b || !b.pruned.empty() || b.time_s <= 0.0) return false;
      return b.time_s <= a.time_s && b.cost <= a.cost && (b.time_s < a.time_s || b.cost < a.cost);
    });
  }
}

const Candidate* best_of(const Space& s, const std::vector<Candidate>& all) {
  const Candidate* best = nullptr;
  for (const Candidate& x : all) {
    if (!x.pruned.empty() || x.time_s <= 0.0 || !x.within_caps) continue;
    const double key = s.objective == "cost" ? x.cost : x.time_s;
    if (!best || key < (s.objective == "cost" ? best->cost : best->time_s)) best = &x;
  }
  return best;
}

Json candidate_json(const Candidate& x) {
  Json j = {{"label", x.label}, {"cluster", x.cluster}, {"gpus", x.gpus}, {"scheme", x.scheme},
            {"batch_per_gpu", x.batch_per_gpu}, {"precision", x.precision}};
  if (!x.pruned.empty()) {
    j["pruned"] = x.pruned;
    return j;
  }
  j["images_per_sec"] = x.images_per_sec;
  j["time_to_target_s"] = x.time_s;
  j["time_to_target_s_interval"] = Json::array({x.time_low_s, x.time_high_s});
  if (x.epochs > 0.0) j["epochs_to_target"] = x.epochs;
  if (x.price_per_gpu_hour > 0.0) {
    j["cost"] = x.cost;
    j["cost_interval"] = Json::array({x.cost_low, x.cost_high});
  }
  j["frontier"] = x.frontier;
  j["within_caps"] = x.within_caps;
  j["scenario"] = x.scenario;
  return j;
}

std::string table(const Space& s, const std::vector<Candidate>& all, const Candidate* best) {
  std::ostringstream out;
  const size_t pruned = std::count_if(all.begin(), all.end(), [](const Candidate& x) { return !x.pruned.empty(); });
  out << fmt::format("space {}: {} candidates, {} simulated, {} pruned before simulation; objective: {}\n", s.name,
                     all.size(), all.size() - pruned, pruned, s.objective);
  out << fmt::format("{:<52} {:>12} {:>10} {:>21} {:>10} {:>21}\n", "candidate (frontier *)", "images/s", "time",
                     "90% interval", "cost $", "90% interval");
  std::vector<const Candidate*> order;
  for (const Candidate& x : all)
    if (x.pruned.empty()) order.push_back(&x);
  std::sort(order.begin(), order.end(), [](const Candidate* a, const Candidate* b) { return a->time_s < b->time_s; });
  for (const Candidate* x : order)
    out << fmt::format("{:<52} {:>12.1f} {:>10} {:>21} {:>10} {:>21}\n",
                       (x->frontier ? "* " : "  ") + x->label, x->images_per_sec, format_duration(x->time_s),
                       format_duration(x->time_low_s) + "-" + format_duration(x->time_high_s),
                       x->price_per_gpu_hour > 0.0 ? fmt::format("{:.2f}", x->cost) : std::string("-"),
                       x->price_per_gpu_hour > 0.0 ? fmt::format("{:.2f}-{:.2f}", x->cost_low, x->cost_high)
                                                   : std::string("-"));
  for (const Candidate& x : all)
    if (!x.pruned.empty()) out << fmt::format("  pruned {}: {}\n", x.label, x.pruned);
  if (best)
    out << fmt::format("best for {}{}: {} ({} to target{})\n", s.objective,
                       s.max_cost > 0 || s.max_time_s > 0 ? " within the caps" : "", best->label,
                       format_duration(best->time_s),
                       best->price_per_gpu_hour > 0.0 ? fmt::format(", ${:.2f}", best->cost) : std::string());
  else
    out << "best: none (no candidate was simulated within the caps)\n";
  for (const ClusterChoice& c : s.clusters)
    if (c.price_per_gpu_hour > 0.0)
      out << fmt::format("price of {}: ${}/GPU-hour{}\n", c.cluster, c.price_per_gpu_hour,
                         c.price_source.empty() ? std::string(" (no source given)") : " (" + c.price_source + ")");
  return out.str();
}

int run_explore(const ExploreArgs& a) {
  const Space s = read_space(a.space);
  std::vector<Candidate> all = candidates_of(s);
  std::optional<StagedDirectory> out;
  if (!a.frontier_dir.empty()) out.emplace(a.frontier_dir, "--write-frontier");
  Progress progress("explore", all.size(), progress_style_for_stderr(a.quiet));
  for (Candidate& x : all) {
    evaluate(s, x);
    progress.tick();
  }
  progress.finish();
  mark_frontier(all);
  const Candidate* best = best_of(s, all);
  if (out) {
    for (const Candidate& x : all)
      if (x.frontier) out->write(x.label + ".json", x.scenario.dump(2) + "\n");
    out->publish();
  }
  Json j = {{"format", "scaletwin-explore/1"}, {"space", s.name}, {"objective", s.objective},
            {"candidates", Json::array()}};
  for (const Candidate& x : all) j["candidates"].push_back(candidate_json(x));
  j["best"] = best ? Json(best->label) : Json(nullptr);
  if (!a.json.empty()) write_json_output(a.json, j);
  if (a.json != "-") std::cout << table(s, all, best);
  return kExitOk;
}

}  // namespace

void add_explore_command(CLI::App& root, Action& action) {
  auto args = std::make_shared<ExploreArgs>();
  auto* sub = root.add_subcommand(
      "explore", "search the candidates of a space file for the fastest or cheapest way to a training target");
  sub->add_option("space", args->space, "space file (scaletwin-space/1: docs/reference/explore.md)")->required();
  sub->add_option("--json", args->json, "write every candidate, the frontier and the best as JSON ('-' = stdout)");
  sub->add_option("--write-frontier", args->frontier_dir, "write each frontier candidate as a scenario file into DIR");
  sub->add_flag("-q,--quiet", args->quiet, "no progress on standard error");
  sub->callback([&action, args] { action = [args] { return run_explore(*args); }; });
}

}  // namespace scaletwin::cli
