// Several scenarios' predictions side by side (`predict A.json B.json ...`): one table with each scenario's images/s
// and 90% interval per GPU count, one JSON, and notes where the scenarios differ in what their comparison should hold
// equal — the software stack, the calibration, the model, the batch per GPU, the precision or the cluster — so that a
// scheme comparison does not silently compare stacks (TensorFlow's dispatch against NCCL's) as well.
#pragma once

#include <string>
#include <vector>

#include "core/json_reader.hpp"
#include "report/report.hpp"

namespace scaletwin::report {

// What differs between the reports besides their schemes, one sentence each ("the stacks differ: A tensorflow, B
// nccl; ..."); empty where the reports hold everything but the scheme equal.
std::vector<std::string> side_by_side_differences(const std::vector<Report>& reports);

// The reports' letters (A, B, ...) with scenario, scheme, stack and calibration, the differences, then one row per GPU
// count of any report: each report's images/s and interval ("-" where it has no such point).
std::string side_by_side_table(const std::vector<Report>& reports);

// {"format": "scaletwin-predict-side-by-side/1", "differences": [...], "reports": [report_to_json of each]}.
Json side_by_side_json(const std::vector<Report>& reports);

}  // namespace scaletwin::report
