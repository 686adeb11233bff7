// Runs the built scaletwin binary as a user would and captures its exit code and output (stdout and stderr
// together). Shared by the CLI test files.
#pragma once

#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace scaletwin::test {

struct Result {
  int code = -1;
  std::string out;  // stdout and stderr together
};

// `prefix` goes before the binary (e.g. "timeout 120 ").
inline Result run_scaletwin(const std::string& args, const std::string& prefix = "") {
  const std::string cmd = prefix + std::string(SCALETWIN_BINARY) + " " + args + " 2>&1";
  Result r;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace scaletwin::test
