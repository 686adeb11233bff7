// The Schedule IR: a collective as data.
//
// A Schedule describes one collective on p logical ranks (0..p-1) over a buffer of `elements` elements of
// `element_bytes` bytes each. Every rank holds its own copy of the buffer (in place: input and output are the
// same buffer). Each rank runs a program: an ordered list of steps. A step names a contiguous range of the buffer
// [offset, offset + length) in elements, and is one of
//
//   Send        send the range to `peer`
//   Recv        receive the range from `peer`, overwriting the local range
//   RecvReduce  receive the range from `peer` and add it element-wise into the local range
//   Copy        copy the local range [src_offset, src_offset + length) onto [offset, offset + length)
//
// A step may start once every step listed in its `deps` (indices into the same rank's program, all smaller than
// its own index) has completed. Steps without deps may start at once, so a rank may have several steps in flight.
// A Send completes when its data has left (the receiver has matched it); a Recv/RecvReduce when the data has
// arrived and been stored or reduced. Messages are matched in FIFO order per (source, destination, channel): the
// k-th Send from a to b on channel c meets the k-th Recv/RecvReduce posted by b from a on channel c, and both
// must name the same length. Interpreters (simulator, CPU and GPU executors) never branch on the schedule's name.
//
// Concurrency: steps of a rank that are not ordered by deps may run in any order or at once. Generators order
// (through deps) every pair of steps that touch overlapping ranges where one writes, except RecvReduces into the
// same range, which commute: an interpreter applies each reduction atomically (receive into staging, then add).
// Executors may use the per-(source, destination, channel) sequence number as the message tag.
//
// Data model for the verifier: `initial` says what each rank holds at the start (its own contribution in every
// element, nothing, or only its owned slice), `goal` what it must hold at the end. The symbolic verifier
// (verify.hpp) tracks, per rank and per element range, a count per contributing rank.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace scaletwin::plan {

enum class OpKind { kSend, kRecv, kRecvReduce, kCopy };
const char* op_kind_name(OpKind op);

struct Step {
  OpKind op = OpKind::kSend;
  int peer = -1;        // the other rank (Send/Recv/RecvReduce); -1 for Copy
  int channel = 0;      // FIFO matching is per (source, destination, channel)
  int64_t offset = 0;   // first element of the range
  int64_t length = 0;   // elements; > 0
  int64_t src_offset = 0;  // Copy only
  std::vector<int> deps;   // indices of earlier steps of the same rank
};

struct RankProgram {
  std::vector<Step> steps;
};

// What a rank holds at the start.
enum class InitialData {
  kOwn,       // its own contribution in every element (all-reduce, reduce-scatter, reduce, PS push)
  kNone,      // nothing (zeros): parameter servers, broadcast receivers
  kOwnSlice,  // only its slice (all-gather input): see Schedule::slice_offset
};

// What a rank must hold at the end.
enum class Goal {
  kReducedAll,    // every element: the sum of every contributor, each exactly once
  kReducedSlice,  // its slice: the sum of every contributor exactly once; the rest unconstrained
  kGatheredAll,   // every element: exactly the owner's data (kOwnSlice owners), nothing else
  kAny,           // unconstrained
};

enum class Collective { kAllReduce, kReduceScatter, kAllGather, kReduce, kBroadcast, kPushPull, kCustom };
const char* collective_name(Collective c);

struct Schedule {
  std::string name;  // for display and traces only
  Collective collective = Collective::kAllReduce;
  int ranks = 0;
  int64_t elements = 0;
  int64_t element_bytes = 4;
  int channels = 1;
  std::vector<RankProgram> programs;  // size ranks
  std::vector<InitialData> initial;   // size ranks
  std::vector<Goal> goal;             // size ranks
  // For kOwnSlice / kReducedSlice: rank r's slice is [slice_offset[r], slice_offset[r] + slice_length[r]).
  std::vector<int64_t> slice_offset;
  std::vector<int64_t> slice_length;
  // Added for compositions and `direct`: per-rank scratch elements after the buffer, [elements, elements +
  // scratch_elements); steps may name them, initial and goal never do. Interpreters allocate elements +
  // scratch_elements per rank.
  int64_t scratch_elements = 0;
  // Added for compositions over disjoint slices of the buffer with different data models (the hybrid's traffic:
  // an all-gather on one slice, a reduce-scatter on another). When non-empty, the verifier uses these regions
  // instead of initial/goal/slice_* above; elements outside every region are unconstrained and start empty.
  struct DataRegion {
    int64_t offset = 0;
    int64_t length = 0;
    std::vector<InitialData> initial;    // size ranks
    std::vector<Goal> goal;              // size ranks
    std::vector<int64_t> slice_offset;   // absolute buffer offsets
    std::vector<int64_t> slice_length;
  };
  std::vector<DataRegion> regions;

  int64_t bytes() const { return elements * element_bytes; }
  int64_t bytes_sent_by(int rank) const;
  int64_t max_bytes_sent_per_rank() const;
  size_t total_steps() const;
};

// Static facts about a schedule that interpreters and round extraction need: for every Recv/RecvReduce step the
// matching Send step index on the peer (FIFO per (src, dst, channel); -1 for other steps), and the reverse
// dependency lists. Throws InternalError when sends and receives do not pair up or deps point forward.
struct ScheduleIndex {
  std::vector<std::vector<int>> send_step_of_recv;        // [rank][step]
  std::vector<std::vector<std::vector<int>>> dependents;  // [rank][step] -> later steps that list it
};
ScheduleIndex index_schedule(const Schedule& schedule);

// Balanced partition of n elements into k parts: part i is [part_offset(n,k,i), part_offset(n,k,i+1)).
inline int64_t part_offset(int64_t n, int64_t k, int64_t i) { return n * i / k; }

}  // namespace scaletwin::plan
