// The symbolic verifier: proves a Schedule correct before anything times it.
//
// verify(s) runs the schedule symbolically. Every rank's buffer (and scratch) is a map from element ranges to a
// count per contributing rank (a run-length encoded, sorted list of (first_rank, last_rank, count), shared and
// immutable; ranges are split wherever a step boundary falls). A Recv overwrites the range with the sender's
// counts, a RecvReduce adds them (so a contribution reduced twice shows up as a count of 2, which a bitset would
// hide), a Copy copies counts within the rank.
//
// Checks, in order:
//   1. shape: one program per rank, initial/goal/slices sized to the ranks, peers in range and not self,
//      lengths > 0, ranges inside [0, elements + scratch_elements), channels in [0, channels), deps point to
//      earlier steps of the same rank (so a rank's program has no cycle);
//   2. matching: per (source, destination, channel), the k-th Send meets the k-th Recv/RecvReduce (program
//      order), same count of each, same length;
//   3. execution: event-driven with rendezvous: a step is ready when its deps completed; a Copy runs when ready;
//      a transfer happens when both its Send and its Recv are ready and completes both. If steps remain when
//      nothing can progress, the schedule deadlocks (the error names blocked steps);
//   4. post-conditions per data region (Schedule::regions or the top-level initial/goal): kReducedAll and
//      kReducedSlice need every contributor (ranks whose initial is kOwn) exactly once; kGatheredAll needs, in
//      every element, exactly the data of the rank whose kOwnSlice slice holds it (nothing where no slice does).
//
// rounds is the longest chain of communication steps (a transfer is one more than the deepest round among the
// deps of its Send and of its Recv; a Copy adds none): "steps" in the spec and in generators' diagrams.
// Not checked: races between unordered steps of one rank (generators order them; see schedule.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plan/schedule.hpp"

namespace scaletwin::plan {

struct VerifyResult {
  bool ok = false;
  std::string error;                // empty when ok
  int rounds = 0;
  int64_t max_bytes_sent_per_rank = 0;
  std::vector<int64_t> bytes_sent;  // per rank
};

VerifyResult verify(const Schedule& s);

}  // namespace scaletwin::plan
