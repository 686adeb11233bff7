// The host's CPU accounting from /proc/stat (see host_cpu.hpp).
#include "exec/train/host_cpu.hpp"

#include <fstream>
#include <sstream>

namespace scaletwin::exec {

std::optional<HostCpuTimes> read_host_cpu_times(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  std::istringstream fields(line);
  std::string name;
  fields >> name;
  if (name != "cpu") return std::nullopt;
  // user nice system idle iowait irq softirq steal [guest guest_nice]: guest time is already in user and nice.
  HostCpuTimes t;
  double value = 0.0;
  int read = 0;
  for (; read < 8 && fields >> value; ++read) {
    if (value < 0.0) return std::nullopt;
    t.total += value;
    if (read == 7) t.steal = value;
  }
  if (read < 8) return std::nullopt;
  return t;
}

std::optional<double> steal_fraction(const std::optional<HostCpuTimes>& a, const std::optional<HostCpuTimes>& b) {
  if (!a || !b) return std::nullopt;
  const double total = b->total - a->total, steal = b->steal - a->steal;
  if (total <= 0.0 || steal < 0.0) return std::nullopt;
  return steal / total;
}

}  // namespace scaletwin::exec
