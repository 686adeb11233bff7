// The mpirun launcher of `run --np` and `explore --np` (cli/launch.hpp).
#include "cli/launch.hpp"

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "core/error.hpp"

namespace scaletwin::cli {

namespace {

// The launcher's mpirun and the signal that stopped the launcher (0: none).
volatile sig_atomic_t g_mpirun = 0;
volatile sig_atomic_t g_stopped_by = 0;

extern "C" void forward_to_mpirun(int sig) {
  g_stopped_by = sig;
  if (g_mpirun > 0) kill(static_cast<pid_t>(g_mpirun), sig);
}

// While alive: SIGINT, SIGTERM and SIGHUP go to forward_to_mpirun (not restarted: waitpid sees EINTR); the old
// actions come back at the end.
class ForwardSignals {
 public:
  ForwardSignals() {
    struct sigaction forward {};
    forward.sa_handler = forward_to_mpirun;
    sigemptyset(&forward.sa_mask);
    for (size_t i = 0; i < kSignals.size(); ++i) sigaction(kSignals[i], &forward, &old_[i]);
  }
  ~ForwardSignals() {
    for (size_t i = 0; i < kSignals.size(); ++i) sigaction(kSignals[i], &old_[i], nullptr);
    g_mpirun = 0;
  }
  ForwardSignals(const ForwardSignals&) = delete;
  ForwardSignals& operator=(const ForwardSignals&) = delete;

 private:
  static constexpr std::array<int, 3> kSignals = {SIGINT, SIGTERM, SIGHUP};
  std::array<struct sigaction, 3> old_{};
};

}  // namespace

int launch_under_mpirun(const std::string& command, int ranks, const std::vector<std::string>& rank_args) {
  std::vector<std::string> args{"mpirun"};
  if (geteuid() == 0) args.emplace_back("--allow-run-as-root");
  args.insert(args.end(), {"--oversubscribe", "-np", std::to_string(ranks)});
  args.push_back(std::filesystem::read_symlink("/proc/self/exe").string());
  args.insert(args.end(), rank_args.begin(), rank_args.end());
  std::cerr << "scaletwin " << command << ": launching";
  for (const auto& s : args) std::cerr << ' ' << s;
  std::cerr << "\n";
  std::vector<char*> argv;
  for (auto& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::cout.flush();
  g_stopped_by = 0;
  const ForwardSignals forward;
  const pid_t pid = fork();
  if (pid < 0) throw SystemError(command + " --np: fork failed");
  if (pid == 0) {
    execvp(argv[0], argv.data());  // caught signals are reset to their defaults by exec
    std::perror(("scaletwin " + command + ": cannot execute mpirun").c_str());
    _exit(kExitSystem);
  }
  g_mpirun = pid;
  if (g_stopped_by != 0) kill(pid, g_stopped_by);  // a signal that came before mpirun's pid was known
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw SystemError(command + " --np: waitpid failed");
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
