// explore's space file, candidates, bounds and evaluation (cli/explore_space.hpp).
#include "cli/explore_space.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/files.hpp"
#include "plan/iteration_plan.hpp"
#include "sim/convergence.hpp"
#include "sim/memory_fit.hpp"
#include "sim/predict.hpp"
#include "sim/stacks.hpp"

namespace scaletwin::cli {

namespace {

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

}  // namespace

Space read_space(const std::string& path) {
  const Json doc = load_json_file(path);
  const JsonObject o = JsonObject::root(doc, path);
  Space s;
  s.file = path;
  s.hash = fnv1a64(doc.dump());
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
    if (s.gpus[i] < 1 || s.gpus[i] > (1 << 20))
      throw InputError(path, fmt::format("/gpus/{}", i), "a GPU count from 1 to 1,048,576");
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
  const double combinations = static_cast<double>(s.clusters.size()) * static_cast<double>(s.gpus.size()) *
                              static_cast<double>(s.schemes.size()) * static_cast<double>(s.batches.size()) *
                              static_cast<double>(s.precisions.size());
  if (combinations > kMaxCandidates)
    o.fail("gpus", fmt::format("a space of at most {} candidates (clusters x gpus x schemes x batch_per_gpu x "
                               "precision is {:.0f})",
                               kMaxCandidates, combinations));
  o.finish();
  return s;
}

std::vector<Candidate> candidates_of(const Space& s) {
  std::vector<Candidate> out;
  for (size_t ci = 0; ci < s.clusters.size(); ++ci)
    for (const int g : s.gpus)
      for (size_t k = 0; k < s.schemes.size(); ++k)
        for (const int64_t b : s.batches)
          for (const std::string& p : s.precisions) {
            const ClusterChoice& c = s.clusters[ci];
            Candidate x;
            x.cluster = c.cluster;
            x.cluster_index = ci;
            x.scheme_index = k;
            x.gpus = g;
            x.batch_per_gpu = b;
            x.precision = p;
            x.price_per_gpu_hour = c.price_per_gpu_hour;
            x.scheme = s.schemes[k].is_object() ? s.schemes[k].value("name", "?") : "?";
            if (s.schemes[k].is_object() && s.schemes[k].contains("algorithm") && s.schemes[k]["algorithm"].is_string())
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

const sim::ChosenCalibration& Evaluator::calibration_for(const std::string& device_name, const std::string& family) {
  auto it = calibrations_.find(device_name);
  if (it == calibrations_.end())
    it = calibrations_.emplace(device_name, sim::choose_calibration("", device_name, family)).first;
  return it->second;
}

Evaluator::Setup& Evaluator::setup_of(const Candidate& x) {
  const auto key = std::make_tuple(x.cluster_index, x.scheme_index, x.batch_per_gpu, x.precision);
  auto it = setups_.find(key);
  if (it == setups_.end()) {
    Candidate one = x;
    one.gpus = 1;
    Setup setup;
    setup.scenario = scenario_of(space_, one);
    setup.scenario.training.eval_images = 0;  // the bound's scenario; the memory bound does not read these
    setup.scenario.training.epoch_overhead_s = 0.0;
    it = setups_.emplace(key, std::move(setup)).first;
  }
  return it->second;
}

std::string Evaluator::cannot_fit(const Candidate& x) {
  if (space_.max_gpus > 0 && x.gpus > space_.max_gpus) return fmt::format("more GPUs than max_gpus ({})", space_.max_gpus);
  Setup& setup = setup_of(x);
  if (!setup.unfit) {
    // The bound depends on the model, the batch, the precision and the scheme's replicated layers, not the GPUs.
    const topology::ClusterSpec spec = plan::load_scenario_cluster_spec(setup.scenario);
    setup.unfit = "";
    try {
      sim::check_memory_fit(setup.scenario, plan::load_scenario_model(setup.scenario), spec.node);
    } catch (const InputError& e) {
      setup.unfit = std::string("does not fit: ") + e.what();
    }
  }
  return *setup.unfit;
}

std::optional<double> Evaluator::least_time_s(const Candidate& x) {
  Setup& setup = setup_of(x);
  if (!setup.one_gpu_images_per_sec) {
    // Once per cluster, scheme, batch and precision: the one-GPU rate of its stack (all-reduce schemes only).
    setup.one_gpu_images_per_sec = 0.0;
    if (setup.scenario.scheme.kind == plan::SchemeKind::kAllReduce) {
      Candidate one = x;
      one.gpus = 1;
      const Json r = evaluate(one);
      if (r.contains("images_per_sec")) setup.one_gpu_images_per_sec = r["images_per_sec"].get<double>();
    }
  }
  if (*setup.one_gpu_images_per_sec <= 0.0) return std::nullopt;
  // The time to target at G times the one-GPU rate (add_time_to_target reads the GPUs from the point).
  report::Report r;
  report::PointResult p;
  p.gpus = x.gpus;
  p.sync = "sync";
  p.images_per_sec = *setup.one_gpu_images_per_sec * x.gpus;
  r.predictions.push_back(p);
  sim::add_time_to_target(setup.scenario, r);
  const double t = r.predictions.front().time_to_target_s;
  return t > 0.0 ? std::optional<double>(t) : std::nullopt;
}

Json Evaluator::evaluate(const Candidate& x) {
  try {
    const plan::Scenario scenario = scenario_of(space_, x);
    const topology::ClusterSpec spec = plan::load_scenario_cluster_spec(scenario);
    sim::PredictOptions options;
    options.gpus = {x.gpus};
    options.fidelity = sim::Fidelity::kFast;
    options.speedups = false;
    const sim::ChosenCalibration& chosen = calibration_for(spec.node.device.name, spec.node.device.family);
    options.calibration = chosen.calibration;
    options.calibration_source = chosen.source;
    const report::Report r = sim::predict(scenario, options);
    const report::PointResult& p = r.predictions.front();
    const double log_sd = std::hypot(r.time_log_sd, p.convergence_extrapolation_log_sd);
    const auto [lo, hi] = report::interval_ratios(log_sd, p);
    return {{"label", x.label},
            {"images_per_sec", p.images_per_sec},
            {"time_s", p.time_to_target_s},
            {"time_interval_s", Json::array({p.time_to_target_s / hi, p.time_to_target_s / lo})},
            {"epochs", p.epochs_to_target}};
  } catch (const InputError& e) {
    return {{"label", x.label}, {"cannot_run", e.what()}};
  }
}

void apply_result(const Space& s, const Json& result, Candidate& x) {
  ST_ASSERT(result.value("label", "") == x.label, "a result for another candidate");
  if (result.contains("cannot_run")) {
    x.pruned_as = Candidate::Pruned::kCannotRun;
    x.pruned = "cannot run: " + result["cannot_run"].get<std::string>();
    return;
  }
  x.images_per_sec = result["images_per_sec"].get<double>();
  x.time_s = result["time_s"].get<double>();
  x.time_low_s = result["time_interval_s"][0].get<double>();
  x.time_high_s = result["time_interval_s"][1].get<double>();
  x.epochs = result["epochs"].get<double>();
  if (x.price_per_gpu_hour > 0.0) {
    const double rate = x.price_per_gpu_hour * x.gpus / 3600.0;
    x.cost = x.time_s * rate, x.cost_low = x.time_low_s * rate, x.cost_high = x.time_high_s * rate;
  }
  x.within_caps = (s.max_cost <= 0.0 || x.cost <= s.max_cost) && (s.max_time_s <= 0.0 || x.time_s <= s.max_time_s);
}

}  // namespace scaletwin::cli
