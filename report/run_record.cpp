// The record of one run's figures, predicted or measured (see run_record.hpp).
#include "report/run_record.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "report/html.hpp"

namespace scaletwin::report {

namespace {

double positive_number(const JsonObject& o, const std::string& key) {
  const double v = o.get_number(key);
  if (!(v > 0.0)) o.fail(key, "a number > 0");
  return v;
}

// "collectives": [{"label", "seconds"}] into label -> seconds (repeated labels add up).
CollectiveTimes read_collectives(const JsonObject& parent) {
  CollectiveTimes out;
  if (!parent.has("collectives")) return out;
  const Json& list = parent.get_array("collectives");
  for (size_t i = 0; i < list.size(); ++i) {
    const JsonObject c(list[i], parent.file(), fmt::format("{}/{}", parent.path_of("collectives"), i));
    out[c.get_string("label")] += c.get_number("seconds", std::nullopt, 0.0);
  }
  return out;
}

}  // namespace

bool LabelOrder::operator()(const std::string& a, const std::string& b) const {
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {  // compare the two numbers: without leading zeros, the longer is larger
      size_t ei = i, ej = j;
      while (ei < a.size() && digit(a[ei])) ++ei;
      while (ej < b.size() && digit(b[ej])) ++ej;
      size_t si = i, sj = j;
      while (si + 1 < ei && a[si] == '0') ++si;
      while (sj + 1 < ej && b[sj] == '0') ++sj;
      if (ei - si != ej - sj) return ei - si < ej - sj;
      const int c = a.compare(si, ei - si, b, sj, ej - sj);
      if (c != 0) return c < 0;
      if (ei - i != ej - j) return ei - i < ej - j;  // "01" after "1": equal values, still distinct labels
      i = ei, j = ej;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i, ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

RunRecord predicted_record(const PointResult& p) {
  RunRecord r;
  r.source = "scaletwin predict (" + p.fidelity + ")";
  r.plan_hash = p.plan_hash;
  r.gpus = p.gpus;
  r.iteration_s = p.iteration_s;
  r.images_per_sec = p.images_per_sec;
  const TimeBreakdown b = time_breakdown(p);
  r.phases_s = {{"compute", b.compute_s}, {"exposed_comm", b.exposed_comm_s}, {"data", b.data_s}, {"idle", b.idle_s}};
  for (const CollectiveTime& c : p.collectives) r.collectives_s[c.label] += c.seconds;
  r.time_to_target_s = p.time_to_target_s;
  r.images_to_target = p.images_to_target;
  return r;
}

RunRecord predicted_record(const JsonObject& point) {
  PointResult p;
  p.gpus = static_cast<int>(point.get_int("gpus", std::nullopt, 1, 1 << 24));
  p.iteration_s = positive_number(point, "iteration_s");
  p.images_per_sec = positive_number(point, "images_per_sec");
  p.compute_s = point.get_number("compute_s", std::nullopt, 0.0);
  p.exposed_comm_s = point.get_number("exposed_comm_s", std::nullopt, 0.0);
  if (point.has("phases_s")) {
    const JsonObject phases = point.get_object("phases_s");
    for (const auto& item : phases.raw().items()) p.phase_s[item.key()] = phases.get_number(item.key(), std::nullopt, 0.0);
  }
  if (point.has("fidelity")) p.fidelity = point.get_string("fidelity");
  if (point.has("plan_hash")) p.plan_hash = point.get_string("plan_hash");
  if (point.has("time_to_target_s")) {
    p.time_to_target_s = point.get_number("time_to_target_s", std::nullopt, 0.0);
    p.images_to_target = point.get_number("images_to_target", 0.0, 0.0);
  }
  RunRecord r = predicted_record(p);
  r.collectives_s = read_collectives(point);
  return r;
}

Json record_json(const RunRecord& r) {
  Json out = {{"id", r.id}, {"source", r.source}, {"images_per_sec", r.images_per_sec}, {"gpus", r.gpus},
              {"iteration_s", r.iteration_s}};
  if (!r.plan_hash.empty()) out["plan_hash"] = r.plan_hash;
  Json phases = Json::object();
  for (const char* phase : kRecordPhases)
    if (const auto it = r.phases_s.find(phase); it != r.phases_s.end()) phases[phase] = it->second;
  out["phases_per_iteration_s"] = std::move(phases);
  if (!r.collectives_s.empty()) {
    Json list = Json::array();
    for (const auto& [label, seconds] : r.collectives_s) list.push_back({{"label", label}, {"seconds", seconds}});
    out["collectives"] = std::move(list);
  }
  if (r.time_to_target_s > 0.0)
    out["time_to_target"] = {{"reached", true}, {"seconds", r.time_to_target_s}, {"images", r.images_to_target}};
  return out;
}

RunRecord measured_record(const JsonObject& run, const std::string& id, int gpus, double global_batch,
                          double images_per_sec) {
  RunRecord r;
  r.id = id;
  if (run.has("source")) r.source = run.get_string("source");
  if (run.has("plan_hash")) r.plan_hash = run.get_string("plan_hash");
  r.gpus = gpus;
  r.images_per_sec = images_per_sec;
  r.iteration_s = images_per_sec > 0.0 ? global_batch / images_per_sec : 0.0;
  if (run.has("phases_per_iteration_s")) {
    const JsonObject phases = run.get_object("phases_per_iteration_s");
    for (const char* phase : kRecordPhases)
      if (phases.has(phase)) r.phases_s[phase] = phases.get_number(phase, std::nullopt, 0.0);
  }
  r.collectives_s = read_collectives(run);
  const Json& t = run.raw().contains("time_to_target") ? run.raw()["time_to_target"] : Json();
  if (t.is_object() && t.value("reached", false) && t["seconds"].is_number() && t["images"].is_number()) {
    r.time_to_target_s = t["seconds"].get<double>();
    r.images_to_target = t["images"].get<double>();
  }
  return r;
}

}  // namespace scaletwin::report
