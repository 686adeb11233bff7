// The schedule interpreter: executes one rank's program of a plan::Schedule inside a SimGrid actor. No algorithm
// names: only Send / Recv / RecvReduce / Copy steps and their deps.
//
//   Send        put_async on the mailbox of this (instance, rank, step); FIFO matching per (src, dst, channel) is
//               resolved statically (ScheduleMatching), so a mailbox carries exactly one message per run and the
//               transfer starts when both sides are posted (rendezvous), as in the oracle.
//   Recv        get_async on the matched sender's mailbox.
//   RecvReduce  get_async, then an execution of the reduction time.
//   Copy        an execution of the copy time.
//
// A RankPart is a state machine, not an actor: its owner (an endpoint actor of the iteration runner, or a
// standalone actor in run_schedule) keeps one set of in-flight activities, waits on them with wait_any, and hands
// completions back. So one actor can drive compute and several collectives at once.
#pragma once

#include <simgrid/s4u.hpp>

#include <functional>
#include <limits>
#include <vector>

#include "plan/schedule.hpp"

namespace scaletwin::sim {

namespace sg4 = simgrid::s4u;

using plan::index_schedule;
using plan::ScheduleIndex;

// Costs of the non-network parts of steps (from the compute model). As in plan/oracle.hpp: a RecvReduce ends
// bytes / reduce_Bps after its transfer, a Copy takes bytes / copy_Bps; an infinite rate costs nothing.
struct StepCosts {
  double reduce_Bps = std::numeric_limits<double>::infinity();
  double copy_Bps = std::numeric_limits<double>::infinity();
  double message_overhead_s = 0.0;  // on the sender, before each message (0 in the oracle)
};

// What a completion belongs to, for the owner's bookkeeping.
struct ActivityTag {
  int owner = -1;  // the owner's identifier of the RankPart (or of a compute item)
  int step = -1;
  enum class What { kSend, kRecv, kReduce, kCopy, kOverhead, kCompute } what = What::kCompute;
};

// In-flight activities of one actor.
struct InFlight {
  std::vector<sg4::ActivityPtr> activities;
  std::vector<ActivityTag> tags;
  void add(sg4::ActivityPtr a, ActivityTag t);
  bool empty() const { return activities.empty(); }
  // Blocks until one activity completes; removes it and returns its tag.
  ActivityTag wait_any();
};

// Names of the mailboxes of one collective run: instance `run_id` (unique per concurrent run), sender rank, step.
sg4::Mailbox* step_mailbox(long run_id, int rank, int step);

class RankPart {
 public:
  RankPart(const plan::Schedule& schedule, const ScheduleIndex& index, int rank, long run_id,
           const StepCosts& costs, int owner);
  // Starts every step whose deps are complete and that has not started yet.
  void launch_ready(InFlight& in_flight);
  // A completion of one of this part's activities (tag.owner == owner).
  void on_complete(const ActivityTag& tag, InFlight& in_flight);
  bool done() const { return completed_ == static_cast<int>(steps_.size()); }
  int owner() const { return owner_; }

 private:
  void start(int step, InFlight& in_flight);
  void post_send(int step, InFlight& in_flight);
  void complete(int step);
  double step_bytes(int step) const;
  const plan::Schedule& schedule_;
  const ScheduleIndex& index_;
  const std::vector<plan::Step>& steps_;
  int rank_;
  long run_id_;
  StepCosts costs_;
  int owner_;
  std::vector<int> remaining_deps_;
  std::vector<int> ready_;
  int completed_ = 0;
  int payload_ = 0;        // what messages point at (SimGrid needs a non-null payload)
  int* received_ = nullptr;
};

// Runs `schedule` alone on the contention-free platform (α = latency_s, bandwidth_Bps) and returns the time at
// which each rank finished its program. Must be the only simulation of the process (SimGrid engine).
std::vector<double> run_schedule_contention_free(const plan::Schedule& schedule, double latency_s,
                                                 double bandwidth_Bps, const StepCosts& costs);

}  // namespace scaletwin::sim
