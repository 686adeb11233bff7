// The host's CPU accounting (exec/train/host_cpu.hpp): /proc/stat's first line, the steal fraction between two readings,
// and files it must not misread.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "exec/train/host_cpu.hpp"

using namespace scaletwin::exec;
namespace fs = std::filesystem;

namespace {

std::string write_stat(const std::string& name, const std::string& text) {
  const fs::path file = fs::temp_directory_path() / ("scaletwin_test_host_cpu_" + name);
  std::ofstream(file) << text;
  return file.string();
}

}  // namespace

TEST_CASE("the host's CPU times come from /proc/stat's first line, steal being its eighth number", "[exec]") {
  const auto a = read_host_cpu_times(write_stat("a", "cpu  100 10 50 800 5 0 5 30 7 0\ncpu0 50 5 25 400 2 0 2 15 0 0\n"));
  REQUIRE(a);
  CHECK(a->steal == 30.0);
  CHECK(a->total == 1000.0);  // guest (7) is already counted in user
  const auto b = read_host_cpu_times(write_stat("b", "cpu  200 10 90 1500 5 0 5 190 9 0\n"));
  REQUIRE(b);
  const auto f = steal_fraction(a, b);
  REQUIRE(f);
  CHECK(*f == Approx(160.0 / 1000.0));
  CHECK_FALSE(steal_fraction(b, b));          // no time passed
  CHECK_FALSE(steal_fraction(a, std::nullopt));
}

TEST_CASE("a missing, foreign or short /proc/stat gives no CPU times", "[exec]") {
  CHECK_FALSE(read_host_cpu_times("/nonexistent/scaletwin/stat"));
  CHECK_FALSE(read_host_cpu_times(write_stat("empty", "")));
  CHECK_FALSE(read_host_cpu_times(write_stat("cpu0", "cpu0 1 2 3 4 5 6 7 8\n")));
  CHECK_FALSE(read_host_cpu_times(write_stat("short", "cpu  1 2 3 4 5 6 7\n")));  // kernels without steal
  CHECK_FALSE(read_host_cpu_times(write_stat("text", "cpu  1 2 x 4 5 6 7 8\n")));
}

TEST_CASE("this machine's /proc/stat reads, and the steal over a moment is a fraction", "[exec]") {
  if (!fs::exists("/proc/stat")) {
    WARN("no /proc/stat on this system: skipped");
    return;
  }
  const auto a = read_host_cpu_times();
  REQUIRE(a);
  volatile double sink = 0.0;
  std::optional<HostCpuTimes> b;
  for (int i = 0; i < 200 && !(b && b->total > a->total); ++i) {  // a few clock ticks (10 ms each)
    for (int k = 0; k < 1000000; ++k) sink = sink + k;
    b = read_host_cpu_times();
  }
  REQUIRE(b);
  const auto f = steal_fraction(a, b);
  REQUIRE(f);
  CHECK(*f >= 0.0);
  CHECK(*f <= 1.0);
}
