// Atomic output files, relative paths, hashing (see files.hpp).
#include "core/files.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>

#include "core/error.hpp"

namespace scaletwin {

void write_file_atomic(const std::string& path, const std::string& content) {
  if (path == "-") {
    std::cout << content << std::flush;
    return;
  }
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path tmp = target.parent_path() / fmt::format(".{}.tmp.{}", target.filename().string(), getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw InputError(path, "", "a writable output path (cannot create a file there)");
  const size_t written = std::fwrite(content.data(), 1, content.size(), f);
  const bool ok = written == content.size() && std::fflush(f) == 0 && fsync(fileno(f)) == 0;
  std::fclose(f);
  if (!ok) {
    std::remove(tmp.c_str());
    throw SystemError(fmt::format("{}: writing failed (disk full?)", path));
  }
  std::error_code ec;
  fs::rename(tmp, target, ec);
  if (ec) {
    std::remove(tmp.c_str());
    throw InputError(path, "", fmt::format("a writable output path ({})", ec.message()));
  }
}

std::string resolve_relative(const std::string& path, const std::string& relative_to_file) {
  namespace fs = std::filesystem;
  fs::path p(path);
  if (p.is_absolute() || relative_to_file.empty()) return path;
  return (fs::path(relative_to_file).parent_path() / p).lexically_normal().string();
}

uint64_t fnv1a64(const std::string& data, uint64_t seed) {
  uint64_t h = seed;
  for (unsigned char c : data) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

std::string hex64(uint64_t v) { return fmt::format("{:016x}", v); }

}  // namespace scaletwin
