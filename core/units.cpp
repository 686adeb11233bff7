// Unit parsing and formatting; see units.hpp for the grammar.
#include "core/units.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <fmt/format.h>
#include <vector>

#include "core/error.hpp"

namespace scaletwin {

namespace {

struct Prefix {
  std::string_view text;
  double factor;
};

// Longest first so "Ki" wins over "K".
constexpr Prefix kPrefixes[] = {{"Ki", 1024.0},   {"Mi", 1048576.0}, {"Gi", 1073741824.0}, {"Ti", 1099511627776.0},
                                {"k", 1e3},       {"K", 1e3},        {"M", 1e6},           {"G", 1e9},
                                {"T", 1e12},      {"P", 1e15},       {"m", 1e-3},          {"u", 1e-6},
                                {"n", 1e-9},      {"", 1.0}};

std::string expectation(Quantity kind) {
  switch (kind) {
    case Quantity::kBytes: return "a size in bytes, e.g. 25MB, 4KiB or 1048576";
    case Quantity::kBandwidthBytesPerSec: return "a bandwidth, e.g. 10Gbps (bits) or 1.25GBps (bytes)";
    case Quantity::kSeconds: return "a time, e.g. 5us, 2ms or 0.001";
    case Quantity::kFlopsPerSec: return "a FLOP rate, e.g. 4.37Tf or 4.37e12";
    case Quantity::kCount: return "a number";
  }
  return "a quantity";
}

// Splits "25MB" into prefix factor and unit "B". Returns false when no prefix+unit combination matches.
bool match_unit(std::string_view suffix, Quantity kind, double& factor) {
  auto units_for = [](Quantity k) -> std::vector<std::pair<std::string_view, double>> {
    switch (k) {
      case Quantity::kBytes: return {{"B", 1.0}, {"bytes", 1.0}, {"", 1.0}};
      case Quantity::kBandwidthBytesPerSec: return {{"Bps", 1.0}, {"B/s", 1.0}, {"bps", 0.125}, {"bit/s", 0.125}, {"", 1.0}};
      case Quantity::kSeconds: return {{"s", 1.0}, {"", 1.0}};
      case Quantity::kFlopsPerSec: return {{"FLOP/s", 1.0}, {"flops", 1.0}, {"f", 1.0}, {"F", 1.0}, {"", 1.0}};
      case Quantity::kCount: return {{"", 1.0}};
    }
    return {};
  };
  for (const auto& [unit, unit_factor] : units_for(kind)) {
    if (suffix.size() < unit.size() || suffix.substr(suffix.size() - unit.size()) != unit) continue;
    std::string_view prefix = suffix.substr(0, suffix.size() - unit.size());
    for (const auto& p : kPrefixes) {
      if (p.text != prefix) continue;
      // Sub-unit prefixes make sense only for time; binary prefixes only for bytes.
      const bool small = p.factor < 1.0;
      const bool binary = p.text.size() == 2;
      if (small && kind != Quantity::kSeconds) continue;
      if (binary && kind != Quantity::kBytes) continue;
      if (unit.empty() && !p.text.empty() && kind != Quantity::kBytes && kind != Quantity::kFlopsPerSec) continue;
      factor = p.factor * unit_factor;
      return true;
    }
  }
  return false;
}

}  // namespace

const char* quantity_name(Quantity q) {
  switch (q) {
    case Quantity::kBytes: return "bytes";
    case Quantity::kBandwidthBytesPerSec: return "bandwidth";
    case Quantity::kSeconds: return "time";
    case Quantity::kFlopsPerSec: return "FLOP rate";
    case Quantity::kCount: return "count";
  }
  return "quantity";
}

double parse_quantity(std::string_view text, Quantity kind, const std::string& file, const std::string& json_path) {
  auto fail = [&]() -> double {
    throw InputError(file, json_path, fmt::format("{} (got \"{}\")", expectation(kind), text));
  };
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  if (text.empty()) return fail();
  double value = 0.0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || ptr == begin) return fail();
  std::string_view suffix(ptr, static_cast<size_t>(end - ptr));
  while (!suffix.empty() && suffix.front() == ' ') suffix.remove_prefix(1);
  double factor = 1.0;
  if (!match_unit(suffix, kind, factor)) return fail();
  const double result = value * factor;
  // A subnormal value (0 < |x| < 2.2e-308) passes "> 0" checks but overflows when inverted.
  if (!std::isfinite(result) || (result != 0.0 && !std::isnormal(result))) return fail();
  return result;
}

std::string format_bytes(double bytes) {
  const char* units[] = {"B", "kB", "MB", "GB", "TB"};
  int i = 0;
  while (std::fabs(bytes) >= 1000.0 && i < 4) {
    bytes /= 1000.0;
    ++i;
  }
  return i == 0 ? fmt::format("{:.0f} B", bytes) : fmt::format("{:.2f} {}", bytes, units[i]);
}

std::string format_bandwidth(double bytes_per_s) {
  return format_bytes(bytes_per_s) + "/s";
}

std::string format_seconds(double s) {
  const double a = std::fabs(s);
  if (a < 0.05e-9) return "0 s";  // below the printed resolution: not "0.0 ns" beside another point's "0 s"
  if (a < 1e-6) return fmt::format("{:.1f} ns", s * 1e9);
  if (a < 1e-3) return fmt::format("{:.2f} us", s * 1e6);
  if (a < 1.0) return fmt::format("{:.2f} ms", s * 1e3);
  return fmt::format("{:.3f} s", s);
}

std::string format_flops(double flops) {
  const char* units[] = {"", "k", "M", "G", "T", "P"};
  int i = 0;
  while (std::fabs(flops) >= 1000.0 && i < 5) {
    flops /= 1000.0;
    ++i;
  }
  return fmt::format("{:.2f} {}FLOP", flops, units[i]);
}

}  // namespace scaletwin
