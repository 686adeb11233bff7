// Rounds of a collective: what the fast simulation mode times (sim/fast/plan.hpp), described beside the
// generators so that nothing outside plan/ needs to know an algorithm.
//
// A round is what a schedule's ranks do concurrently between two synchronisation points: a set of transfers (a
// flow pattern: (source rank, destination rank) pairs, each with its bytes and whether the receiver reduces) and
// copies. Lockstep semantics: round k+1 starts when every transfer, reduction and copy of round k has completed.
//
// Three sources, one type:
//   rounds_of(schedule)     level extraction from a materialized schedule: the level of a transfer is 1 + the
//                           largest level among the deps of its send and of its receive (a Copy is a level of its
//                           own, 1 + its deps' largest); round k holds the steps of level k; messages between the
//                           same pair in one round are one flow of their total bytes. For the generators built
//                           with ScheduleBuilder these are exactly their rounds; on a contention-free platform,
//                           lockstep rounds of equal-size transfers give the oracle's time (plan/oracle.hpp).
//   symbolic forms          registered beside a generator (collective_rounds in collectives.hpp): the same rounds
//                           without materializing the schedule's steps (a ring of 16,384 ranks: 32,766 small records
//                           instead of 5e8 steps). Each generator file states how its form relates to rounds_of.
//   compositions            remap / parallel / sequence of rounds mirror those of schedules (compose.hpp), for
//                           generators that compose (hierarchical).
//
// Per-flow bytes and reduce flags that differ within a round live in tables shared by the rounds that use them, so
// that thousands of rounds of one composed pattern (a ring between 8,192 nodes on 8 lanes) cost one table.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "plan/schedule.hpp"

namespace scaletwin::plan {

using RankFlow = std::pair<int, int>;  // (source rank, destination rank)

struct Round {
  int pattern = -1;                  // index in CollectiveRounds::patterns; -1 for a round of copies only
  int64_t bytes = 0;                 // bytes of every flow when flow_bytes < 0
  int flow_bytes = -1;               // index in CollectiveRounds::byte_tables when the flows' bytes differ
  bool reduce_all = false;           // every receiver reduces what it receives
  int reduce = -1;                   // index in CollectiveRounds::reduce_tables when only some flows reduce
  std::vector<std::pair<int, int64_t>> copies;  // (rank, bytes) copied in this round
};

struct CollectiveRounds {
  int ranks = 0;
  std::vector<std::vector<RankFlow>> patterns;
  std::vector<std::vector<int64_t>> byte_tables;  // per flow of a pattern
  std::vector<std::vector<char>> reduce_tables;   // per flow of a pattern: 1 when its receiver reduces
  std::vector<Round> rounds;
  // The generator states that step-level timing equals lockstep timing for it (every rank does the same in every
  // round: the ring), so a simulator need not run it step by step.
  bool lockstep_exact = false;

  int64_t bytes_of(const Round& r, size_t flow) const {
    return r.flow_bytes < 0 ? r.bytes : byte_tables[static_cast<size_t>(r.flow_bytes)][flow];
  }
  bool reduces(const Round& r, size_t flow) const {
    return r.reduce_all || (r.reduce >= 0 && reduce_tables[static_cast<size_t>(r.reduce)][flow] != 0);
  }
};

// Rounds of a materialized schedule (see above). Throws InternalError when sends and receives do not pair up or
// the schedule deadlocks.
CollectiveRounds rounds_of(const Schedule& schedule);

// Rounds from transfers already grouped by level (levels[0] is round 1; an empty level is no round), each level's
// transfers in the order rounds_of lists them (by source rank, then the source's program order); transfers between
// the same pair in one level merge into one flow, as in rounds_of. For symbolic forms that know each transfer's level.
struct LevelFlow {
  int src = 0, dst = 0;
  int64_t bytes = 0;
  bool reduce = false;
};
CollectiveRounds rounds_of_levels(int ranks, std::vector<std::vector<LevelFlow>> levels);

// Compositions (compose.hpp's, on rounds). remap: rank i becomes group[i] of `ranks`. parallel: every part at
// once, round k the union of the parts' rounds k (parts on the same ranks; flows between the same pair in one
// round merged into one). sequence: the parts' rounds one after the other.
CollectiveRounds remap_rounds(CollectiveRounds r, const std::vector<int>& group, int ranks);
CollectiveRounds parallel_rounds(const std::vector<CollectiveRounds>& parts);
CollectiveRounds sequence_rounds(const std::vector<CollectiveRounds>& parts);

// A readable, order-free form of every round (sorted flows with bytes and reduce flags, sorted copies): equal for
// two descriptions of the same rounds. For tests and diagnostics.
std::vector<std::string> canonical_rounds(const CollectiveRounds& r);

}  // namespace scaletwin::plan
