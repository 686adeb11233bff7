// One training configuration's figures at one GPU count, predicted or measured: the record that `compare` joins
// side by side and that both backends write. The simulator's point (PointResult) becomes one through
// predicted_record; `scaletwin run` writes its figures through record_json (exec/train/trainer_report.cpp), and a
// measurements file's run is read back by measured_record, so a prediction and a run meet as the same type.
//
// Figures are per iteration of the critical worker: phases "compute" (without data), "exposed_comm", "data" and
// "idle" (those known), collectives by plan label (mean seconds from launch to completion).
#pragma once

#include <map>
#include <string>

#include "core/json_reader.hpp"
#include "report/report.hpp"

namespace scaletwin::report {

// The phases a record may carry, in the order they are written, compared and printed.
inline constexpr const char* kRecordPhases[] = {"compute", "exposed_comm", "data", "idle"};

// Plan labels in the order a reader expects: runs of digits compare as numbers ("bucket 2" before "bucket 10"),
// the rest as text.
struct LabelOrder {
  bool operator()(const std::string& a, const std::string& b) const;
};
// Seconds per iteration by collective label, in label order.
using CollectiveTimes = std::map<std::string, double, LabelOrder>;

struct RunRecord {
  std::string id;         // a measured run's id; "" for a prediction
  std::string source;     // where the figures come from ("scaletwin run on HOST ...", a publication, predict)
  std::string plan_hash;  // the lowered plan's hash (16 hex digits); "" where unknown (published runs)
  int gpus = 0;
  double iteration_s = 0.0;
  double images_per_sec = 0.0;
  std::map<std::string, double> phases_s;
  CollectiveTimes collectives_s;
  // Time to accuracy where known (0: none): seconds and images to the target.
  double time_to_target_s = 0.0;
  double images_to_target = 0.0;
};

// A predicted point as a record: the phases split as the report draws them (time_breakdown), collectives by label.
RunRecord predicted_record(const PointResult& p);

// One point of `predict --json` ({"gpus", "iteration_s", "images_per_sec", "compute_s", "exposed_comm_s",
// "phases_s"?, "collectives"?, "time_to_target_s"?, "images_to_target"?}), strictly: InputError names the file, the
// JSON path and what was expected.
RunRecord predicted_record(const JsonObject& point);

// The record's figures as a run record carries them (the measurements format, spec.md): "id", "source",
// "images_per_sec", "gpus", "iteration_s", "plan_hash" (when known), "phases_per_iteration_s", "collectives" (when
// any), "time_to_target": {"reached": true, "seconds", "images"} (when reached).
Json record_json(const RunRecord& r);

// The figures of one run of a measurements file (`run`, its JSON object): images_per_sec, and the phases,
// collectives and time to target it carries; its GPU count and global batch come from the caller (the run's nodes,
// gpus_per_node and batch_per_gpu, read by calibrate/measurements.hpp), iteration_s = global batch / images_per_sec.
RunRecord measured_record(const JsonObject& run, const std::string& id, int gpus, double global_batch,
                          double images_per_sec);

}  // namespace scaletwin::report
