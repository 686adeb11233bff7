// The training job's progress watchdog (exec/train/watchdog.hpp).
#include "exec/train/watchdog.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "core/error.hpp"
#include "exec/comm/mpi_check.hpp"

namespace scaletwin::exec {

namespace {

double unix_now_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string base_directory() {
  struct stat st {};
  if (::stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) && ::access("/dev/shm", W_OK) == 0) return "/dev/shm";
  std::error_code ec;
  const std::filesystem::path tmp = std::filesystem::temp_directory_path(ec);
  return ec ? std::string("/tmp") : tmp.string();
}

struct Beat {
  int rank = -1;
  long pid = 0;
  long long iteration = 0;
  double unix_s = 0.0;
};

// The process state letter of pid from /proc (R, S, D, T, t, Z, ...), or '?' when it has no entry (exited).
char process_state(long pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(stat, text)) return '?';
  const size_t close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() ? text[close + 2] : '?';
}

std::vector<Beat> read_beats(const std::string& dir) {
  std::vector<Beat> out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return out;
  while (const dirent* e = ::readdir(d)) {
    int rank = -1;
    if (std::sscanf(e->d_name, "rank-%d", &rank) != 1) continue;
    std::ifstream in(dir + "/" + e->d_name);
    Beat b;
    b.rank = rank;
    if (in >> b.pid >> b.iteration >> b.unix_s) out.push_back(b);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end(), [](const Beat& a, const Beat& b) { return a.rank < b.rank; });
  return out;
}

// Removes the directories that jobs which ended without cleaning up left behind (their ranks were killed): those in
// which no file names a process that still exists.
void remove_stale_directories(const std::string& base) {
  DIR* d = ::opendir(base.c_str());
  if (d == nullptr) return;
  std::vector<std::string> stale;
  while (const dirent* e = ::readdir(d)) {
    if (std::strncmp(e->d_name, "scaletwin-watchdog-", 19) != 0) continue;
    const std::string dir = base + "/" + e->d_name;
    const std::vector<Beat> beats = read_beats(dir);
    if (std::all_of(beats.begin(), beats.end(), [](const Beat& b) { return process_state(b.pid) == '?'; }))
      stale.push_back(dir);
  }
  ::closedir(d);
  for (const std::string& dir : stale) {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);  // another job's rank may be removing it too
  }
}

}  // namespace

Watchdog::Watchdog(MPI_Comm comm, int rank) : rank_(rank), who_(rank_and_host()) {
  ST_MPI_CHECK(MPI_Comm_size(comm, &ranks_));
  if (const char* floor = std::getenv("SCALETWIN_WATCHDOG_S")) {
    const double v = std::atof(floor);
    if (v > 0.0) floor_s_ = v;
  }
  std::array<char, 128> job{};
  if (rank == 0) {
    std::array<char, 64> host{};
    if (::gethostname(host.data(), host.size() - 1) != 0) host[0] = '\0';
    std::snprintf(job.data(), job.size(), "scaletwin-watchdog-%s-%ld-%lld", host.data(), static_cast<long>(::getpid()),
                  static_cast<long long>(unix_now_s() * 1000.0));
  }
  ST_MPI_CHECK(MPI_Bcast(job.data(), static_cast<int>(job.size()), MPI_CHAR, 0, comm));
  const std::string base = base_directory();
  if (rank == 0) remove_stale_directories(base);
  dir_ = base + "/" + job.data();
  ::mkdir(dir_.c_str(), 0700);  // EEXIST: another rank of this node made it
  file_ = dir_ + "/rank-" + std::to_string(rank);
  fd_ = ::open(file_.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0600);
  last_beat_s_ = unix_now_s();
  beat(0);
  thread_ = std::thread([this] { watch(); });
}

Watchdog::~Watchdog() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (fd_ >= 0) ::close(fd_);
  ::unlink(file_.c_str());
  ::rmdir(dir_.c_str());  // the last rank of the node removes it (ENOTEMPTY for the others)
}

void Watchdog::beat(int64_t iteration) {
  const double now = unix_now_s();
  const double gap = now - last_beat_s_.load();
  if (gap > longest_gap_s_.load()) longest_gap_s_ = gap;
  last_beat_s_ = now;
  iteration_ = iteration;
  ++beats_;
  if (fd_ < 0) return;
  const std::string line = fmt::format("{:>10} {:>20} {:>20.3f}\n", static_cast<long>(::getpid()),
                                       static_cast<long long>(iteration), now);
  if (::pwrite(fd_, line.data(), line.size(), 0) < 0) return;  // the watchdog still runs on this rank's own clock
}

double Watchdog::limit_s() const {
  const double limit = std::max(floor_s_, kGapFactor * longest_gap_s_.load());
  return beats_.load() <= 1 ? std::max(limit, kFirstIteration_s) : limit;  // only the constructor's beat so far
}

void Watchdog::watch() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_cv_.wait_for(lock, std::chrono::seconds(1), [this] { return stop_; })) {
    const double since = unix_now_s() - last_beat_s_.load();
    if (since > limit_s()) fire(since);
  }
}

void Watchdog::fire(double since_s) {
  const std::vector<Beat> beats = read_beats(dir_);
  std::string stalled;
  for (const Beat& b : beats) {
    if (b.rank == rank_) continue;
    const char state = process_state(b.pid);
    if (state == 'T' || state == 't')
      stalled += fmt::format("; rank {} (pid {}) is stopped, at iteration {}", b.rank, b.pid, b.iteration);
    else if (state == '?' || state == 'Z')
      stalled += fmt::format("; rank {} (pid {}) has exited, at iteration {}", b.rank, b.pid, b.iteration);
  }
  if (stalled.empty()) {
    const auto oldest = std::min_element(beats.begin(), beats.end(),
                                         [](const Beat& a, const Beat& b) { return a.unix_s < b.unix_s; });
    if (oldest != beats.end())
      stalled = fmt::format("; of the ranks on this node, rank {} (pid {}) made progress least recently ({:.0f} s ago, "
                            "iteration {})",
                            oldest->rank, oldest->pid, unix_now_s() - oldest->unix_s, oldest->iteration);
  }
  const std::string message = fmt::format(
      "[{}] error: no progress for {:.0f} s (the watchdog's limit: {:.0f} s, 20 x the longest step so far, at least "
      "{:.0f} s, 10 min before the first step ends){}{}\n",
      who_, since_s, limit_s(), floor_s_, stalled,
      static_cast<int>(beats.size()) < ranks_
          ? fmt::format("; the {} ranks on other nodes are not visible from here", ranks_ - static_cast<int>(beats.size()))
          : std::string());
  if (::write(STDERR_FILENO, message.data(), message.size()) < 0) {
  }
  ::unlink(file_.c_str());
  ::rmdir(dir_.c_str());
  ::_exit(kExitSystem);
}

}  // namespace scaletwin::exec
