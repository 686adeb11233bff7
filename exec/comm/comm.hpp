// The schedule interpreter over MPI: runs this rank's program of a plan::Schedule on a buffer.
//
// Each step is posted as soon as the steps in its deps have completed: Send → MPI_Isend from the range, Recv →
// MPI_Irecv straight into the range, RecvReduce → MPI_Irecv into a reused staging buffer, added into the range
// when it arrives (vectorised, no reassociation), Copy → memmove inside the buffer. The IR's FIFO matching per
// (source, destination, channel) comes from MPI's non-overtaking rule per (source, tag, communicator): the tag
// encodes the channel (and the collective's sequence number, so that collectives in flight at the same time never
// match each other's messages), and sends and receives of one (peer, channel) are posted in program order.
// Progress is MPI_Testsome over every outstanding request (progress(), test(), and wait() in a loop with an
// IdleBackoff between fruitless polls, instead of MPI_Waitsome, which busy-polls the core).
// No algorithm has a name here: every collective, whatever its generator, is just a schedule.
//
// Overlap with compute: start() returns at once after posting the steps that have no deps; the training driver
// launches a bucket's all-reduce as soon as its gradients are ready and calls progress() between layers of the
// backward pass (progress calls, not a progress thread: with one rank per core a polling thread would steal the
// core from compute, and Open MPI's progress is not asynchronous anyway), then wait() before the update.
//
// start() numbers the collectives of a runner, and the number is part of the tag: every rank of the rank map calls
// start() for the same schedules in the same order (a rank outside a schedule gets a handle that is already done;
// a rank outside the rank map may skip the calls, it never exchanges messages on this runner). The runner works on
// a duplicate of the communicator (the constructor is collective over it), so its tags never meet other traffic.
// Not thread-safe: one thread drives a runner.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "exec/comm/mpi_buffers.hpp"
#include "plan/schedule.hpp"

namespace scaletwin::exec {

struct CollectiveHandle {
  int slot = -1;          // -1: nothing to do on this rank (done from the start)
  uint64_t sequence = 0;  // the runner's count of started collectives when this one started
};

struct RunnerStats {
  int64_t collectives = 0;
  int64_t messages_sent = 0;
  int64_t bytes_sent = 0;
  int64_t elements_reduced = 0;
  int64_t staging_bytes = 0;  // staging capacity allocated so far (stays flat once warm)
};

class ScheduleRunner {
 public:
  // Duplicates comm (collective over comm). rank_map[s] is the rank in comm of schedule rank s; empty means the
  // identity (schedule rank s = rank s of comm). Transfers longer than segment_bytes go as several messages of
  // that size (a transport detail, like NCCL's slices: each segment of a RecvReduce is added as soon as it
  // arrives, while it is still in cache); every rank must use the same value.
  explicit ScheduleRunner(MPI_Comm comm, std::vector<int> rank_map = {},
                          int64_t segment_bytes = kDefaultSegmentBytes);
  static constexpr int64_t kDefaultSegmentBytes = 1 << 20;
  ~ScheduleRunner();
  ScheduleRunner(const ScheduleRunner&) = delete;
  ScheduleRunner& operator=(const ScheduleRunner&) = delete;

  int comm_rank() const { return comm_rank_; }
  int comm_size() const { return comm_size_; }
  // This process's rank in the schedules run here, or -1 if the rank map leaves it out.
  int schedule_rank() const { return schedule_rank_; }
  MPI_Comm communicator() const { return comm_; }

  // Starts one collective on `buffer` (schedule.elements elements of `type`, in place; the schedule's scratch
  // elements, if any, come from the runner, zeroed). The schedule and the buffer must stay alive and the buffer
  // untouched until the collective is done (test() true or wait()). Offsets are in elements, so a schedule made
  // for 4-byte elements runs as well on doubles.
  CollectiveHandle start(const plan::Schedule& schedule, void* buffer, ElementType type);
  template <class T>
  CollectiveHandle start(const plan::Schedule& schedule, std::span<T> buffer) {
    check_span_size(schedule, static_cast<int64_t>(buffer.size()));
    return start(schedule, buffer.data(), element_type_of<T>());
  }

  // Advances every collective in flight without blocking; true when none is left in flight.
  bool progress();
  // progress(), then whether this collective is done.
  bool test(CollectiveHandle handle);
  // Blocks until this collective is done (other collectives in flight advance too).
  void wait(CollectiveHandle handle);
  void wait_all();
  // start + wait.
  template <class T>
  void run(const plan::Schedule& schedule, std::span<T> buffer) {
    wait(start(schedule, buffer));
  }

  int in_flight() const;
  const RunnerStats& stats() const { return stats_; }

 private:
  struct Flight;
  void check_span_size(const plan::Schedule& schedule, int64_t size) const;
  int take_slot();
  void compile(Flight& flight) const;
  void post_ready(Flight& flight, int first_step);
  bool try_post(Flight& flight, int step);
  void complete_segment(Flight& flight, int step, int segment);
  void complete_step(Flight& flight, int step);
  void handle_completions(int count);
  bool flight_done(CollectiveHandle handle) const;

  MPI_Comm comm_ = MPI_COMM_NULL;
  int comm_rank_ = 0;
  int comm_size_ = 1;
  int schedule_rank_ = -1;
  int max_channels_ = 1;
  std::vector<int> rank_map_;
  int64_t segment_bytes_ = kDefaultSegmentBytes;
  uint64_t sequence_ = 0;
  std::vector<std::unique_ptr<Flight>> flights_;  // slots, reused once their collective is done
  std::vector<MPI_Request> requests_;
  struct RequestOwner {
    int slot;
    int step;
    int segment;
  };
  std::vector<RequestOwner> request_owner_;  // per request
  std::vector<int> completed_;                      // scratch for MPI_Testsome / MPI_Waitsome
  std::vector<int> worklist_;                       // scratch: steps to try to post
  StagingPool staging_;
  RunnerStats stats_;
};

// What a waiting rank does between polls that found nothing to do: sched_yield() for the first kSpinSeconds
// (a peer on its own core answers within microseconds), then sleeps kNapSeconds at a time, so that a rank
// waiting for others gives its core away (more ranks than cores: a parameter server next to two workers on two
// cores; other processes on a shared machine) instead of busy-polling it as MPI's blocking calls do.
// Where every rank and compute thread of the node has a core of its own, nobody needs the core given away and a
// nap only delays the pipelined fragments of a shared-memory transfer (Open MPI's rendezvous needs both sides to
// poll): set_idle_naps(false) then keeps a waiting rank on sched_yield() (see configure_idle_naps).
class IdleBackoff {
 public:
  static constexpr double kSpinSeconds = 100e-6;
  static constexpr double kNapSeconds = 20e-6;
  void reset() { idle_since_s_ = -1.0; }
  void pause();

 private:
  double idle_since_s_ = -1.0;
};

// Process-wide: whether IdleBackoff naps after kSpinSeconds (default true).
void set_idle_naps(bool naps);
// Collective over comm: the number of its ranks on this rank's node (MPI_COMM_TYPE_SHARED).
int ranks_on_node(MPI_Comm comm);
// Collective over comm: this rank's index among comm's ranks on its node, and their number.
struct NodePlace {
  int rank = 0;
  int ranks = 1;
};
NodePlace place_on_node(MPI_Comm comm);
// The node's cores (at least 1).
int node_cores();
// Naps only where on_node ranks (ranks_on_node) times threads_per_rank exceed the node's cores.
void configure_idle_naps(int on_node, int threads_per_rank);

// MPI_Recv with an IdleBackoff between MPI_Test calls instead of MPI's busy-polling wait.
void recv_with_backoff(void* buffer, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                       MPI_Status* status);

// The named baseline: MPI_Allreduce(MPI_IN_PLACE, buffer, count, type, MPI_SUM, comm).
void mpi_allreduce_baseline(void* buffer, int64_t count, ElementType type, MPI_Comm comm);
template <class T>
void mpi_allreduce_baseline(std::span<T> buffer, MPI_Comm comm) {
  mpi_allreduce_baseline(buffer.data(), static_cast<int64_t>(buffer.size()), element_type_of<T>(), comm);
}

// The tag of a message of the collective numbered `sequence` on `channel`: channel · kSequenceSlots + sequence mod
// kSequenceSlots. At most kSequenceSlots collectives may be in flight at once; channels are limited by MPI_TAG_UB
// (Open MPI: millions; the MPI minimum 32767 still allows 127).
inline constexpr int kSequenceSlots = 256;
int message_tag(uint64_t sequence, int channel);

}  // namespace scaletwin::exec
