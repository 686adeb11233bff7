// Rounds of a collective, the unit the fast simulation mode times (issue 5).
//
// A round is what a schedule's ranks do concurrently between two synchronisation points: a set of transfers (a
// flow pattern: (source rank, destination rank) pairs, each with its bytes and whether the receiver reduces) and
// copies. The fast mode runs a collective's rounds in lockstep: round k+1 starts when every transfer, reduction
// and copy of round k has completed.
//
// From a materialized schedule (rounds_of): the level of a transfer is 1 + the largest level among the deps of
// its send and of its receive (a Copy is a level of its own, 1 + its deps' largest); round k holds the steps of
// level k; messages between the same pair in one round are one flow of their total bytes. For the generators
// built with ScheduleBuilder these are exactly their rounds; on a contention-free
// platform, lockstep rounds of equal-size transfers give the oracle's time (plan/oracle.hpp).
//
// Symbolic rounds (ring_*_rounds) describe the ring generators of plan/gen_ring.cpp without materializing their
// p · 2(p-1) steps: one pattern (r → r+1 for every r) and 2(p-1) rounds of ⌈n/p⌉ elements, so a ring of 16,384
// ranks costs 32,766 small records instead of 5e8 steps. Every transfer carries the largest chunk (chunks differ
// by at most one element).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "plan/iteration_plan.hpp"
#include "plan/schedule.hpp"

namespace scaletwin::sim::fast {

using RankFlow = std::pair<int, int>;  // (source rank, destination rank)

struct Round {
  int pattern = -1;                  // index in CollectiveRounds::patterns; -1 for a round of copies only
  int64_t bytes = 0;                 // bytes of every flow when flow_bytes is empty
  std::vector<int64_t> flow_bytes;   // per flow of the pattern, when they differ
  bool reduce_all = false;           // every receiver reduces what it receives
  std::vector<char> reduce;          // per flow, when only some reduce (reduce_all false, non-empty)
  std::vector<std::pair<int, int64_t>> copies;  // (rank, bytes) copied in this round

  int64_t bytes_of(size_t flow) const { return flow_bytes.empty() ? bytes : flow_bytes[flow]; }
  bool reduces(size_t flow) const { return reduce_all || (!reduce.empty() && reduce[flow] != 0); }
};

struct CollectiveRounds {
  int ranks = 0;
  std::vector<std::vector<RankFlow>> patterns;
  std::vector<Round> rounds;
};

// Rounds of a materialized schedule (see above). Throws InternalError when sends and receives do not pair up.
CollectiveRounds rounds_of(const plan::Schedule& schedule);

// Symbolic rounds of the ring generators (same transfers as ring_reduce_scatter / ring_allgather /
// ring_allreduce of p ranks over n elements, chunk sizes rounded up to the largest).
CollectiveRounds ring_rounds(plan::Collective collective, int p, int64_t n, int64_t element_bytes);

// Symbolic rounds of the direct all-reduce (plan/gen_direct.cpp) of p ranks over n elements, equal to
// rounds_of(direct_allreduce(p, n, element_bytes)) without its p · 2(p-1) steps: a round of copies (every rank
// copies n elements to its scratch), then one round of p(p-1) flows r → q (q ≠ r, r ascending then q) of n
// elements, every receiver reducing.
CollectiveRounds direct_allreduce_rounds(int p, int64_t n, int64_t element_bytes);

}  // namespace scaletwin::sim::fast
