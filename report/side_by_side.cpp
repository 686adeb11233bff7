// Several scenarios' predictions side by side (see side_by_side.hpp).
#include "report/side_by_side.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <set>
#include <sstream>

namespace scaletwin::report {

namespace {

std::string letter(size_t i) { return i < 26 ? std::string(1, static_cast<char>('A' + i)) : std::to_string(i + 1); }

// "the stacks differ: A tensorflow, B nccl" where `field` is not the same in every report; "" where it is.
std::string difference(const std::vector<Report>& reports, const std::string& what,
                       const std::function<std::string(const Report&)>& field) {
  std::set<std::string> values;
  for (const Report& r : reports) values.insert(field(r));
  if (values.size() <= 1) return "";
  std::string text = fmt::format("the {} differ:", what);
  for (size_t i = 0; i < reports.size(); ++i)
    text += fmt::format("{} {} {}", i == 0 ? "" : ",", letter(i), field(reports[i]).empty() ? "-" : field(reports[i]));
  return text;
}

}  // namespace

std::vector<std::string> side_by_side_differences(const std::vector<Report>& reports) {
  std::vector<std::string> out;
  const std::vector<std::pair<std::string, std::function<std::string(const Report&)>>> fields = {
      {"stacks", [](const Report& r) { return r.stack; }},
      {"calibrations", [](const Report& r) { return r.calibration_source; }},
      {"models", [](const Report& r) { return r.model; }},
      {"batches per GPU", [](const Report& r) { return r.batch_per_gpu > 0 ? std::to_string(r.batch_per_gpu) : ""; }},
      {"precisions", [](const Report& r) { return r.precision; }},
      {"clusters", [](const Report& r) { return r.cluster; }},
  };
  for (const auto& [what, field] : fields)
    if (std::string d = difference(reports, what, field); !d.empty()) out.push_back(std::move(d));
  return out;
}

std::string side_by_side_table(const std::vector<Report>& reports) {
  std::ostringstream out;
  for (size_t i = 0; i < reports.size(); ++i) {
    const Report& r = reports[i];
    out << fmt::format("{}  {}: {} on {}, {}\n   stack {}, calibration {}\n", letter(i), r.scenario, r.model, r.cluster,
                       r.scheme, r.stack.empty() ? "-" : r.stack,
                       r.calibration_source.empty() ? "-" : r.calibration_source);
  }
  for (const std::string& d : side_by_side_differences(reports))
    out << "note: " << d << ": the comparison mixes these with the schemes\n";
  std::set<int> gpus;
  for (const Report& r : reports)
    for (const PointResult& p : r.predictions) gpus.insert(p.gpus);
  out << fmt::format("{:>5}", "gpus");
  for (size_t i = 0; i < reports.size(); ++i)
    out << fmt::format(" {:>12} {:>19}", letter(i) + " images/s", "90% interval");
  out << "\n";
  for (int g : gpus) {
    out << fmt::format("{:>5}", g);
    for (const Report& r : reports) {
      const auto p = std::find_if(r.predictions.begin(), r.predictions.end(),
                                  [g](const PointResult& x) { return x.gpus == g; });
      if (p == r.predictions.end()) {
        out << fmt::format(" {:>12} {:>19}", "-", "-");
        continue;
      }
      const auto [lo, hi] = interval_ratios(r.interval_log_sd, *p);
      const std::string range =
          has_interval(r, *p) ? fmt::format("{:.1f}-{:.1f}", p->images_per_sec * lo, p->images_per_sec * hi) : "-";
      out << fmt::format(" {:>12.1f} {:>19}", p->images_per_sec, range);
    }
    out << "\n";
  }
  return out.str();
}

Json side_by_side_json(const std::vector<Report>& reports) {
  Json all = Json::array();
  for (const Report& r : reports) all.push_back(report_to_json(r));
  return Json{{"format", "scaletwin-predict-side-by-side/1"},
              {"differences", side_by_side_differences(reports)},
              {"reports", std::move(all)}};
}

}  // namespace scaletwin::report
