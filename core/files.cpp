// Atomic output files, bounded input files, relative paths, hashing (see files.hpp).
#include "core/files.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
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

namespace {

// What a non-regular file is, for messages.
std::string file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string size_text(int64_t bytes) {
  return bytes % (int64_t{1} << 20) == 0 ? fmt::format("{} MiB", bytes >> 20) : fmt::format("{} bytes", bytes);
}

// Closes a descriptor when the scope ends.
struct Descriptor {
  int fd = -1;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string read_input_file(const std::string& path, const std::string& what, int64_t max_bytes) {
  // O_NONBLOCK: opening a FIFO with no writer would otherwise wait for one; a regular file ignores the flag.
  const Descriptor in{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
  if (in.fd < 0) throw InputError(path, "", fmt::format("a readable {} (cannot open it: {})", what, std::strerror(errno)));
  struct stat st {};
  if (::fstat(in.fd, &st) != 0)
    throw InputError(path, "", fmt::format("a readable {} (cannot stat it: {})", what, std::strerror(errno)));
  if (!S_ISREG(st.st_mode))
    throw InputError(path, "", fmt::format("a regular file (it is {}; a {} is read only from a regular file)",
                                           file_kind(st.st_mode), what));
  const auto too_large = [&](int64_t bytes) {
    return InputError(path, "", fmt::format("a {} of at most {} (it has {}{} bytes)", what, size_text(max_bytes),
                                            bytes > max_bytes ? "" : "more than ", bytes));
  };
  if (st.st_size > max_bytes) throw too_large(st.st_size);
  // Read until the end, also where the size was not known up front (/proc files say 0) or the file grows meanwhile.
  std::string text;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(in.fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw SystemError(fmt::format("{}: reading failed: {}", path, std::strerror(errno)));
    if (n == 0) break;
    text.append(buffer, static_cast<size_t>(n));
    if (static_cast<int64_t>(text.size()) > max_bytes) throw too_large(max_bytes);
  }
  return text;
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
