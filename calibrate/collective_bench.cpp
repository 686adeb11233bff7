// Collective benchmark readers and the α-β link fit (see collective_bench.hpp).
#include "calibrate/collective_bench.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <regex>
#include <sstream>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/json_reader.hpp"

namespace scaletwin::calibrate {

namespace {

std::vector<std::string> tokens_of(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string t; in >> t;) out.push_back(t);
  return out;
}

bool is_integer(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

double number_at(const std::vector<std::string>& t, size_t i, const std::string& file, int line) {
  try {
    if (i < t.size()) return std::stod(t[i]);
  } catch (const std::exception&) {
  }
  throw InputError(file, fmt::format("line {}", line), fmt::format("a number in column {}", i + 1));
}

int index_of(const std::vector<std::string>& t, const std::string& name) {
  const auto it = std::find(t.begin(), t.end(), name);
  return it == t.end() ? -1 : static_cast<int>(it - t.begin());
}

}  // namespace

CollectiveBench parse_nccl_tests_text(const std::string& text, const std::string& file) {
  CollectiveBench b;
  b.file = file;
  b.format = "nccl-tests";
  std::istringstream in(text);
  std::vector<std::string> header;
  const std::regex rank_line(R"(^#\s+Rank\s+\d+\s)");
  double best_bytes = 0.0;
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (std::regex_search(line, rank_line)) ++b.ranks;
    std::vector<std::string> t = tokens_of(line);
    if (t.empty()) continue;
    if (t[0] == "#") {
      t.erase(t.begin());
      if (index_of(t, "size") >= 0 && index_of(t, "time") >= 0 && index_of(t, "algbw") >= 0) header = t;
      continue;
    }
    if (!is_integer(t[0]) || header.empty()) continue;
    if (t.size() < header.size())
      throw InputError(file, fmt::format("line {}", line_no),
                       fmt::format("{} columns as the header names them (got {})", header.size(), t.size()));
    const double bytes = number_at(t, static_cast<size_t>(index_of(header, "size")), file, line_no);
    const double time_us = number_at(t, static_cast<size_t>(index_of(header, "time")), file, line_no);
    const double algbw = number_at(t, static_cast<size_t>(index_of(header, "algbw")), file, line_no);
    const int bus = index_of(header, "busbw");
    if (bytes <= 0.0 || time_us <= 0.0) continue;
    b.samples.push_back(CollectiveSample{"nccl", bytes, time_us * 1e-6});
    if (bus >= 0 && algbw > 0.0 && bytes >= best_bytes) {  // the largest size prints the most digits
      best_bytes = bytes;
      b.bus_factor = number_at(t, static_cast<size_t>(bus), file, line_no) / algbw;
    }
  }
  if (header.empty() || b.samples.empty())
    throw InputError(file, "", "nccl-tests output: a '#  size  count  type ... time  algbw  busbw' header and rows");
  if (b.ranks == 0 && b.bus_factor > 0.0 && b.bus_factor < 2.0)  // busbw = algbw * 2(p-1)/p
    b.ranks = static_cast<int>(std::lround(2.0 / (2.0 - b.bus_factor)));
  if (b.ranks < 2) throw InputError(file, "", "the ranks of the run ('#  Rank  N ...' lines) or busbw > algbw");
  if (b.bus_factor <= 0.0) b.bus_factor = 2.0 * (b.ranks - 1) / b.ranks;
  b.collective = b.bus_factor > 1.0 + 1e-9 || b.ranks == 2 ? "all_reduce" : "all_gather";
  return b;
}

CollectiveBench parse_bench_allreduce_text(const std::string& text, const std::string& file) {
  CollectiveBench b;
  b.file = file;
  b.format = "bench_allreduce";
  std::istringstream in(text);
  const std::regex ranks_re(R"(^# all-reduce of float32, (\d+) ranks)");
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    std::smatch m;
    if (std::regex_search(line, m, ranks_re)) b.ranks = std::stoi(m[1]);
    const std::vector<std::string> t = tokens_of(line);
    if (t.size() < 3 || !is_integer(t[0])) continue;
    const double mib = number_at(t, 0, file, line_no);
    b.samples.push_back(CollectiveSample{t[1], mib * 1048576.0, number_at(t, 2, file, line_no) * 1e-6});
  }
  if (b.ranks < 2 || b.samples.empty())
    throw InputError(file, "", "bench_allreduce output: '# all-reduce of float32, P ranks' and rows (MiB algorithm time_us ...)");
  b.bus_factor = 2.0 * (b.ranks - 1) / b.ranks;
  return b;
}

CollectiveBench parse_collective_bench_json(const std::string& text, const std::string& file) {
  const Json json = parse_json_text(text, file);
  const JsonObject root = JsonObject::root(json, file);
  if (root.get_string("format") != "scaletwin-collective-bench/1")
    root.fail("format", "\"scaletwin-collective-bench/1\"");
  root.ignore("comment");
  root.ignore("source");
  CollectiveBench b;
  b.file = file;
  b.format = "json";
  b.collective = root.get_enum("collective", {"all_reduce", "all_gather", "reduce_scatter"}, std::string("all_reduce"));
  b.ranks = static_cast<int>(root.get_int("ranks", std::nullopt, 2, 1 << 20));
  const double p = b.ranks;
  b.bus_factor = root.get_number("bus_factor", b.collective == "all_reduce" ? 2.0 * (p - 1) / p : (p - 1) / p, 0.0);
  const Json& results = root.get_array("results");
  for (size_t i = 0; i < results.size(); ++i) {
    const JsonObject r(results[i], file, fmt::format("/results/{}", i));
    CollectiveSample s{r.get_string("algorithm", "nccl"), r.get_number("bytes", std::nullopt, 1.0), 0.0};
    if (r.has("time_us") == r.has("time_s")) r.fail("time_us", "exactly one of time_us and time_s");
    s.time_s = r.has("time_us") ? r.get_number("time_us", std::nullopt, 1e-9) * 1e-6
                                : r.get_number("time_s", std::nullopt, 1e-15);
    r.finish();
    b.samples.push_back(s);
  }
  if (b.samples.empty()) root.fail("results", "at least one result");
  root.finish();
  return b;
}

CollectiveBench load_collective_bench(const std::string& path) {
  const std::string text = read_input_file(path, "collective benchmark file");
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '{') return parse_collective_bench_json(text, path);
  if (text.find("# all-reduce of float32") != std::string::npos) return parse_bench_allreduce_text(text, path);
  return parse_nccl_tests_text(text, path);
}

AlphaBeta fit_alpha_beta(const CollectiveBench& bench, const std::string& algorithm) {
  double sw = 0, swx = 0, swxx = 0, swt = 0, swxt = 0;
  AlphaBeta ab;
  for (const CollectiveSample& s : bench.samples) {
    if (!algorithm.empty() && s.algorithm != algorithm) continue;
    const double w = 1.0 / (s.time_s * s.time_s), x = bench.bus_factor * s.bytes;
    sw += w, swx += w * x, swxx += w * x * x, swt += w * s.time_s, swxt += w * x * s.time_s;
    ++ab.points;
  }
  if (ab.points == 0) throw InputError(bench.file, "", fmt::format("samples of the algorithm \"{}\"", algorithm));
  const double det = sw * swxx - swx * swx;
  double a = ab.points >= 2 && det > 0.0 ? (swxx * swt - swx * swxt) / det : 0.0;
  double slope = ab.points >= 2 && det > 0.0 ? (sw * swxt - swx * swt) / det : swxt / swxx;
  if (a < 0.0 || slope <= 0.0) a = 0.0, slope = swxt / swxx;  // through the origin
  ab.latency_s = a;
  ab.bus_bandwidth_Bps = 1.0 / slope;
  return ab;
}

LinkFit fit_link(const CollectiveBench& bench, const std::string& algorithm, const topology::Cluster& cluster,
                 const sim::Calibration& calibration) {
  LinkFit f;
  f.measured = fit_alpha_beta(bench, algorithm);
  const int p = bench.ranks;
  if (cluster.total_devices() < p)
    throw InputError(bench.file, "", fmt::format("at most {} ranks on {} ({} nodes)", cluster.total_devices(),
                                                 cluster.spec().name, cluster.nodes()));
  double worst_bw = 0.0;
  for (int i = 0; i < p; ++i) {  // the ring's slowest neighbour route
    const topology::Route r = cluster.route(cluster.rank_device_vertex(i), cluster.rank_device_vertex((i + 1) % p));
    if (worst_bw > 0.0 && r.bottleneck_Bps > worst_bw) continue;
    if (r.bottleneck_Bps == worst_bw && r.latency_s <= f.route_latency_s) continue;
    worst_bw = r.bottleneck_Bps;
    f.route_latency_s = r.latency_s;
    for (int e : r.edges)
      if (cluster.edges().at(static_cast<size_t>(e)).link.bandwidth_Bps <= r.bottleneck_Bps)
        f.link = sim::link_class_of(cluster.edges().at(static_cast<size_t>(e)).kind);
  }
  f.route_bandwidth_Bps = worst_bw;
  const topology::DeviceType& dev = cluster.spec().node.device;
  double per_byte = 1.0 / f.measured.bus_bandwidth_Bps;
  if (bench.collective == "all_reduce" && dev.memory_bandwidth_Bps > 0.0)
    per_byte -= 1.5 / (dev.memory_bandwidth_Bps * calibration.device(dev.name).memory);
  per_byte = std::max(per_byte, 0.05 / f.measured.bus_bandwidth_Bps);
  f.bandwidth_factor = std::clamp(1.0 / (per_byte * worst_bw), 0.05, 2.0);
  const double steps = bench.collective == "all_reduce" ? 2.0 * (p - 1) : p - 1.0;
  const double per_step = f.measured.latency_s / steps - calibration.message_overhead_s;
  if (f.route_latency_s > 0.0 && per_step > 0.0)
    f.latency_factor = std::clamp(per_step / f.route_latency_s, 0.1, 1000.0);
  return f;
}

}  // namespace scaletwin::calibrate
