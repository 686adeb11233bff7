// The mpirun launcher of `run --np` and `explore --np` (cli/launch.hpp).
#include "cli/launch.hpp"

#include <fmt/format.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <system_error>

#include "core/error.hpp"

namespace scaletwin::cli {

namespace {

// The child the signals go to (the launcher's mpirun, the supervisor's rank) and the signal received (0: none).
volatile sig_atomic_t g_child = 0;
volatile sig_atomic_t g_stopped_by = 0;

extern "C" void forward_to_child(int sig) {
  g_stopped_by = sig;
  if (g_child > 0) {
    kill(static_cast<pid_t>(g_child), sig);
    kill(static_cast<pid_t>(g_child), SIGCONT);  // a stopped child acts on it only once continued
  }
}

// While alive: SIGINT, SIGTERM and SIGHUP go to forward_to_child (not restarted: waitpid sees EINTR); the old
// actions come back at the end.
class ForwardSignals {
 public:
  ForwardSignals() {
    g_stopped_by = 0;
    struct sigaction forward {};
    forward.sa_handler = forward_to_child;
    sigemptyset(&forward.sa_mask);
    for (size_t i = 0; i < kSignals.size(); ++i) sigaction(kSignals[i], &forward, &old_[i]);
  }
  ~ForwardSignals() {
    for (size_t i = 0; i < kSignals.size(); ++i) sigaction(kSignals[i], &old_[i], nullptr);
    g_child = 0;
  }
  ForwardSignals(const ForwardSignals&) = delete;
  ForwardSignals& operator=(const ForwardSignals&) = delete;

 private:
  static constexpr std::array<int, 3> kSignals = {SIGINT, SIGTERM, SIGHUP};
  std::array<struct sigaction, 3> old_{};
};

// Waits for child `pid` through signals; false when waitpid fails for another reason.
bool wait_child(pid_t pid, int& status) {
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return false;
  return true;
}

// The strings as the null-terminated array of pointers exec takes (they must outlive it).
std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

constexpr char kSupervisorName[] = "scaletwin-supervisor";
constexpr char kRankChild[] = "SCALETWIN_RANK_CHILD";

// The supervisor, re-executed as `scaletwin-supervisor PID RANK`: waits for the rank and returns the exit code.
int supervise(pid_t rank_pid, const std::string& rank) {
  g_child = rank_pid;  // before the handlers: a signal from the first moment reaches the rank
  const ForwardSignals forward;
  int status = 0;
  if (!wait_child(rank_pid, status)) return kExitSystem;  // not its child: cannot happen after fork + exec
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  const int sig = WIFSIGNALED(status) ? WTERMSIG(status) : SIGKILL;
  // Passed on from mpirun stopping the job: it knows why; the supervisor ends as the signal would have ended it.
  if (g_stopped_by != 0) return 128 + g_stopped_by;
  std::cerr << fmt::format("scaletwin: rank {} (pid {}) was killed by signal {} ({}): the job fails\n", rank,
                           static_cast<int>(rank_pid), sig, strsignal(sig));
  return kExitSystem;
}

}  // namespace

int supervise_rank(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[0], kSupervisorName) == 0)
    return supervise(static_cast<pid_t>(std::atoi(argv[1])), argv[2]);
  const char* rank = std::getenv("OMPI_COMM_WORLD_RANK");
  if (rank == nullptr || std::getenv(kRankChild) != nullptr || argc < 2) return -1;
  if (std::strcmp(argv[1], "run") != 0 && std::strcmp(argv[1], "explore") != 0) return -1;
  std::error_code no_proc;
  const std::string exe = std::filesystem::read_symlink("/proc/self/exe", no_proc).string();
  if (no_proc) return -1;  // no supervisor without a way to run this program again
  const std::string rank_name = rank;
  const pid_t parent = getpid();
  std::cout.flush();
  const pid_t pid = fork();
  if (pid < 0) return -1;  // no supervisor: the rank runs as it is (a kill is then mpirun's 128 + signal)
  if (pid == 0) {
    setenv(kRankChild, "1", 1);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(kExitSystem);  // the supervisor died before the line above
    return -1;
  }
  // The supervisor: this program again, under its own name, with the environment minus MPI's and PMIx's.
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e)
    if (std::strncmp(*e, "OMPI_", 5) != 0 && std::strncmp(*e, "PMIX_", 5) != 0) env.emplace_back(*e);
  std::vector<std::string> args{kSupervisorName, std::to_string(pid), rank_name};
  execve(exe.c_str(), c_strings(args).data(), c_strings(env).data());
  return supervise(pid, rank_name);  // exec failed: supervise as this process
}

int launch_under_mpirun(const std::string& command, int ranks, const std::vector<std::string>& rank_args) {
  std::vector<std::string> args{"mpirun"};
  if (geteuid() == 0) args.emplace_back("--allow-run-as-root");
  args.insert(args.end(), {"--oversubscribe", "-np", std::to_string(ranks)});
  args.push_back(std::filesystem::read_symlink("/proc/self/exe").string());
  args.insert(args.end(), rank_args.begin(), rank_args.end());
  std::cerr << "scaletwin " << command << ": launching";
  for (const auto& s : args) std::cerr << ' ' << s;
  std::cerr << "\n";
  std::vector<char*> argv = c_strings(args);
  std::cout.flush();
  const ForwardSignals forward;
  const pid_t pid = fork();
  if (pid < 0) throw SystemError(command + " --np: fork failed");
  if (pid == 0) {
    execvp(argv[0], argv.data());  // caught signals are reset to their defaults by exec
    std::perror(("scaletwin " + command + ": cannot execute mpirun").c_str());
    _exit(kExitSystem);
  }
  g_child = pid;
  if (g_stopped_by != 0) kill(pid, g_stopped_by);  // a signal that came before mpirun's pid was known
  int status = 0;
  if (!wait_child(pid, status)) throw SystemError(command + " --np: waitpid failed");
  if (g_stopped_by != 0) {
    std::cerr << fmt::format("scaletwin {}: stopped by signal {} ({}): mpirun and its ranks have ended\n", command,
                             static_cast<int>(g_stopped_by), strsignal(g_stopped_by));
    return 128 + g_stopped_by;
  }
  const int rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (rc == kExitOk || rc == kExitBadInput || rc == kExitSystem || rc == kExitInternal) return rc;
  // A rank killed by a signal (mpirun names it above) or mpirun itself failing: the system failed.
  std::cerr << fmt::format("scaletwin {}: the job failed (mpirun {}): a rank died\n", command,
                           rc < 0 ? std::string("was killed") : fmt::format("exit code {}", rc));
  return kExitSystem;
}

}  // namespace scaletwin::cli
