// The HTML report of `predict --report DIR` (DIR/report.html): one self-contained page, inline CSS and inline SVG,
// no scripts and nothing fetched, so it opens offline. It shows the scenario (model, cluster, scheme, batch), the
// calibration used, four charts (images/s and speedup against GPUs beside ideal linear scaling, efficiency, and a
// stacked bar per GPU count of the iteration time: data, compute, exposed communication, idle) and the prediction
// table. Several reports (schemes) draw one series each. The charts come from svg_chart.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/json_reader.hpp"
#include "report/report.hpp"

namespace scaletwin::report {

struct ReportContext {
  int64_t batch_per_gpu = 0;                         // 0: not shown
  std::string calibration_source = "built-in defaults";  // a file name, or how the calibration was obtained
  Json calibration;                                  // calibration_to_json(...); null: not shown
  std::string applied_device_entry;  // the key under "devices" the prediction's GPU used ("family:hopper"); "" unknown
};

// The critical worker's iteration split into parts that add up to iteration_s: data (the "data" phase), compute
// (the other phases), exposed communication and idle (the rest of iteration_s, e.g. waiting on other workers).
// Each part is clamped so that none is negative and their sum is iteration_s.
struct TimeBreakdown {
  double data_s = 0.0;
  double compute_s = 0.0;
  double exposed_comm_s = 0.0;
  double idle_s = 0.0;
};
TimeBreakdown time_breakdown(const PointResult& p);

// Building blocks shared with other pages (calibrate's validation report): a whole page with the report's inline
// style around `body` (title escaped here, body already HTML), and the calibration as an open <details> table.
std::string html_page(const std::string& title, const std::string& body);
// A table cell of plain text: <td>text, escaped</td>.
std::string td(const std::string& text);
// The calibration as "path = value" rows; with `applied_device_entry`, that entry's rows are marked (class "applied",
// "(applied)") and the other device entries' rows dimmed (class "unused").
std::string calibration_details(const std::string& source, const Json& calibration,
                                const std::string& applied_device_entry = "");
// A palette colour for series i (cycles).
std::string series_color(size_t i);

std::string report_html(const Report& report);
std::string report_html(const Report& report, const ReportContext& context);
// One series per report (scheme) in every chart; the page's title comes from the first report.
std::string report_html(const std::vector<Report>& reports, const ReportContext& context);

}  // namespace scaletwin::report
