// The schedule-to-NCCL lowering: a plan::Schedule cut into global rounds, each issued as one ncclGroupStart /
// ncclGroupEnd of ncclSend / ncclRecv per rank. Pure host logic, tested without a GPU.
//
// NCCL has no tags: the sends from a to b and the receives posted by b from a inside one group are matched in the
// order they are posted, and a rank's groups run one after the other on its stream. So a message must be sent
// and received in the same round number on both ranks, or the ranks wait on each other across rounds. The
// lowering therefore simulates the whole schedule (every rank's program) in lock step:
//
//   round k, on every rank:  1. copies   Copy steps whose deps are done run first, in program order (a copy
//                                        finishing may make another copy ready in the same round)
//                            2. group    every Send/Recv/RecvReduce pair (the q-th Send a→b on channel c with
//                                        the q-th Recv(Reduce) at b from a on channel c, the IR's FIFO rule) whose
//                                        two steps have their deps done and whose pair q−1 of the same queue is
//                                        issued (earlier or in this round) goes into this group
//                            3. reduce   each RecvReduce of the group, received into staging, is added into its range
//   A step of the group completes at the end of round k, so its dependents go in round k+1 or later.
//
// Inside a group, a rank posts its p2p ops ordered by (peer, channel, sequence), so both ends post the messages
// between them in the same order. RecvReduce staging: within a round each RecvReduce gets its own slice of one
// per-rank staging area (reused by every round); staging_elements is the largest round's need.
#pragma once

#include <cstdint>
#include <vector>

#include "plan/schedule.hpp"

namespace scaletwin::exec::cuda {

struct P2pOp {
  int step = -1;               // index in the rank's program
  plan::OpKind op = plan::OpKind::kSend;
  int peer = -1;
  int64_t offset = 0, length = 0;  // range of the buffer (or its scratch)
  int64_t staging_offset = -1;     // RecvReduce: where it lands in the staging area
};

struct RankRound {
  std::vector<int> copies;  // Copy steps, in execution order
  std::vector<P2pOp> p2p;   // the group, in posting order
  bool empty() const { return copies.empty() && p2p.empty(); }
};

struct NcclLowering {
  int rounds = 0;
  std::vector<std::vector<RankRound>> ranks;  // [rank][round]
  std::vector<int64_t> staging_elements;      // per rank
  std::vector<std::vector<int>> round_of_step;  // [rank][step]: the round the step runs in
};

// ST_ASSERT when a message has no partner, the partners' lengths differ, or the schedule cannot progress.
NcclLowering lower_for_nccl(const plan::Schedule& schedule);

}  // namespace scaletwin::exec::cuda
