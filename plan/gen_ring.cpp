// Ring reduce-scatter, all-gather and all-reduce (Patarasuk and Yuan, "Bandwidth optimal all-reduce algorithms
// for clusters of workstations", JPDC 2009; the NCCL ring).
//
//   ranks on a ring 0 → 1 → … → p-1 → 0; the buffer in p chunks C0..C(p-1) (balanced, part_offset)
//
//   reduce-scatter, step k = 0..p-2:  rank r sends C[(r-k-1) mod p] to r+1,
//                                      rank r RecvReduces C[(r-k-2) mod p] from r-1
//        → after p-1 steps rank r holds the sum of chunk r
//   all-gather, step k = 0..p-2:      rank r sends C[(r-k) mod p] to r+1, Recvs C[(r-k-1) mod p] from r-1
//   all-reduce = sequence(reduce-scatter, all-gather)
//
//   p = 4, reduce-scatter step 0:  0 ─C3→ 1 ─C0→ 2 ─C1→ 3 ─C2→ 0
//
// Steps (rounds): reduce-scatter and all-gather p-1 each, all-reduce 2(p-1).
// Bytes sent per rank: each phase, every chunk but one: n - |C_j| elements, i.e. (p-1)/p · n up to chunk rounding
// (less than one element off); all-reduce 2(p-1)/p · n.
// Preconditions: p ≥ 1, any n ≥ 0 (chunks may be empty when n < p; their transfers are omitted).
#include "plan/collectives.hpp"
#include "plan/compose.hpp"

namespace scaletwin::plan {

namespace {

struct Chunks {
  int64_t n;
  int p;
  int64_t offset(int c) const { return part_offset(n, p, ((c % p) + p) % p); }
  int64_t length(int c) const {
    const int i = ((c % p) + p) % p;
    return part_offset(n, p, i + 1) - part_offset(n, p, i);
  }
};

}  // namespace

Schedule ring_reduce_scatter(int p, int64_t n, int64_t element_bytes) {
  ScheduleBuilder b("ring reduce-scatter", p, n, element_bytes);
  const Chunks c{n, p};
  for (int k = 0; k + 1 < p; ++k) {
    for (int r = 0; r < p; ++r) {
      b.send(r, (r + 1) % p, c.offset(r - k - 1), c.length(r - k - 1));
      b.recv_reduce(r, (r - 1 + p) % p, c.offset(r - k - 2), c.length(r - k - 2));
    }
    b.end_round();
  }
  Schedule s = b.finish();
  set_data_model(s, Collective::kReduceScatter, InitialData::kOwn, Goal::kReducedSlice);
  return s;
}

Schedule ring_allgather(int p, int64_t n, int64_t element_bytes) {
  ScheduleBuilder b("ring all-gather", p, n, element_bytes);
  const Chunks c{n, p};
  for (int k = 0; k + 1 < p; ++k) {
    for (int r = 0; r < p; ++r) {
      b.send(r, (r + 1) % p, c.offset(r - k), c.length(r - k));
      b.recv(r, (r - 1 + p) % p, c.offset(r - k - 1), c.length(r - k - 1));
    }
    b.end_round();
  }
  Schedule s = b.finish();
  set_data_model(s, Collective::kAllGather, InitialData::kOwnSlice, Goal::kGatheredAll);
  return s;
}

Schedule ring_allreduce(int p, int64_t n, int64_t element_bytes) {
  Schedule s =
      sequence(schedules(ring_reduce_scatter(p, n, element_bytes), ring_allgather(p, n, element_bytes)), "ring");
  set_data_model(s, Collective::kAllReduce, InitialData::kOwn, Goal::kReducedAll);
  return s;
}

}  // namespace scaletwin::plan
