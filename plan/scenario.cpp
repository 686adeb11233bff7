// Loading and validating scenarios (see scenario.hpp; the format is documented in scenarios/README.md).
//
// Everything a scenario says is checked here, once: unknown keys, types, ranges, names of schemes and algorithms.
// What needs the model or the cluster (layer names, GPU counts against the node size) is checked by lower().
#include "plan/scenario.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <functional>

#include "core/error.hpp"
#include "core/files.hpp"
#include "plan/collectives.hpp"

namespace scaletwin::plan {

namespace {

// The algorithm named at obj[key] (default ring), one of `allowed`.
Algorithm get_algorithm(const JsonObject& obj, const std::string& key, const std::vector<Algorithm>& allowed) {
  const std::string name = obj.get_enum(key, algorithm_names(allowed), std::string("ring"));
  return algorithm_from_name(name, allowed, obj.file(), obj.path_of(key));
}

constexpr int kMaxNodes = 1 << 20;
constexpr int kMaxGpus = 1 << 22;

PsScheme parse_ps(const JsonObject& obj) {
  PsScheme ps;
  const std::string mode = obj.get_enum("mode", {"sync", "async", "mixed_async"}, std::string("sync"));
  ps.mode = mode == "sync" ? PsMode::kSync : mode == "async" ? PsMode::kAsync : PsMode::kMixedAsync;
  const Json* servers = obj.get_any("servers");
  ps.servers_stated = servers != nullptr;
  if (servers != nullptr && servers->is_string()) {
    const std::string per = servers->get<std::string>();
    if (per != "per_node" && per != "per_gpu")
      obj.fail("servers", "a number of servers from 1 to 65536, \"per_node\" (one server per worker node) or "
                          "\"per_gpu\" (one per worker GPU)");
    ps.servers_per = per == "per_node" ? PsScheme::Per::kNode : PsScheme::Per::kGpu;
  } else {
    ps.servers = static_cast<int>(obj.get_int("servers", 1, 1, 1 << 16));
  }
  const std::string placement =
      obj.get_enum("placement", {"host_cpu", "device", "colocated", "dedicated"}, std::string("colocated"));
  ps.placement = placement == "host_cpu"   ? PsPlacement::kHostCpu
                 : placement == "device"   ? PsPlacement::kDevice
                 : placement == "colocated" ? PsPlacement::kColocated
                                            : PsPlacement::kDedicated;
  ps.local_aggregation_stated = obj.has("local_aggregation");
  ps.local_aggregation = obj.get_bool("local_aggregation", false);
  ps.tensors_stated = obj.has("tensors");
  ps.tensors = tensor_placement_named(obj.get_enum("tensors", tensor_placement_names(), std::string("sliced")));
  return ps;
}

AllReduceScheme parse_allreduce(const JsonObject& obj) {
  AllReduceScheme ar;
  std::vector<Algorithm> allowed = flat_allreduce_algorithms();
  allowed.push_back(Algorithm::kHierarchical);
  ar.algorithm = get_algorithm(obj, "algorithm", allowed);
  // intra runs the reduce-scatter and the all-gather inside a node; a tree only reduces to a root and broadcasts.
  if (obj.has("intra") && obj.raw()["intra"] == algorithm_name(Algorithm::kDoubleBinaryTree))
    obj.fail("intra", fmt::format("a reduce-scatter / all-gather algorithm for the steps inside a node ({}); "
                                  "double_binary_tree is an all-reduce only: name it in \"inter\"",
                                  fmt::join(algorithm_names(collective_algorithms(Collective::kReduceScatter)), ", ")));
  ar.intra = get_algorithm(obj, "intra", collective_algorithms(Collective::kReduceScatter));
  ar.inter = get_algorithm(obj, "inter", flat_allreduce_algorithms());
  if (ar.algorithm != Algorithm::kHierarchical && (obj.has("intra") || obj.has("inter")))
    obj.fail(obj.has("intra") ? "intra" : "inter", "no intra/inter algorithm unless \"algorithm\" is \"hierarchical\"");
  const double bucket_bytes = obj.get_quantity("bucket_bytes", Quantity::kBytes, 25e6);
  if (!(bucket_bytes >= 4 && bucket_bytes <= 1e15))  // checked before the cast: 1e300 does not fit an int64
    obj.fail("bucket_bytes", fmt::format("between 4 bytes (one float) and 1 PB (got {})", bucket_bytes));
  ar.bucket_bytes = static_cast<int64_t>(bucket_bytes);
  ar.overlap = obj.get_bool("overlap", true);
  return ar;
}

void parse_model_parallel(const JsonObject& obj, Scheme& scheme) {
  const Json* mp = obj.get_any("model_parallel");
  if (mp == nullptr || (mp->is_string() && mp->get<std::string>() == "fc")) {
    scheme.model_parallel_fc = true;
    return;
  }
  if (!mp->is_array() || mp->empty())
    obj.fail("model_parallel", "the word \"fc\" or a non-empty list of layer names");
  scheme.model_parallel_fc = false;
  for (size_t i = 0; i < mp->size(); ++i) {
    if (!(*mp)[i].is_string())
      throw InputError(obj.file(), fmt::format("{}/{}", obj.path_of("model_parallel"), i), "a layer name (a string)");
    scheme.model_parallel_layers.push_back((*mp)[i].get<std::string>());
  }
}

std::vector<int64_t> parse_input(const JsonObject& obj) {
  const Json& arr = obj.get_array("input");
  if (arr.size() != 3) obj.fail("input", "[C, H, W]: three positive integers");
  std::vector<int64_t> out;
  for (const auto& v : arr) {
    if (!v.is_number_integer() || v.get<int64_t>() <= 0 || v.get<int64_t>() > 100000)
      obj.fail("input", "[C, H, W]: three positive integers (at most 100000)");
    out.push_back(v.get<int64_t>());
  }
  return out;
}

// "faults": [{"kind": "degraded_link", "link": {"kind": "network", "node": 3}, "bandwidth_factor": 0.1},
//            {"kind": "failed_link", "link": {"kind": "nvswitch", "endpoint": "node0/gpu1"}},
//            {"kind": "straggler", "gpu": 3, "slowdown": 1.5}]
// Strict: unknown keys, a missing field, a factor outside (0, 1], a slowdown below 1, a negative GPU or node are
// errors naming the JSON path; "link" needs "kind", "node" or "endpoint" (an empty selector would select every
// link). Whether a selector matches links of the cluster is checked by the simulator (sim/faults.cpp).
std::vector<Fault> parse_faults(const JsonObject& obj) {
  std::vector<Fault> out;
  const Json& faults = obj.get_array("faults");
  for (size_t i = 0; i < faults.size(); ++i) {
    const std::string path = fmt::format("/faults/{}", i);
    const JsonObject f(faults[i], obj.file(), path);
    f.ignore("comment");
    Fault fault;
    fault.json_path = path;
    const std::string kind = f.get_enum("kind", {"degraded_link", "failed_link", "straggler"});
    if (kind == "straggler") {
      fault.kind = Fault::Kind::kStraggler;
      fault.gpu = static_cast<int>(f.get_int("gpu", std::nullopt, 0, kMaxGpus - 1));
      fault.slowdown = f.get_number("slowdown", std::nullopt, 1.0, 1e6);
    } else {
      fault.kind = kind == "failed_link" ? Fault::Kind::kFailedLink : Fault::Kind::kDegradedLink;
      const JsonObject link = f.get_object("link");
      link.ignore("comment");
      fault.link.kind = link.get_string("kind", "");
      fault.link.node = static_cast<int>(link.get_int("node", -1, 0, kMaxNodes - 1));
      fault.link.endpoint = link.get_string("endpoint", "");
      if (fault.link.kind.empty() && fault.link.node < 0 && fault.link.endpoint.empty())
        f.fail("link", "a selector with \"kind\", \"node\" and/or \"endpoint\" (non-empty)");
      link.finish();
      if (fault.kind == Fault::Kind::kDegradedLink) {
        fault.bandwidth_factor = f.get_number("bandwidth_factor", std::nullopt, 0.0, 1.0);
        if (!(fault.bandwidth_factor > 0.0)) f.fail("bandwidth_factor", "a factor in (0, 1]");
      }
    }
    f.finish();
    out.push_back(std::move(fault));
  }
  return out;
}

Convergence parse_convergence_object(const JsonObject& obj, const std::string& source) {
  Convergence c;
  obj.ignore("comment");
  obj.ignore("format");
  for (const char* key : {"dataset", "lr_scaling", "lr_reference_batch", "standard_errors", "runs", "provenance",
                          "noise_scale", "in_sample_mape", "fit", "checks"})
    obj.ignore(key);
  c.model = obj.get_string("model", "");
  c.eval_every_epochs = obj.get_number("eval_every_epochs", 0.0, 0.0, 1000.0);
  if (obj.has("recipe_warmup_epochs")) {
    const Json& recipe = obj.get_array("recipe_warmup_epochs");
    for (size_t i = 0; i < recipe.size(); ++i) {
      const Json& e = recipe[i];
      if (!e.is_array() || e.size() != 2 || !e[0].is_number() || !e[1].is_number() || e[0].get<double>() <= 0.0 ||
          e[1].get<double>() < 0.0)
        throw InputError(obj.file(), obj.path_of(fmt::format("recipe_warmup_epochs/{}", i)),
                         "[global batch, warm-up epochs], a positive batch and a warm-up >= 0");
      c.warmup_by_batch.emplace_back(e[0].get<double>(), e[1].get<double>());
    }
  }
  c.images_min = obj.get_number("images_min", std::nullopt, 1.0, 1e15);
  c.critical_batch = obj.get_number("critical_batch", std::nullopt, 1.0, 1e12);
  c.optimizer = obj.get_enum("optimizer", {"", "sgd", "lars"}, std::string(""));
  if (obj.has("critical_batch_by_optimizer")) {
    const JsonObject by = obj.get_object("critical_batch_by_optimizer");
    for (const char* opt : {"sgd", "lars"})
      if (by.has(opt)) c.critical_batch_by_optimizer[opt] = by.get_number(opt, std::nullopt, 1.0, 1e12);
    by.finish();
  }
  c.warmup_cost = obj.get_number("warmup_cost", 0.0, 0.0, 1.0);
  c.dataset_images = obj.get_number("dataset_images", 0.0, 0.0, 1e13);
  if (obj.has("batch_range")) {
    const Json& range = obj.get_array("batch_range");
    if (range.size() != 2 || !range[0].is_number() || !range[1].is_number() || range[0].get<double>() <= 0.0 ||
        range[1].get<double>() < range[0].get<double>())
      obj.fail("batch_range", "[smallest, largest] update batch fitted, positive and in order");
    c.batch_low = range[0].get<double>();
    c.batch_high = range[1].get<double>();
  }
  c.se_log_critical_batch = obj.get_number("se_log_critical_batch", 0.0, 0.0, 10.0);
  c.staleness_cost = obj.get_number("staleness_cost", 0.0, 0.0, 1e3);
  c.log_sd = obj.get_number("log_sd", 0.0, 0.0, 10.0);
  c.target_accuracy = obj.get_number("target_accuracy", 0.0, 0.0, 1.0);
  c.source = source;
  obj.finish();
  return c;
}

Training parse_training(const JsonObject& obj) {
  Training t;
  obj.ignore("comment");
  t.data = data_from_name(obj.get_enum("data", {"synthetic", "real"}, std::string("synthetic")));
  t.dataset = obj.get_enum("dataset", {"", "fashion-mnist", "cifar10"}, std::string(""));
  t.dataset_path = obj.get_string("dataset_path", "");
  if (!t.dataset_path.empty()) t.dataset_path = resolve_relative(t.dataset_path, obj.file());
  t.epochs = obj.get_int("epochs", 0, 0, 100000);
  t.iterations = obj.get_int("iterations", 20, 1, 100000000);
  t.warmup_iterations = obj.get_int("warmup_iterations", 3, 0, 100000);
  t.learning_rate = obj.get_number("learning_rate", 0.01, 1e-12, 1e6);
  t.lr_reference_batch = obj.get_int("lr_reference_batch", 256, 1, 1 << 30);
  t.lr_warmup_epochs = obj.get_int("lr_warmup_epochs", 0, 0, 10000);
  t.optimizer = obj.get_enum("optimizer", {"sgd", "lars"}, std::string("sgd"));
  t.momentum = obj.get_number("momentum", 0.9, 0.0, 0.9999);
  t.weight_decay = obj.get_number("weight_decay", 5e-4, 0.0, 1.0);
  t.seed = static_cast<uint64_t>(obj.get_int("seed", 1, 0));
  t.precision = precision_from_name(obj.get_enum("precision", precision_names(), std::string("fp32")));
  t.lr_scaling = obj.get_enum("lr_scaling", {"linear", "sqrt", "none", "tuned"}, std::string("linear"));
  t.target_accuracy = obj.get_number("target_accuracy", 0.0, 0.0, 1.0);
  t.max_epochs = obj.get_int("max_epochs", 30, 1, 100000);
  t.eval_every_epochs = obj.get_number("eval_every_epochs", 0.25, 1e-6, 1000.0);
  if (const Json* offset = obj.get_any("eval_offset_epochs")) {
    if (offset->is_string() && offset->get<std::string>() == "varies")
      t.eval_offset_varies = true;
    else if (offset->is_number() && offset->get<double>() >= 0.0 && offset->get<double>() <= 1000.0)
      t.eval_offset_epochs = offset->get<double>();
    else
      obj.fail("eval_offset_epochs", "the epoch of the first evaluation in [0, 1000], or \"varies\" (offsets that differ "
                                     "between runs: a target is read half an evaluation period after it is crossed)");
  }
  t.eval_images = obj.get_int("eval_images", 0, 0, int64_t{1} << 40);
  t.epoch_overhead_s = obj.get_number("epoch_overhead_s", 0.0, 0.0, 1e7);
  // Stated, the training set has images (0 would make every time to target 0); absent, it is unknown.
  t.dataset_images = obj.has("dataset_images") ? obj.get_int("dataset_images", std::nullopt, 1, int64_t{1} << 40) : 0;
  if (const Json* conv = obj.get_any("convergence")) {
    if (conv->is_string()) {
      const std::string path = resolve_relative(conv->get<std::string>(), obj.file());
      t.convergence = load_convergence(path);
    } else if (conv->is_object()) {
      t.convergence = parse_convergence_object(JsonObject(*conv, obj.file(), obj.path_of("convergence")), "scenario");
    } else {
      obj.fail("convergence", "an object {images_min, critical_batch, staleness_cost, log_sd} or the path of a "
                              "calibrate --convergence file");
    }
    if (t.target_accuracy > 0 && t.convergence->target_accuracy > 0 &&
        std::abs(t.convergence->target_accuracy - t.target_accuracy) > 1e-9)
      obj.fail("convergence", fmt::format("a convergence model fitted for the target accuracy {} (it was fitted for {})",
                                          t.target_accuracy, t.convergence->target_accuracy));
  }
  obj.finish();
  return t;
}

}  // namespace

Scenario with_point_batch(const Scenario& s, int gpus) {
  Scenario out = s;
  for (size_t i = 0; i < s.sweep_global_batch.size() && i < s.sweep_gpus.size(); ++i)
    if (s.sweep_gpus[i] == gpus) out.batch_per_gpu = s.sweep_global_batch[i] / gpus;
  for (size_t i = 0; i < s.sweep_lr_warmup_epochs.size() && i < s.sweep_gpus.size(); ++i)
    if (s.sweep_gpus[i] == gpus) out.training.lr_warmup_epochs = s.sweep_lr_warmup_epochs[i];
  return out;
}

Convergence load_convergence(const std::string& path) { return parse_convergence(load_json_file(path), path); }

Convergence parse_convergence(const Json& doc, const std::string& path) {
  const JsonObject obj = JsonObject::root(doc, path);
  if (obj.get_string("format", "scaletwin-convergence/1") != "scaletwin-convergence/1")
    obj.fail("format", "\"scaletwin-convergence/1\"");
  return parse_convergence_object(obj, path);
}

const char* ps_mode_name(PsMode m) {
  switch (m) {
    case PsMode::kSync: return "sync";
    case PsMode::kAsync: return "async";
    case PsMode::kMixedAsync: return "mixed_async";
  }
  return "?";
}

const char* tensor_placement_name(TensorPlacement t) {
  switch (t) {
    case TensorPlacement::kSliced: return "sliced";
    case TensorPlacement::kWhole: return "whole";
    case TensorPlacement::kKvstore: return "kvstore";
    case TensorPlacement::kLargestFirst: return "largest_first";
  }
  return "?";
}

constexpr TensorPlacement kTensorPlacements[] = {TensorPlacement::kSliced, TensorPlacement::kWhole,
                                                 TensorPlacement::kKvstore, TensorPlacement::kLargestFirst};

const std::vector<std::string>& tensor_placement_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const TensorPlacement t : kTensorPlacements) out.emplace_back(tensor_placement_name(t));
    return out;
  }();
  return names;
}

TensorPlacement tensor_placement_named(const std::string& name) {
  for (const TensorPlacement t : kTensorPlacements)
    if (name == tensor_placement_name(t)) return t;
  ST_ASSERT(false, "no tensor placement \"" + name + "\"");
  return TensorPlacement::kSliced;
}

const char* ps_placement_name(PsPlacement p) {
  switch (p) {
    case PsPlacement::kHostCpu: return "host_cpu";
    case PsPlacement::kDevice: return "device";
    case PsPlacement::kColocated: return "colocated";
    case PsPlacement::kDedicated: return "dedicated";
  }
  return "?";
}

Scheme parse_scheme(const JsonObject& obj, std::vector<std::string>* ignored) {
  Scheme scheme;
  obj.ignore("comment");
  const std::string name = obj.get_enum("name", {"ps", "allreduce", "hybrid"});
  if (name == "ps") {
    scheme.kind = SchemeKind::kPs;
    scheme.data_parallel = SchemeKind::kPs;
    scheme.ps = parse_ps(obj);
  } else if (name == "allreduce") {
    scheme.kind = SchemeKind::kAllReduce;
    scheme.allreduce = parse_allreduce(obj);
  } else {
    scheme.kind = SchemeKind::kHybrid;
    parse_model_parallel(obj, scheme);
    if (obj.has("data_parallel")) {
      const JsonObject dp = obj.get_object("data_parallel");
      const Scheme inner = parse_scheme(dp, ignored);
      if (inner.kind == SchemeKind::kHybrid) dp.fail("name", "\"ps\" or \"allreduce\" (a hybrid cannot nest)");
      scheme.data_parallel = inner.kind;
      scheme.ps = inner.ps;
      scheme.allreduce = inner.allreduce;
    } else {
      obj.ignore("data_parallel");
      scheme.data_parallel = SchemeKind::kAllReduce;
    }
  }
  if (ignored == nullptr) {
    obj.finish();
  } else {
    for (const std::string& key : obj.unknown_keys()) ignored->push_back(obj.path_of(key));
  }
  return scheme;
}

Json Scheme::to_json() const {
  auto dp_json = [this](SchemeKind k) {
    if (k == SchemeKind::kPs)
      return Json{{"name", "ps"},
                  {"mode", ps_mode_name(ps.mode)},
                  {"servers", ps.servers_per == PsScheme::Per::kNode  ? Json("per_node")
                              : ps.servers_per == PsScheme::Per::kGpu ? Json("per_gpu")
                                                                      : Json(ps.servers)},
                  {"placement", ps_placement_name(ps.placement)},
                  {"local_aggregation", ps.local_aggregation},
                  {"tensors", tensor_placement_name(ps.tensors)}};
    Json j{{"name", "allreduce"},
           {"algorithm", algorithm_name(allreduce.algorithm)},
           {"bucket_bytes", allreduce.bucket_bytes},
           {"overlap", allreduce.overlap}};
    if (allreduce.algorithm == Algorithm::kHierarchical) {
      j["intra"] = algorithm_name(allreduce.intra);
      j["inter"] = algorithm_name(allreduce.inter);
    }
    return j;
  };
  if (kind != SchemeKind::kHybrid) return dp_json(kind);
  Json j{{"name", "hybrid"}, {"data_parallel", dp_json(data_parallel)}};
  j["model_parallel"] = model_parallel_fc ? Json("fc") : Json(model_parallel_layers);
  return j;
}

std::string Scheme::describe() const {
  auto dp = [this](SchemeKind k) {
    if (k == SchemeKind::kPs) {
      std::string aggregation;
      if (ps.local_aggregation)
        aggregation = ps.local_aggregation_by.empty()
                          ? ", local aggregation"
                          : fmt::format(", local aggregation ({}'s default)", ps.local_aggregation_by);
      std::string servers = ps.servers_per == PsScheme::Per::kNode  ? std::string("a server per node")
                            : ps.servers_per == PsScheme::Per::kGpu ? std::string("a server per GPU")
                                : fmt::format("{} server{}", ps.servers, ps.servers == 1 ? "" : "s");
      if (!ps.servers_by.empty()) servers += fmt::format(" ({}'s default)", ps.servers_by);
      std::string tensors;
      if (ps.tensors != TensorPlacement::kSliced)
        tensors = fmt::format(", {} tensors{}", tensor_placement_name(ps.tensors),
                              ps.tensors_by.empty() ? "" : fmt::format(" ({}'s default)", ps.tensors_by));
      return fmt::format("ps({}, {}, {}{}{})", ps_mode_name(ps.mode), servers, ps_placement_name(ps.placement),
                         aggregation, tensors);
    }
    const std::string algo =
        allreduce.algorithm == Algorithm::kHierarchical
            ? fmt::format("hierarchical {}/{}", algorithm_name(allreduce.intra), algorithm_name(allreduce.inter))
            : std::string(algorithm_name(allreduce.algorithm));
    return fmt::format("allreduce({}, {} buckets{})", algo, format_bytes(static_cast<double>(allreduce.bucket_bytes)),
                       allreduce.overlap ? ", overlapped" : ", no overlap");
  };
  if (kind != SchemeKind::kHybrid) return dp(kind);
  return fmt::format("hybrid({} + model-parallel {})", dp(data_parallel),
                     model_parallel_fc ? std::string("fc") : fmt::format("{}", fmt::join(model_parallel_layers, ",")));
}

Scenario parse_scenario(const Json& json, const std::string& file) {
  const JsonObject obj = JsonObject::root(json, file);
  Scenario s;
  s.file = file;
  obj.ignore("comment");
  s.name = obj.get_string("name", "");
  s.description = obj.get_string("description", "");
  s.model = obj.get_string("model");
  if (s.model.empty()) obj.fail("model", "a built-in model name or a model file path");
  if (s.model.find('/') != std::string::npos || s.model.ends_with(".json") || s.model.ends_with(".onnx"))
    s.model = resolve_relative(s.model, file);
  if (obj.has("input")) s.input = parse_input(obj);
  if (obj.has("classes")) s.classes = obj.get_int("classes", std::nullopt, 1, 1000000);
  s.cluster = obj.get_string("cluster");
  if (s.cluster.empty()) obj.fail("cluster", "a built-in cluster name or a cluster file path");
  if (s.cluster.find('/') != std::string::npos || s.cluster.ends_with(".json"))
    s.cluster = resolve_relative(s.cluster, file);
  s.nodes = static_cast<int>(obj.get_int("nodes", 1, 1, kMaxNodes));
  s.gpus_per_node = static_cast<int>(obj.get_int("gpus_per_node", 0, 0, 4096));
  s.batch_per_gpu = obj.get_int("batch_per_gpu", 32, 1, 1 << 20);
  s.scheme = obj.has("scheme") ? parse_scheme(obj.get_object("scheme")) : Scheme{};
  if (obj.has("framework")) s.framework = obj.get_enum("framework", framework_names(), std::string("tensorflow"));
  s.framework_version = obj.get_string("framework_version", "");
  s.xla = obj.get_bool("xla", false);
  if (obj.has("sweep")) {
    const JsonObject sweep = obj.get_object("sweep");
    sweep.ignore("comment");
    const Json& gpus = sweep.get_array("gpus");
    for (size_t i = 0; i < gpus.size(); ++i) {
      const Json& g = gpus[i];
      if (!g.is_number_integer() || g.get<int64_t>() < 1 || g.get<int64_t>() > kMaxGpus)
        throw InputError(file, fmt::format("/sweep/gpus/{}", i), fmt::format("a GPU count in [1, {}]", kMaxGpus));
      s.sweep_gpus.push_back(g.get<int>());
    }
    if (s.sweep_gpus.empty()) sweep.fail("gpus", "a non-empty list of GPU counts");
    // A list of one integer per GPU count; `invalid` says what a value at a point of `gpus` should be ("": it is).
    const auto per_point = [&](const std::string& key, const std::string& what,
                               const std::function<std::string(int64_t value, int gpus)>& invalid) {
      std::vector<int64_t> out;
      if (!sweep.has(key)) return out;
      const Json& values = sweep.get_array(key);
      if (values.size() != s.sweep_gpus.size())
        sweep.fail(key, fmt::format("one {} per GPU count of /sweep/gpus ({}), got {}", what, s.sweep_gpus.size(),
                                    values.size()));
      for (size_t i = 0; i < values.size(); ++i) {
        const int g = s.sweep_gpus[i];
        const std::string expected = invalid(values[i].is_number_integer() ? values[i].get<int64_t>() : -1, g);
        if (!values[i].is_number_integer() || !expected.empty())
          throw InputError(file, fmt::format("/sweep/{}/{}", key, i),
                           expected.empty() ? invalid(-1, g) : expected);
        out.push_back(values[i].get<int64_t>());
      }
      return out;
    };
    s.sweep_global_batch = per_point("global_batch", "global batch", [](int64_t b, int g) {
      return b >= g && b % g == 0 && b / g <= (1 << 20)
                 ? std::string()
                 : fmt::format("a global batch that {} GPUs share evenly (a multiple of {})", g, g);
    });
    s.sweep_lr_warmup_epochs = per_point("lr_warmup_epochs", "warm-up", [](int64_t w, int) {
      return w >= 0 && w <= 10000 ? std::string() : std::string("a warm-up in epochs, in [0, 10000]");
    });
    sweep.finish();
  }
  if (obj.has("faults")) s.faults = parse_faults(obj);
  s.training = obj.has("training") ? parse_training(obj.get_object("training")) : Training{};
  if (!obj.has("training")) obj.ignore("training");
  if (s.training.warmup_iterations >= s.training.iterations && s.training.epochs == 0)
    throw InputError(file, "/training/warmup_iterations", "fewer warm-up iterations than iterations");
  obj.finish();
  return s;
}

Scenario load_scenario(const std::string& path) { return parse_scenario(load_json_file(path), path); }

Scenario default_scenario() {
  // The seed paper's setting (Campos et al., CCGrid 2017): ResNet-50 on BSC's K80 cluster, synchronous parameter
  // servers colocated with the workers, one shard per node, gradients summed inside each node first.
  const char* text = R"({
    "name": "default: bsc-resnet50-sync-ps",
    "description": "ResNet-50 on BSC Minotauro K80 nodes, synchronous PS, 1-64 GPUs",
    "model": "resnet50",
    "cluster": "bsc-minotauro-k80",
    "nodes": 16,
    "gpus_per_node": 4,
    "batch_per_gpu": 64,
    "scheme": {"name": "ps", "mode": "sync", "servers": "per_node", "placement": "colocated", "local_aggregation": true},
    "sweep": {"gpus": [1, 2, 4, 8, 16, 32, 64]}
  })";
  return parse_scenario(parse_json_text(text, "<default scenario>"), "<default scenario>");
}

const char* data_name(Data d) { return d == Data::kReal ? "real" : "synthetic"; }

const char* precision_name(Precision p) {
  switch (p) {
    case Precision::kFp32: return "fp32";
    case Precision::kTf32: return "tf32";
    case Precision::kBf16: return "bf16";
    case Precision::kFp16: return "fp16";
  }
  return "?";
}

Data data_from_name(const std::string& name) {
  ST_ASSERT(name == "real" || name == "synthetic", "data: \"" + name + "\" was not checked");
  return name == "real" ? Data::kReal : Data::kSynthetic;
}

const std::vector<std::string>& framework_names() {
  static const std::vector<std::string> names = {"mpi", "mxnet", "nccl", "paddle", "pytorch", "tensorflow"};
  return names;
}

const std::vector<std::string>& precision_names() {
  static const std::vector<std::string> names = {"fp32", "tf32", "bf16", "fp16", "amp_bf16", "amp_fp16"};
  return names;
}

int activation_element_bytes(Precision p) { return p == Precision::kBf16 || p == Precision::kFp16 ? 2 : 4; }

Precision precision_from_name(const std::string& name) {
  if (name == "amp_fp16") return Precision::kFp16;
  if (name == "amp_bf16") return Precision::kBf16;
  for (Precision p : {Precision::kFp32, Precision::kTf32, Precision::kBf16, Precision::kFp16})
    if (name == precision_name(p)) return p;
  ST_ASSERT(false, "precision: \"" + name + "\" was not checked");
  return Precision::kFp32;
}

}  // namespace scaletwin::plan
