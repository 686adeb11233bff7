// Atomic output files, bounded input files, relative paths, hashing (see files.hpp).
#include "core/files.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <iostream>

#include "core/error.hpp"

namespace scaletwin {

namespace {

namespace fs = std::filesystem;

// `path` with the symlinks of its last component followed (a relative link target is read against the link's
// directory), so that an output named by a symlink replaces the link's target and keeps the link.
fs::path follow_symlinks(const std::string& path) {
  fs::path p(path);
  for (int hops = 0; hops < 40; ++hops) {  // Linux's own limit
    std::error_code ec;
    if (!fs::is_symlink(fs::symlink_status(p, ec))) return p;
    const fs::path to = fs::read_symlink(p, ec);
    if (ec)
      throw InputError(path, "", fmt::format("a writable output path (cannot read the symlink: {})", ec.message()));
    p = to.is_absolute() ? to : p.parent_path() / to;
  }
  throw InputError(path, "", "a writable output path (too many levels of symbolic links)");
}

// Writes all of `content` to `fd`; false (errno set) on failure.
bool write_all(int fd, const std::string& content) {
  for (size_t done = 0; done < content.size();) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// A device, FIFO or socket is written in place: replacing /dev/null with a regular file, or a FIFO a reader waits
// on, would be worse than any partial write.
void write_in_place(const std::string& path, const fs::path& target, const std::string& content) {
  const int fd = ::open(target.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(path, "", fmt::format("a writable output path ({})", std::strerror(errno)));
  const bool ok = write_all(fd, content);
  const int error = errno;
  ::close(fd);
  if (!ok) throw SystemError(fmt::format("{}: writing failed: {}", path, std::strerror(error)));
}

// Creates a temporary file beside `target` (O_EXCL: never an existing file or a planted symlink), its name cut so
// that it stays within the 255 bytes a file name may have.
std::pair<int, fs::path> create_temporary(const std::string& path, const fs::path& target) {
  const std::string name = target.filename().string().substr(0, 200);
  for (int attempt = 0; attempt < 100; ++attempt) {
    const fs::path tmp = target.parent_path() / fmt::format(".{}.tmp.{}.{}", name, getpid(), attempt);
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) return {fd, tmp};
    if (errno != EEXIST)
      throw InputError(path, "", fmt::format("a writable output path (cannot create a file in {}: {})",
                                             target.parent_path().empty() ? "." : target.parent_path().string(),
                                             std::strerror(errno)));
  }
  throw InputError(path, "", "a writable output path (100 temporary names beside it are taken)");
}

}  // namespace

namespace {

// Held: each of these signals is recorded by a handler (process-wide, whichever thread it reaches) instead of acting;
// released: the old actions come back and the recorded signal is raised again.
constexpr int kHeldSignals[] = {SIGINT, SIGTERM, SIGHUP};
bool signals_held = false;
struct sigaction actions_before[3];
volatile sig_atomic_t held_signal = 0;

extern "C" void record_held_signal(int sig) {
  if (held_signal == 0) held_signal = sig;
}

}  // namespace

void hold_signals_for_outputs() {
  if (signals_held) return;
  signals_held = true;
  struct sigaction record {};
  record.sa_handler = record_held_signal;
  sigemptyset(&record.sa_mask);
  record.sa_flags = SA_RESTART;  // a write or fsync interrupted by the signal goes on
  for (size_t i = 0; i < std::size(kHeldSignals); ++i) ::sigaction(kHeldSignals[i], &record, &actions_before[i]);
}

void release_held_signals() {
  if (!signals_held) return;
  signals_held = false;
  for (size_t i = 0; i < std::size(kHeldSignals); ++i) ::sigaction(kHeldSignals[i], &actions_before[i], nullptr);
  if (const int sig = held_signal; sig != 0) {
    held_signal = 0;
    std::fflush(nullptr);
    ::raise(sig);  // as it would have acted: by default the process ends with 128 + sig
  }
}

PreparedOutput prepare_output(const std::string& path, const std::string& content) {
  hold_signals_for_outputs();
  PreparedOutput out;
  out.path = path;
  const fs::path target = follow_symlinks(path);
  struct stat st {};
  const bool exists = ::stat(target.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) throw InputError(path, "", "a file to write (it is a directory)");
  if (exists && !S_ISREG(st.st_mode)) {
    write_in_place(path, target, content);
    return out;  // nothing left to commit
  }
  const auto [fd, tmp] = create_temporary(path, target);
  if (exists) (void)::fchmod(fd, st.st_mode & 07777);  // a replaced file keeps its permissions
  const bool ok = write_all(fd, content) && ::fsync(fd) == 0;
  const int error = errno;
  if (const char* pause = std::getenv("SCALETWIN_TEST_OUTPUT_PAUSE_S"))  // tests: a signal sent while writing
    ::usleep(static_cast<useconds_t>(std::atof(pause) * 1e6));
  if (::close(fd) != 0 || !ok) {
    ::unlink(tmp.c_str());
    throw SystemError(fmt::format("{}: writing failed: {}", path, std::strerror(ok ? errno : error)));
  }
  out.temporary = tmp.string();
  out.target = target.string();
  return out;
}

void commit_output(const PreparedOutput& prepared) {
  if (prepared.temporary.empty()) return;
  if (::rename(prepared.temporary.c_str(), prepared.target.c_str()) != 0) {
    const int rename_error = errno;
    ::unlink(prepared.temporary.c_str());
    throw InputError(prepared.path, "", fmt::format("a writable output path ({})", std::strerror(rename_error)));
  }
}

void abandon_output(const PreparedOutput& prepared) noexcept {
  if (!prepared.temporary.empty()) ::unlink(prepared.temporary.c_str());
}

void write_file_atomic(const std::string& path, const std::string& content) {
  hold_signals_for_outputs();
  if (path == "-") {
    errno = 0;
    std::cout << content << std::flush;
    const std::string reason = errno != 0 ? std::string(": ") + std::strerror(errno) : "";
    if (!std::cout)  // standard output closed, or on a full disk or /dev/full
      throw SystemError("standard output: writing failed" + reason);
    return;
  }
  commit_output(prepare_output(path, content));
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
  if (in.fd < 0)
    throw InputError(path, "", fmt::format("a readable {} (cannot open it: {})", what, std::strerror(errno)));
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
