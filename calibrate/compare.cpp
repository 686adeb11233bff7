// A prediction file against a measurements file (see compare.hpp).
#include "calibrate/compare.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <optional>

#include "calibrate/measurements.hpp"
#include "core/error.hpp"
#include "core/json_reader.hpp"
#include "models/zoo.hpp"

namespace scaletwin::calibrate {

std::vector<report::RunRecord> load_measured_records(const std::string& path) {
  std::vector<report::RunRecord> out;
  for (const MeasuredRun& run : load_measurements(path)) out.push_back(run_record(run));
  return out;
}

namespace {

// A model or cluster as compared: a file by its name without directory or extension, a built-in name as spelled.
std::string comparable_name(const std::string& name, bool model) {
  if (name.find('/') != std::string::npos || name.ends_with(".json") || name.ends_with(".onnx"))
    return std::filesystem::path(name).stem().string();
  return model ? models::builtin_model_spelled(name).value_or(name) : name;
}

// The scheme's kind: "allreduce(ring, 25.00 MB buckets, overlapped)" is "allreduce".
std::string scheme_kind(const std::string& described) { return described.substr(0, described.find('(')); }

void check(std::vector<Mismatch>& out, const std::string& field, const std::optional<std::string>& predicted,
           const std::string& measured) {
  if (predicted && *predicted != measured) out.push_back(Mismatch{field, *predicted, measured});
}

}  // namespace

std::vector<Mismatch> configuration_mismatches(const std::string& prediction_path,
                                               const std::string& measurements_path) {
  const Json json = load_json_file(prediction_path);
  const auto stated = [&](const char* key) -> std::optional<std::string> {
    if (!json.is_object() || !json.contains(key)) return std::nullopt;
    const Json& v = json.at(key);
    return v.is_string() ? v.get<std::string>() : v.dump();
  };
  std::map<int, std::string> plan_hash_at;  // the prediction's plan hash per GPU count
  for (const report::RunRecord& p : report::load_predicted_records(prediction_path, nullptr))
    plan_hash_at[p.gpus] = p.plan_hash;
  std::optional<std::string> model = stated("model"), cluster = stated("cluster"), scheme = stated("scheme");
  if (model) model = comparable_name(*model, true);
  if (cluster) cluster = comparable_name(*cluster, false);
  if (scheme) scheme = scheme_kind(*scheme);
  std::vector<Mismatch> out;
  const std::vector<MeasuredRun> runs = load_measurements(measurements_path);
  for (size_t i = 0; i < runs.size(); ++i) {
    const MeasuredRun& run = runs[i];
    const auto at = plan_hash_at.find(run.gpus());
    if (at == plan_hash_at.end()) continue;  // not joined
    const std::string path = fmt::format("/runs/{}/", i);
    const size_t before = out.size();
    check(out, path + "model", model, comparable_name(run_field(run, "model"), true));
    check(out, path + "cluster", cluster, comparable_name(run.cluster, false));
    check(out, path + "batch_per_gpu", stated("batch_per_gpu"), std::to_string(run.batch_per_gpu));
    check(out, path + "scheme", scheme, run_field(run, "scheme"));
    const std::string run_hash = run_record(run).plan_hash;
    if (!run_hash.empty() && !at->second.empty() && out.size() == before)  // a finer check of a like run
      check(out, path + "plan_hash", at->second, run_hash);
  }
  return out;
}

report::Comparison compare_files(const std::string& prediction_path, const std::string& measurements_path,
                                 bool allow_mismatch, std::vector<Mismatch>* mismatches) {
  const std::vector<Mismatch> differ = configuration_mismatches(prediction_path, measurements_path);
  if (!differ.empty() && !allow_mismatch)
    throw InputError(measurements_path, differ.front().field,
                     fmt::format("the configuration {} predicts: {} (got {}); --allow-mismatch compares anyway",
                                 prediction_path, differ.front().predicted, differ.front().measured));
  if (mismatches != nullptr) *mismatches = differ;
  std::string scenario;
  const std::vector<report::RunRecord> predicted = report::load_predicted_records(prediction_path, &scenario);
  const std::vector<report::RunRecord> measured = load_measured_records(measurements_path);
  report::Comparison c = report::compare_records(predicted, measured);
  if (c.rows.empty()) {
    std::string have;
    for (const report::RunRecord& p : predicted) {
      if (!have.empty()) have += ',';
      have += std::to_string(p.gpus);  // appended, not "," + string: GCC 12's -Wrestrict misfires on that at -O3
    }
    throw InputError(measurements_path, "/runs",
                     fmt::format("a run at a GPU count {} predicts ({})", prediction_path, have));
  }
  c.prediction_file = prediction_path;
  c.measurements_file = measurements_path;
  c.scenario = scenario;
  return c;
}

}  // namespace scaletwin::calibrate
