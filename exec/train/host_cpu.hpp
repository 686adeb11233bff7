// The host's CPU accounting (Linux /proc/stat): how much of the machine's CPU time its hypervisor gave to other
// virtual machines ("steal"). On a shared virtual machine the time a rank computes depends on it, so the run
// record carries the steal over the measured iterations, and a run measured with much of it is known to have run
// on a slower machine than the one calibrated.
#pragma once

#include <optional>
#include <string>

namespace scaletwin::exec {

struct HostCpuTimes {
  double steal = 0.0;  // clock ticks, every CPU of the host
  double total = 0.0;  // user + nice + system + idle + iowait + irq + softirq + steal
};

// The first ("cpu", all CPUs) line of a /proc/stat-format file; nullopt when the file is missing or the line has
// fewer than 8 numbers (kernels before 2.6.11 had no steal column).
std::optional<HostCpuTimes> read_host_cpu_times(const std::string& path = "/proc/stat");

// The fraction of the host's CPU time stolen between readings a and b (0..1); nullopt when either is missing or
// no time passed.
std::optional<double> steal_fraction(const std::optional<HostCpuTimes>& a, const std::optional<HostCpuTimes>& b);

}  // namespace scaletwin::exec
