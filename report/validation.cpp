// Validation rows, their MAPE and prediction intervals, as JSON and as a table (see validation.hpp).
#include "report/validation.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "core/error.hpp"
#include "report/report.hpp"

namespace scaletwin::report {

Validation make_validation(const std::vector<std::string>& ids, const std::vector<double>& measured,
                           const std::vector<double>& predicted) {
  ST_ASSERT(ids.size() == measured.size() && ids.size() == predicted.size(), "validation: one figure per run");
  Validation v;
  double sum = 0.0;
  for (size_t i = 0; i < ids.size(); ++i) {
    const double error = (predicted[i] - measured[i]) / measured[i];
    ValidationRow row;
    row.id = ids[i];
    row.measured_images_per_sec = measured[i];
    row.predicted_images_per_sec = predicted[i];
    row.error = error;
    v.rows.push_back(std::move(row));
    sum += std::abs(error);
  }
  v.mape = ids.empty() ? 0.0 : 100.0 * sum / static_cast<double>(ids.size());
  return v;
}

Validation make_validation(const std::vector<RunRecord>& measured, const std::vector<RunRecord>& predicted) {
  ST_ASSERT(measured.size() == predicted.size(), "validation: one prediction per measured run");
  std::vector<std::string> ids;
  std::vector<double> measured_rate, predicted_rate;
  for (size_t i = 0; i < measured.size(); ++i) {
    ids.push_back(measured[i].id);
    measured_rate.push_back(measured[i].images_per_sec);
    predicted_rate.push_back(predicted[i].images_per_sec);
  }
  return make_validation(ids, measured_rate, predicted_rate);
}

void set_intervals(Validation& v, double log_sd, const std::vector<double>& row_log_sd) {
  ST_ASSERT(row_log_sd.empty() || row_log_sd.size() == v.rows.size(), "validation: one interval spread per row");
  v.interval_log_sd = log_sd;
  v.inside_interval = 0;
  for (size_t i = 0; i < v.rows.size(); ++i) {
    ValidationRow& r = v.rows[i];
    const double sd = row_log_sd.empty() ? log_sd : row_log_sd[i];
    r.interval_low = r.interval_high = 0.0;
    const std::vector<double> alternatives =
        alternative_rates(r.range_low_images_per_sec, r.range_high_images_per_sec, r.alternatives);
    if (sd <= 0.0 && alternatives.empty()) continue;
    const double x = r.predicted_images_per_sec;
    const auto [lo, hi] = interval_ratios(sd, x, alternatives);
    r.interval_low = x * lo;
    r.interval_high = x * hi;
    if (r.inside_interval()) ++v.inside_interval;
  }
}

void set_groups(Validation& v, const std::vector<std::string>& fields,
                const std::vector<std::vector<std::string>>& keys) {
  ST_ASSERT(keys.size() == v.rows.size(), "validation groups: one key per row");
  const auto before = [](const std::vector<std::string>& a, const std::vector<std::string>& b) {
    for (size_t k = 0; k < a.size(); ++k) {
      if (a[k] == b[k]) continue;
      const int c = compare_numbers_or_text(a[k], b[k]);
      return c != 0 ? c < 0 : a[k] < b[k];  // "2" and "2.0" stay apart
    }
    return false;
  };
  std::map<std::vector<std::string>, ValidationGroup, decltype(before)> by_key(before);
  for (size_t i = 0; i < v.rows.size(); ++i) {
    ST_ASSERT(keys[i].size() == fields.size(), "validation groups: one value per field");
    const ValidationRow& r = v.rows[i];
    ValidationGroup& g = by_key[keys[i]];
    g.values = keys[i];
    ++g.runs;
    g.mape += std::abs(r.error);
    g.max_abs_error = std::max(g.max_abs_error, std::abs(r.error));
    if (r.interval_high > 0.0) ++g.with_interval;
    if (r.inside_interval()) ++g.inside_interval;
  }
  v.group_fields = fields;
  v.groups.clear();
  for (auto& [key, g] : by_key) {
    g.mape = 100.0 * g.mape / g.runs;
    v.groups.push_back(std::move(g));
  }
}

namespace {

// The MAPE of the rows in their calibration's data and of those not ("in_sample", "held_out": {"runs", "mape"}),
// where some row says which it is.
std::vector<std::pair<std::string, Json>> sample_parts(const Validation& v) {
  std::vector<std::pair<std::string, Json>> out;
  for (const auto& [key, flag] : {std::pair{"in_sample", 1}, std::pair{"held_out", 0}}) {
    int runs = 0;
    double sum = 0.0;
    for (const ValidationRow& r : v.rows)
      if (r.in_sample == flag) {
        ++runs;
        sum += std::abs(r.error);
      }
    if (runs > 0) out.emplace_back(key, Json{{"runs", runs}, {"mape", 100.0 * sum / runs}});
  }
  return out;
}

}  // namespace

Json validation_to_json(const Validation& v) {
  Json runs = Json::array();
  for (const ValidationRow& r : v.rows)
    runs.push_back({{"id", r.id},
                    {"measured_images_per_sec", r.measured_images_per_sec},
                    {"predicted_images_per_sec", r.predicted_images_per_sec},
                    {"error", r.error},
                    {"repeats", r.repeats},
                    {"measured_std_error", r.measured_std_error},
                    {"fidelity", r.fidelity}});
  Json out = {{"runs", runs}, {"mape", v.mape}};
  for (size_t i = 0; i < v.rows.size(); ++i) {
    const ValidationRow& r = v.rows[i];
    if (r.interval_high > 0.0) out["runs"][i]["predicted_interval"] = {r.interval_low, r.interval_high};
    if (r.range_high_images_per_sec > 0.0)
      out["runs"][i]["predicted_assumed_range"] = {r.range_low_images_per_sec, r.range_high_images_per_sec};
    for (const auto& [what, rate] : r.alternatives) out["runs"][i]["predicted_" + what] = rate;
    if (r.dispatch_share > 0.0) out["runs"][i]["dispatch_share"] = r.dispatch_share;
    if (r.in_sample >= 0) out["runs"][i]["in_sample"] = r.in_sample == 1;
    if (!r.calibration.empty()) out["runs"][i]["calibration"] = r.calibration;
  }
  for (const auto& [key, part] : sample_parts(v)) out[key] = part;
  if (!v.dispatch_support.empty()) out["dispatch_support"] = v.dispatch_support;
  for (const auto& [unfitted, runs] : v.unfitted_networks) {
    Json j = unfitted_network_to_json(unfitted);
    j["runs"] = runs;
    out["unfitted_networks"].push_back(std::move(j));
  }
  const auto with_interval = std::count_if(v.rows.begin(), v.rows.end(), [](const ValidationRow& r) {
    return r.interval_high > 0.0;
  });
  if (v.interval_log_sd > 0.0 || with_interval > 0) {
    out["interval"] = {{"level", 0.9}, {"inside", v.inside_interval}, {"runs", v.rows.size()},
                       {"with_interval", with_interval}};
    if (v.interval_log_sd > 0.0) out["interval"]["log_sd"] = v.interval_log_sd;
  }
  if (!v.group_fields.empty()) {
    Json groups = Json::array();
    for (const ValidationGroup& g : v.groups) {
      Json values = Json::object();
      for (size_t k = 0; k < v.group_fields.size(); ++k) values[v.group_fields[k]] = g.values[k];
      groups.push_back({{"values", values}, {"runs", g.runs}, {"mape", g.mape}, {"max_abs_error", g.max_abs_error},
                        {"with_interval", g.with_interval}, {"inside_interval", g.inside_interval}});
    }
    out["groups"] = {{"by", v.group_fields}, {"groups", groups}};
  }
  return out;
}

std::string validation_table(const Validation& v) {
  size_t width = 4;
  bool repeats = false;
  for (const ValidationRow& r : v.rows) {
    width = std::max(width, r.id.size());
    repeats = repeats || r.repeats > 1;
  }
  std::string out = fmt::format("{:<{}} {:>12} {:>12} {:>8}{}\n", "run", width, "measured", "predicted", "error",
                                repeats ? "   repeats  std. error" : "");
  for (const ValidationRow& r : v.rows) {
    out += fmt::format("{:<{}} {:>12.1f} {:>12.1f} {:>+7.1f}%", r.id, width, r.measured_images_per_sec,
                       r.predicted_images_per_sec, 100.0 * r.error);
    if (repeats) out += fmt::format(" {:>9} {:>10.1f}%", r.repeats, 100.0 * r.measured_std_error);
    out += "\n";
  }
  out += fmt::format("MAPE {:.2f}% over {} runs (images/s; error = (predicted - measured) / measured)\n", v.mape,
                     v.rows.size());
  std::vector<std::string> parts;
  for (const auto& [f, what] : {std::pair{"message", "at message level"}, std::pair{"fast", "in the fast mode"}}) {
    const auto n = std::count_if(v.rows.begin(), v.rows.end(), [f = f](const ValidationRow& r) { return r.fidelity == f; });
    if (n > 0) parts.push_back(fmt::format("{} {}", n, what));
  }
  if (!parts.empty() && v.fast_above_gpus > 0)
    out += fmt::format("simulated as predict does (message level up to {} GPUs and for asynchronous plans, fast mode "
                       "above): {}\n", v.fast_above_gpus, fmt::join(parts, ", "));
  else if (!parts.empty())
    out += fmt::format("simulated: {}\n", fmt::join(parts, ", "));
  for (const auto& [key, part] : sample_parts(v))
    out += fmt::format("{}: MAPE {:.2f}% over {} runs\n",
                       key == "in_sample" ? "in the calibration's own data (in-sample)" : "not in its data (held out)",
                       part.at("mape").get<double>(), part.at("runs").get<int>());
  const auto with_interval =
      std::count_if(v.rows.begin(), v.rows.end(), [](const ValidationRow& r) { return r.interval_high > 0.0; });
  if (v.interval_log_sd > 0.0 || with_interval > 0)
    out += fmt::format("inside the 90% prediction interval: {} of {} runs ({:.0f}%){}\n", v.inside_interval,
                       v.rows.size(), v.rows.empty() ? 0.0 : 100.0 * v.inside_interval / static_cast<double>(v.rows.size()),
                       static_cast<size_t>(with_interval) < v.rows.size()
                           ? fmt::format("; {} runs have no interval (their calibration has no cross-validated error)",
                                         v.rows.size() - static_cast<size_t>(with_interval))
                           : std::string());
  for (const auto& [unfitted, runs] : v.unfitted_networks)
    out += fmt::format("{} run{}: {}\n", runs, runs == 1 ? "" : "s", unfitted_network_note(unfitted));
  const auto ranged = std::count_if(v.rows.begin(), v.rows.end(),
                                    [](const ValidationRow& r) { return r.range_high_images_per_sec > 0.0; });
  if (ranged > 0)
    out += fmt::format("{} of the runs are on several nodes of a cluster whose NIC rate is an assumption with a range: "
                       "each is predicted at both ends of it too, and its interval covers them\n", ranged);
  const auto with = [&v](const std::string& what) {
    return std::count_if(v.rows.begin(), v.rows.end(),
                         [&](const ValidationRow& r) { return r.alternatives.count(what) > 0; });
  };
  if (const auto n = with("without_dispatch"); n > 0)
    out += fmt::format("{} of the runs lean on their stack's dispatch more than any run the calibration was fitted "
                       "on: each is predicted without the dispatch too, and its interval covers both\n", n);
  if (const auto n = with("without_workspace_cap"); n > 0)
    out += fmt::format("{} of the runs have 3x3 convolutions that their stack's cap on cuDNN's workspace keeps from "
                       "Winograd: each is predicted without the cap too, and its interval covers both\n", n);
  if (!v.group_fields.empty()) {
    std::vector<size_t> widths;
    for (size_t k = 0; k < v.group_fields.size(); ++k) {
      size_t w = v.group_fields[k].size();
      for (const ValidationGroup& g : v.groups) w = std::max(w, std::max<size_t>(g.values[k].size(), 1));
      widths.push_back(w);
    }
    out += fmt::format("\nby {}:\n", fmt::join(v.group_fields, ", "));
    std::string head;
    for (size_t k = 0; k < widths.size(); ++k) head += fmt::format("{:<{}}  ", v.group_fields[k], widths[k]);
    out += fmt::format("{}{:>5} {:>8} {:>12} {:>8}\n", head, "runs", "MAPE", "max |error|", "inside");
    for (const ValidationGroup& g : v.groups) {
      std::string line;
      for (size_t k = 0; k < widths.size(); ++k)
        line += fmt::format("{:<{}}  ", g.values[k].empty() ? "-" : g.values[k], widths[k]);
      const std::string inside =
          g.with_interval > 0 ? fmt::format("{}/{}", g.inside_interval, g.with_interval) : std::string("-");
      out += fmt::format("{}{:>5} {:>7.2f}% {:>11.1f}% {:>8}\n", line, g.runs, g.mape, 100.0 * g.max_abs_error, inside);
    }
  }
  return out;
}

}  // namespace scaletwin::report
