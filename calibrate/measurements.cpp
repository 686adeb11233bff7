// Reading measurements files (format in measurements.hpp and ../shared/spec.md).
#include "calibrate/measurements.hpp"

#include "calibrate/systems.hpp"
#include "plan/algorithm.hpp"
#include "plan/iteration_plan.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <regex>

#include "core/error.hpp"
#include "core/files.hpp"
#include "models/model_json.hpp"
#include "models/zoo.hpp"
#include "sim/stacks.hpp"
#include "topology/cluster.hpp"

namespace scaletwin::calibrate {

namespace {

constexpr const char* kFormat = "scaletwin-measurements/1";

bool is_path(const std::string& name) { return name.find('/') != std::string::npos || name.ends_with(".json"); }

std::vector<int64_t> read_input(const JsonObject& o) {
  const Json& arr = o.get_array("input");
  std::vector<int64_t> out;
  for (const Json& v : arr) {
    if (!v.is_number_integer() || v.get<int64_t>() <= 0) o.fail("input", "[C, H, W]: three positive integers");
    out.push_back(v.get<int64_t>());
  }
  if (out.size() != 3) o.fail("input", "[C, H, W]: three positive integers");
  return out;
}

// A run without "framework" whose source names the framework that produced it (the published tables cite
// TensorFlow's tf_cnn_benchmarks or MXNet's docs): that framework; otherwise "" (the scheme's default).
std::string framework_of_source(const std::string& source) {
  const std::string lower = lower_case(source);
  if (lower.find("tensorflow") != std::string::npos || lower.find("tf_cnn_benchmarks") != std::string::npos)
    return "tensorflow";
  if (lower.find("mxnet") != std::string::npos) return "mxnet";
  return "";
}

// A "framework" that names a stack among other words, as tables write it ("TensorFlow 1.2", "Apache MXNet",
// "mxnet-1.2.0", "TF 1.x", "NCCL 2.4"): that stack; "" otherwise. Words are runs of letters, so a version ends one
// ("tensorflow1.2"); "tf" is TensorFlow. Not "mpi": that stack is scaletwin's own executor, not a published
// framework's MPI.
std::string stack_named_in(const std::string& lower) {
  std::string word;
  for (size_t i = 0; i <= lower.size(); ++i) {
    if (i < lower.size() && lower[i] >= 'a' && lower[i] <= 'z') {
      word += lower[i];
      continue;
    }
    if (word == "tensorflow" || word == "tf") return "tensorflow";
    if (word == "mxnet" || word == "nccl") return word;
    word.clear();
  }
  return "";
}

// A run's cluster or model as the simulation names it: a path resolved against the measurements file, a built-in
// name as it is, a table's spelling of a built-in as that built-in (with a note), anything else unchanged (the
// caller refuses it).
std::string resolve_name(MeasuredRun& r, const std::string& field, const std::string& name,
                         bool (*is_builtin)(const std::string&),
                         std::optional<std::string> (*spelled)(const std::string&)) {
  if (is_path(name)) return resolve_relative(name, r.file);
  if (is_builtin(name)) return name;
  const std::optional<std::string> builtin = spelled(name);
  if (!builtin) return name;
  r.notes.push_back(
      {r.json_path + "/" + field, fmt::format("{} \"{}\" read as the built-in {}", field, name, *builtin)});
  return *builtin;
}

// MXNet's kvstore types (its docs' and example/image-classification's --kv-store names) in the words of the spec's
// parameter-server scheme, for what the run's scheme does not state itself: "local" sums the GPUs' gradients in host
// memory (CommCPU: placement host_cpu), "device" on the GPUs (CommDevice: placement device), "dist_sync" and
// "dist_device_sync" go to ps-lite servers over the network (the spec's default placement, colocated), "dist_async"
// too, asynchronously (mode async). The stack's defaults then do the rest (sim::apply_stack_defaults). A run without
// a framework of its own is MXNet's; another kvstore ("nccl": reduce and broadcast, no server) stays a note.
void read_kvstore(MeasuredRun& r, std::vector<std::string>& ignored) {
  const std::string at = r.json_path + "/scheme/kvstore";
  const auto it = std::find(ignored.begin(), ignored.end(), at);
  const Json& scheme = r.raw.at("scheme");
  if (it == ignored.end() || r.scheme.kind != plan::SchemeKind::kPs || !scheme.at("kvstore").is_string()) return;
  const std::string kv = lower_case(scheme.at("kvstore").get<std::string>());
  std::optional<plan::PsPlacement> placement;
  if (kv == "local") placement = plan::PsPlacement::kHostCpu;
  if (kv == "device") placement = plan::PsPlacement::kDevice;
  if (!placement && kv != "dist_sync" && kv != "dist_device_sync" && kv != "dist_async") return;
  ignored.erase(it);
  std::vector<std::string> taken;
  if (placement && !scheme.contains("placement")) {
    r.scheme.ps.placement = *placement;
    taken.push_back(fmt::format("placement \"{}\"", plan::ps_placement_name(*placement)));
  }
  if (kv == "dist_async" && !scheme.contains("mode")) {
    r.scheme.ps.mode = plan::PsMode::kAsync;
    taken.emplace_back("mode \"async\"");
  }
  if (r.framework.empty()) {
    r.framework = "mxnet";
    taken.emplace_back("framework mxnet");
  }
  const std::string what = taken.empty() ? "what the run states already" : fmt::format("{}", fmt::join(taken, ", "));
  r.notes.push_back({at, fmt::format("scheme field \"kvstore\": \"{}\" read as MXNet's {} kvstore: {}", kv, kv, what)});
}

// MXNet's device kvstore written as a scheme of its own ("kvstore_device"): the spec's parameter server on the GPUs.
// A published all-reduce run's "algorithm" as its source gives it: "nccl" or prose ("not stated in logs") where the
// framework left the choice to NCCL, read as the ring (NCCL's algorithm for the bandwidth-bound gradient buckets of
// one node and of small clusters), with a note. The scheme's other fields are read as written.
Json read_allreduce_algorithm(const JsonObject& o, MeasuredRun& r) {
  Json scheme = o.get_object("scheme").raw();
  if (scheme.is_object() && scheme.value("name", "") == "kvstore_device") {  // MXNet's kvstore 'device'
    r.notes.push_back({o.path_of("scheme") + "/name",
                       "scheme \"kvstore_device\" read as MXNet's device kvstore: a parameter server on the GPUs"});
    return Json{{"name", "ps"}, {"placement", "device"}};
  }
  if (!scheme.is_object() || scheme.value("name", "") != "allreduce" || !scheme.contains("algorithm") ||
      !scheme["algorithm"].is_string())
    return scheme;
  const std::string algorithm = scheme["algorithm"].get<std::string>();
  const auto known = plan::algorithm_names(plan::flat_allreduce_algorithms());
  if (algorithm == "hierarchical" || std::find(known.begin(), known.end(), algorithm) != known.end()) return scheme;
  scheme["algorithm"] = "ring";
  r.notes.push_back({o.path_of("scheme") + "/algorithm",
                     fmt::format("all-reduce algorithm \"{}\" read as NCCL's ring", algorithm)});
  return scheme;
}

// The release of the framework that ran, as an NGC container's "YY.MM" ("pytorch-20.06", "PyTorch 20.12",
// "tensorflow:21.02-tf2-py3" are 20.06, 20.12, 21.02): the run's provenance.container or source.container, else the
// NGC container NVIDIA's submissions used in the run's MLPerf round ("mlperf_round": v0.7 20.06, v1.0 21.05, v1.1
// 21.09, v2.0 22.04, v2.1 22.09, v3.0 23.04, v3.1 23.09, v4.0 24.04, the rounds' system names' ngcYY.MM); "" when
// neither says.
std::string framework_version_of(const Json& raw) {
  static const std::regex release(R"((\d\d)\.(\d\d))");
  for (const char* holder : {"provenance", "source"}) {
    if (!raw.contains(holder) || !raw[holder].is_object()) continue;
    const Json& c = raw[holder].value("container", Json());
    std::smatch m;
    const std::string text = c.is_string() ? c.get<std::string>() : "";
    if (std::regex_search(text, m, release)) return m[0].str();
  }
  static const std::map<std::string, std::string> rounds = {{"v0.7", "20.06"}, {"v1.0", "21.05"}, {"v1.1", "21.09"},
                                                            {"v2.0", "22.04"}, {"v2.1", "22.09"}, {"v3.0", "23.04"},
                                                            {"v3.1", "23.09"}, {"v4.0", "24.04"}};
  const Json& round = raw.value("mlperf_round", Json());
  if (round.is_string())
    if (const auto it = rounds.find(round.get<std::string>()); it != rounds.end()) return it->second;
  return "";
}

// MLPerf Training's ResNet-50 results of NVIDIA and its partners run NVIDIA's MXNet implementation (the
// image_classification code of the results directories): a run of source_type "mlperf_training_log" whose framework
// field names a container, a CUDA release or another framework (the submitters' system files say "NGC MLPerf v2.1",
// "CUDA 12.0", "PyTorch NVIDIA Release 24.04" for results as fast as the MXNet ones) is read as MXNet's, with a note.
void read_mlperf_stack(MeasuredRun& r) {
  if (r.framework == "mxnet" || r.raw.value("source_type", "") != "mlperf_training_log") return;
  const Json& named = r.raw.value("framework", Json());
  r.notes.push_back({r.json_path + "/framework",
                     fmt::format("MLPerf ResNet-50 with framework {} read as the stack mxnet (NVIDIA's MXNet "
                                 "implementation of the benchmark)",
                                 named.is_string() ? "\"" + named.get<std::string>() + "\"" : std::string("null"))});
  r.framework = "mxnet";
}

// "precision" as the spec's tables write it (fp32, tf32, amp_fp16, amp_bf16, fp16, bf16); null where the source does
// not state it: MLPerf's ResNet-50 logs (source_type "mlperf_training_log"), whose submissions train in mixed
// precision, are read as fp16 and the others as fp32, each with a note.
void read_precision(const JsonObject& o, MeasuredRun& r) {
  const Json* p = o.has("precision") ? o.get_any("precision") : nullptr;
  if (p == nullptr || !p->is_null()) {
    r.precision = plan::precision_from_name(o.get_enum("precision", plan::precision_names(), std::string("fp32")));
    return;
  }
  const bool mlperf = r.raw.contains("source_type") && r.raw["source_type"] == "mlperf_training_log";
  r.precision = mlperf ? plan::Precision::kFp16 : plan::Precision::kFp32;
  r.notes.push_back({o.path_of("precision"),
                     mlperf ? "precision null read as fp16 (MLPerf's ResNet-50 submissions train in mixed precision)"
                            : "precision null read as fp32 (the source states none)"});
}

MeasuredRun read_run(const Json& value, const std::string& file, const std::string& path) {
  const JsonObject o(value, file, path);
  MeasuredRun r;
  r.file = file;
  r.json_path = path;
  r.raw = value;
  r.id = o.get_string("id");
  if (r.id.empty()) o.fail("id", "a non-empty run id");
  r.source = o.get_string("source", "");
  if (!o.has("cluster")) {
    ResolvedCluster resolved = resolve_system(o);
    r.cluster = resolved.name;
    r.cluster_spec = std::move(resolved.spec);
    r.notes.push_back({path + "/system", resolved.note});
  } else {
    r.cluster = o.get_string("cluster");
    if (r.cluster.empty()) o.fail("cluster", "a built-in cluster name or a cluster file path");
    r.cluster = resolve_name(r, "cluster", r.cluster, topology::is_builtin_cluster, topology::builtin_cluster_spelled);
    if (!is_path(r.cluster) && !topology::is_builtin_cluster(r.cluster))
      o.fail("cluster", fmt::format("a built-in cluster ({}) or the path of a cluster file (got \"{}\")",
                                    fmt::join(topology::builtin_cluster_names(), ", "), r.cluster));
  }
  r.model = o.get_string("model");
  if (r.model.empty()) o.fail("model", "a built-in model name or a model file path");
  r.model = resolve_name(r, "model", r.model, models::is_builtin_model, models::builtin_model_spelled);
  models::check_model_reference(r.model, file, path + "/model");  // as the simulation will, but at this run
  r.nodes = static_cast<int>(o.get_int("nodes", 1, 1, 1 << 16));
  r.gpus_per_node = static_cast<int>(o.get_int("gpus_per_node", std::nullopt, 1, 4096));
  r.batch_per_gpu = o.get_int("batch_per_gpu", std::nullopt, 1, 1 << 20);
  r.data = plan::data_from_name(o.get_enum("data", {"synthetic", "real"}, std::string("synthetic")));
  read_precision(o, r);
  r.framework_version = framework_version_of(r.raw);
  if (o.has("xla")) {
    const Json* xla = o.get_any("xla");
    r.xla = xla->is_boolean() && xla->get<bool>();
  }
  if (o.has("input")) r.input = read_input(o);
  if (o.has("classes")) r.classes = o.get_int("classes", std::nullopt, 1, 1000000);
  std::vector<std::string> ignored;
  Json scheme = read_allreduce_algorithm(o, r);
  r.scheme = plan::parse_scheme(JsonObject(scheme, file, o.path_of("scheme")), &ignored);
  r.framework = framework_of_source(r.source);
  if (o.has("framework") && !o.get_any("framework")->is_null()) {  // a table's own name is taken, or noted
    const std::string named = lower_case(o.get_string("framework"));
    const std::vector<std::string> stacks = sim::builtin_stack_names();
    if (std::find(stacks.begin(), stacks.end(), named) != stacks.end()) {
      r.framework = named;
    } else if (const std::string stack = stack_named_in(named); !stack.empty()) {
      r.framework = stack;
      r.notes.push_back({path + "/framework", fmt::format("framework \"{}\" read as the stack {}", named, stack)});
    } else {
      const std::string instead =
          r.framework.empty() ? "the scheme's default stack" : r.framework + ", as the source says";
      r.notes.push_back({path + "/framework", fmt::format("framework \"{}\" has no stack model ({}): simulated with {}",
                                                         named, fmt::join(stacks, ", "), instead)});
    }
  }
  read_kvstore(r, ignored);
  read_mlperf_stack(r);
  for (const std::string& at : ignored)
    r.notes.push_back({at, fmt::format("scheme field \"{}\" ignored (not in the scheme vocabulary of "
                                       "../shared/spec.md; the run is simulated from its other fields)",
                                       at.substr(path.size() + std::string("/scheme/").size()))});
  // The network the framework's benchmark meant by a built-in name (stacks/*.json "models": MXNet's "alexnet").
  if (!r.framework.empty() && !is_path(r.model)) r.model = sim::find_stack(r.framework).network(r.model);
  r.images_per_sec = o.get_number("images_per_sec");
  if (!(r.images_per_sec > 0.0) || !std::isnormal(r.images_per_sec))
    o.fail("images_per_sec", "a positive number of images per second");
  if (o.has("compute_jitter")) r.compute_jitter = o.get_number("compute_jitter", std::nullopt, 0.0, 10.0);
  if (o.has("phases_per_iteration_s")) {
    const JsonObject phases = o.get_object("phases_per_iteration_s");
    if (phases.has("compute") && phases.has("data")) {
      r.compute_per_iteration_s = phases.get_number("compute", std::nullopt, 0.0, 1e6);
      r.data_per_iteration_s = phases.get_number("data", std::nullopt, 0.0, 1e6);
    }
  }
  // Every other field (loss, per-rank figures, notes) is kept in raw and ignored: no finish().
  return r;
}

// Throws unless `later` describes the configuration `first` does, naming the first field that differs.
void check_same_configuration(const MeasuredRun& first, const MeasuredRun& later) {
  const Json a = run_configuration(first), b = run_configuration(later);
  if (a == b) return;
  Json fields = a;
  fields.update(b);  // every field either has (input and classes are optional)
  for (auto it = fields.begin(); it != fields.end(); ++it) {
    const std::string& field = it.key();
    if (a.value(field, Json()) == b.value(field, Json())) continue;
    throw InputError(later.file, later.json_path + "/" + field,
                     fmt::format("the same {} as the run \"{}\" it repeats ({} at {}), or another id", field,
                                 first.id, first.file, first.json_path));
  }
}

// The mean of the values some repeats have, or nullopt when none has one.
template <class Get>
std::optional<double> mean_over(const std::vector<MeasuredRun>& group, Get get) {
  double sum = 0.0;
  int n = 0;
  for (const MeasuredRun& r : group)
    if (const std::optional<double> v = get(r)) {
      sum += *v;
      ++n;
    }
  if (n == 0) return std::nullopt;
  return sum / n;
}

// One run for the repeats of a configuration (see pool_repeats).
MeasuredRun pooled(const std::vector<MeasuredRun>& group) {
  MeasuredRun out = group.front();
  if (group.size() == 1) return out;
  const double n = static_cast<double>(group.size());
  double sum_t = 0.0, sum_t2 = 0.0;  // iteration time per image, 1 / rate
  for (const MeasuredRun& r : group) {
    sum_t += 1.0 / r.images_per_sec;
    sum_t2 += 1.0 / (r.images_per_sec * r.images_per_sec);
  }
  const double mean_t = sum_t / n;
  const double var_t = std::max(0.0, (sum_t2 - n * mean_t * mean_t) / (n - 1.0));
  out.repeats = static_cast<int>(group.size());
  out.images_per_sec = 1.0 / mean_t;
  out.images_per_sec_std_error = std::sqrt(var_t / n) / mean_t;
  out.compute_jitter = mean_over(group, [](const MeasuredRun& r) { return r.compute_jitter; });
  out.compute_per_iteration_s = mean_over(group, [](const MeasuredRun& r) { return r.compute_per_iteration_s; });
  out.data_per_iteration_s = mean_over(group, [](const MeasuredRun& r) { return r.data_per_iteration_s; });
  out.raw["images_per_sec"] = out.images_per_sec;
  out.raw["repeats"] = out.repeats;
  if (out.compute_jitter) out.raw["compute_jitter"] = *out.compute_jitter;
  if (out.raw.contains("phases_per_iteration_s") && out.raw["phases_per_iteration_s"].is_object()) {
    Json& phases_out = out.raw["phases_per_iteration_s"];
    for (auto it = phases_out.begin(); it != phases_out.end(); ++it) {
      const std::string phase = it.key();  // a variable: Clang 14 cannot capture a structured binding
      const std::optional<double> mean = mean_over(group, [&phase](const MeasuredRun& r) -> std::optional<double> {
        const Json* phases = r.raw.contains("phases_per_iteration_s") ? &r.raw["phases_per_iteration_s"] : nullptr;
        if (phases == nullptr || !phases->is_object() || !phases->contains(phase) || !(*phases)[phase].is_number())
          return std::nullopt;
        return (*phases)[phase].get<double>();
      });
      if (mean) it.value() = *mean;
    }
  }
  return out;
}

}  // namespace

std::vector<MeasuredRun> parse_measurements(const Json& json, const std::string& file) {
  const JsonObject root = JsonObject::root(json, file);
  if (root.get_string("format") != kFormat) root.fail("format", fmt::format("\"{}\"", kFormat));
  const Json& runs = root.get_array("runs");
  if (runs.empty()) root.fail("runs", "at least one run");
  std::vector<MeasuredRun> out;
  for (size_t i = 0; i < runs.size(); ++i) out.push_back(read_run(runs[i], file, fmt::format("/runs/{}", i)));
  return out;
}

std::vector<MeasuredRun> load_measurements(const std::string& path) {
  return pool_repeats(parse_measurements(load_json_file(path), path));
}

std::vector<MeasuredRun> load_measurements(const std::vector<std::string>& paths) {
  std::vector<MeasuredRun> all;
  for (const std::string& p : paths)
    for (MeasuredRun& r : parse_measurements(load_json_file(p), p)) all.push_back(std::move(r));
  return pool_repeats(std::move(all));
}

std::string reading_notes(const std::vector<MeasuredRun>& runs) {
  struct Seen {
    int runs = 0;
    std::string first;  // "file at /runs/3/scheme/kvstore"
  };
  std::vector<std::pair<std::string, Seen>> seen;  // in the order first met
  for (const MeasuredRun& r : runs)
    for (const MeasuredRun::Note& n : r.notes) {
      auto it = std::find_if(seen.begin(), seen.end(), [&](const auto& s) { return s.first == n.what; });
      if (it == seen.end()) it = seen.insert(seen.end(), {n.what, Seen{0, fmt::format("{} at {}", r.file, n.path)}});
      ++it->second.runs;
    }
  std::string out;
  for (const auto& [what, s] : seen)
    out += fmt::format("{}: {} run{} (first: {})\n", what, s.runs, s.runs == 1 ? "" : "s", s.first);
  return out;
}

std::vector<MeasuredRun> pool_repeats(std::vector<MeasuredRun> runs) {
  std::vector<std::vector<MeasuredRun>> groups;  // in the order of each id's first run
  std::map<std::string, size_t> group_of;
  for (MeasuredRun& r : runs) {
    const auto [it, first] = group_of.emplace(r.id, groups.size());
    if (first) groups.emplace_back();
    std::vector<MeasuredRun>& group = groups[it->second];
    if (!group.empty()) check_same_configuration(group.front(), r);
    group.push_back(std::move(r));
  }
  std::vector<MeasuredRun> out;
  for (const std::vector<MeasuredRun>& group : groups) out.push_back(pooled(group));
  return out;
}

Json run_configuration(const MeasuredRun& run) {
  Json key = {{"cluster", run.cluster},
              {"model", run.model},
              {"data", plan::data_name(run.data)},
              {"nodes", run.nodes},
              {"gpus_per_node", run.gpus_per_node},
              {"batch_per_gpu", run.batch_per_gpu},
              {"precision", plan::precision_name(run.precision)},
              {"scheme", run.scheme.to_json()}};
  if (!run.framework.empty()) key["framework"] = run.framework;
  if (!run.framework_version.empty()) key["framework_version"] = run.framework_version;
  if (run.xla) key["xla"] = true;
  if (run.input) key["input"] = *run.input;
  if (run.classes) key["classes"] = *run.classes;
  return key;
}

plan::Scenario scenario_of(const MeasuredRun& run) {
  plan::Scenario s;
  s.file = run.file;
  s.json_path = run.json_path;
  s.name = run.id;
  s.model = run.model;
  s.input = run.input;
  s.classes = run.classes;
  s.cluster = run.cluster;
  s.cluster_json = run.cluster_spec;
  s.nodes = run.nodes;
  s.gpus_per_node = run.gpus_per_node;
  s.batch_per_gpu = run.batch_per_gpu;
  s.scheme = run.scheme;
  s.framework = run.framework;
  s.framework_version = run.framework_version;
  s.xla = run.xla;
  s.training.data = run.data;
  s.training.precision = run.precision;
  sim::apply_stack_defaults(s);
  return s;
}

report::RunRecord run_record(const MeasuredRun& run) {
  return report::measured_record(JsonObject(run.raw, run.file, run.json_path), run.id, run.gpus(),
                                 static_cast<double>(run.batch_per_gpu) * run.gpus(), run.images_per_sec);
}

std::string run_field(const MeasuredRun& run, const std::string& field) {
  if (field == "gpus") return std::to_string(run.gpus());
  if (field == "nodes") return std::to_string(run.nodes);
  if (field == "gpus_per_node") return std::to_string(run.gpus_per_node);
  if (field == "batch_per_gpu") return std::to_string(run.batch_per_gpu);
  if (field == "model") {  // as named (TensorFlow's resnet50 is resnet50, not the v1 it simulates), spelled as ours
    const std::string named = run.raw.is_object() ? run.raw.value("model", run.model) : run.model;
    return is_path(named) ? named : models::builtin_model_spelled(named).value_or(named);
  }
  if (field == "cluster") return run.cluster;
  if (field == "data") return plan::data_name(run.data);
  if (field == "framework") return run.framework;
  if (field == "framework_version") return run.framework_version;
  if (field == "precision") return plan::precision_name(run.precision);
  if (field == "device" || field == "family") {  // the catalogue's name (or family) of the run's device, from its cluster
    const topology::DeviceType& device = plan::load_scenario_cluster_spec(scenario_of(run)).node.device;
    return field == "family" ? device.family : device.name;
  }
  if (field == "scheme") return run.raw.at("scheme").value("name", "");
  if (field == "id") return run.id;
  if (!run.raw.contains(field)) return "";
  const Json& v = run.raw.at(field);
  return v.is_string() ? v.get<std::string>() : v.dump();
}

namespace {

using RunFilter = std::function<bool(const MeasuredRun&)>;

// The parts of `expr` between the separators `sep` ("||" or "&&"), each trimmed.
std::vector<std::string> split_on(const std::string& expr, const std::string& sep) {
  std::vector<std::string> parts;
  std::size_t from = 0;
  for (std::size_t at = expr.find(sep); at != std::string::npos; at = expr.find(sep, from)) {
    parts.push_back(expr.substr(from, at - from));
    from = at + sep.size();
  }
  parts.push_back(expr.substr(from));
  return parts;
}

RunFilter parse_comparison(const std::string& term, const std::string& expr, const std::string& option) {
  // The value may not start with an operator's character: 'nodes>>1' is not 'nodes > ">1"'.
  static const std::regex form(R"(^\s*([A-Za-z_]+)\s*(==|!=|>=|<=|>|<|=)\s*([^\s|&<>=!](?:[^|&]*[^\s|&])?)\s*$)");
  std::smatch m;
  if (!std::regex_match(term, m, form))
    throw InputError("", option,
                     fmt::format("FIELD OP VALUE, e.g. 'nodes>1' or 'model==vgg16', or such terms joined by && and "
                                 "|| (&& first), e.g. 'model!=vgg16 || gpus<=1' (got \"{}\")",
                                 expr));
  const std::string field = m[1], op = m[2], value = m[3];
  return [field, op, value](const MeasuredRun& run) {
    const int cmp = compare_numbers_or_text(run_field(run, field), value);
    if (op == "==" || op == "=") return cmp == 0;
    if (op == "!=") return cmp != 0;
    if (op == ">=") return cmp >= 0;
    if (op == "<=") return cmp <= 0;
    if (op == ">") return cmp > 0;
    return cmp < 0;
  };
}

}  // namespace

std::function<bool(const MeasuredRun&)> parse_run_filter(const std::string& expr, const std::string& option) {
  std::vector<std::vector<RunFilter>> any_of;  // || of && terms
  for (const std::string& conjunction : split_on(expr, "||")) {
    any_of.emplace_back();
    for (const std::string& term : split_on(conjunction, "&&"))
      any_of.back().push_back(parse_comparison(term, expr, option));
  }
  return [any_of](const MeasuredRun& run) {
    return std::any_of(any_of.begin(), any_of.end(), [&](const std::vector<RunFilter>& all_of) {
      return std::all_of(all_of.begin(), all_of.end(), [&](const RunFilter& f) { return f(run); });
    });
  };
}

}  // namespace scaletwin::calibrate
