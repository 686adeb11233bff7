// Step-level collectives for the fast simulation mode (issue 5): one collective run as the message-level
// interpreter (sim/interpreter.hpp) runs it — every rank starts its part when its endpoint reaches the item, a
// step starts when its own deps are complete, a transfer starts when both its Send (after the sender's message
// overhead) and its Recv are posted, spends the route latency, then moves its bytes as one fluid flow sharing
// the links max-min fairly with every other transfer in flight; a RecvReduce reduces after its transfer, a Copy
// copies — but driven by the fast mode's event loop and flow network instead of SimGrid.
//
// Why: lockstep rounds (plan/rounds.hpp) wait for the slowest transfer of every round. Where a round mixes fast
// and slow links (pipelined trees across NVLink/PCIe and the network, the trees of local aggregation, the
// pushes of a parameter server) or where several collectives overlap and their ranks drift apart, ranks of the
// message level run ahead and lockstep was up to 8% pessimistic. Cost: one event per step instead of per round,
// so the fast mode uses it only for schedules up to kDataflowMaxSteps steps (plan.cpp) and keeps lockstep
// rounds for the schedules whose symbolic rounds are exact in lockstep and for larger schedules.
//
// A DataflowRun does not own time: its methods return the actions the event loop must take (a timer, a flow to
// put into the network, a rank whose part is complete), and the loop calls back when a timer or a flow ends.
#pragma once

#include <cstdint>
#include <vector>

#include "plan/schedule.hpp"
#include "sim/interpreter.hpp"

namespace scaletwin::sim::fast {

// Static facts of a schedule for step-level runs.
struct DataflowSchedule {
  plan::Schedule schedule;
  ScheduleIndex index;
  std::vector<std::vector<int>> recv_step_of_send;  // [rank][send step] -> the matched receive step on the peer
  explicit DataflowSchedule(plan::Schedule s);
};

// Per-rank costs of the non-network parts of steps.
struct DataflowCosts {
  std::vector<double> reduce_s_per_byte, copy_s_per_byte;  // per rank
  double message_overhead_s = 0.0;
};

struct DataflowAction {
  // kTransfer: both sides are posted; the loop waits the route latency, moves the bytes, then calls on_flow_end.
  enum Kind { kTimer, kTransfer, kRankDone } kind = kTimer;
  int rank = -1;   // timer / transfer: the rank whose step it is (transfer: the sender); rank done: the rank
  int step = -1;
  int what = 0;    // timer: Timer below
  double delay_s = 0.0;  // timer: from now
  double bytes = 0.0;    // transfer
  int peer = -1;         // transfer: the receiving rank
};

class DataflowRun {
 public:
  enum Timer { kOverhead = 0, kReduce = 1, kCopy = 2 };
  DataflowRun(const DataflowSchedule& s, const DataflowCosts& costs) : s_(&s), costs_(&costs) {}
  // Rank r's endpoint has reached the collective: its steps may start.
  void activate(int rank, std::vector<DataflowAction>& out);
  void on_timer(int rank, int step, int what, std::vector<DataflowAction>& out);
  void on_flow_end(int rank, int step, std::vector<DataflowAction>& out);  // the sender's step
  bool done() const { return ranks_done_ == s_->schedule.ranks; }

 private:
  void start(int rank, int step, std::vector<DataflowAction>& out);
  void post(int rank, int step, std::vector<DataflowAction>& out);  // a Send after its overhead, or a Recv
  void complete(int rank, int step, std::vector<DataflowAction>& out);
  double bytes(int rank, int step) const;

  const DataflowSchedule* s_;
  const DataflowCosts* costs_;
  std::vector<std::vector<int>> remaining_;  // deps left, [rank][step]
  std::vector<std::vector<char>> posted_;    // [rank][step]
  std::vector<int> steps_left_;              // per rank
  int ranks_done_ = 0;
};

}  // namespace scaletwin::sim::fast
