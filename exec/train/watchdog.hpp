// A progress watchdog for the ranks of a training job (issue 54, F10): a rank that stops making progress (stopped
// with SIGSTOP, swapped out, deadlocked in a driver) would otherwise hang every other rank in its next collective
// for ever.
//
// Every rank beats after each iteration and each evaluated batch: it writes its pid, the iteration and the time
// into its file in a directory of the job on this node (/dev/shm, else the temporary directory), shared by the
// ranks on the node. A thread of each rank checks once a second how long ago its rank last beat. Past the limit,
// max(floor, 20 × the longest gap between two beats so far) with a floor of 30 s (SCALETWIN_WATCHDOG_S sets the
// floor; the first iteration's gap, with its warm-up, counts too), and at least 10 minutes until the first
// iteration is done (its lazy set-up, autotuning and first touches, or a large batch on a CPU, are not known
// beforehand), it reads the files of the ranks on its node,
// names the rank that is stopped (its process state in /proc is T) or has exited, else the one that beat least
// recently, prints "[rank R@HOST] error: no progress for N s ..." and exits the process with 3; mpirun then ends
// the job and `run --np` exits 3. Ranks on other nodes are not visible from here: the message says so. A rank
// removes its file at the end; the directories of jobs whose ranks were killed (no file names a live process) are
// removed by the next job's rank 0.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "exec/comm/mpi.hpp"

namespace scaletwin::exec {

class Watchdog {
 public:
  // Collective over comm (rank 0 names the job's directory).
  Watchdog(MPI_Comm comm, int rank);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // Progress: after an iteration (iteration = iterations done) or an evaluated batch (the same count again).
  void beat(int64_t iteration);
  void beat() { beat(iteration_.load()); }  // the same iteration (an evaluated batch, a served request)

  double limit_s() const;  // the current limit on the time between two beats

  static constexpr double kDefaultFloor_s = 30.0;
  static constexpr double kGapFactor = 20.0;
  static constexpr double kFirstIteration_s = 600.0;

 private:
  void watch();
  [[noreturn]] void fire(double since_s);

  int rank_;
  int ranks_ = 1;
  std::string who_;  // "rank R@HOST", for the message (no MPI call from the watchdog's thread)
  std::string dir_, file_;
  int fd_ = -1;
  double floor_s_ = kDefaultFloor_s;
  std::atomic<double> last_beat_s_{0.0};
  std::atomic<double> longest_gap_s_{0.0};
  std::atomic<int64_t> iteration_{0};
  std::atomic<int64_t> beats_{0};
  std::mutex mutex_;
  std::condition_variable stop_cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace scaletwin::exec
