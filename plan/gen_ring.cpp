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
//
// Symbolic rounds (ring_rounds, registered for the three): one pattern (r → r+1 for every r) and p−1 rounds per
// phase of ⌈n/p⌉ elements per flow: the rounds of rounds_of(schedule) with every transfer carrying the largest
// chunk (chunks differ by at most one element; when n < p the empty chunks' transfers are kept at one element).
// Every rank does the same in every round, so lockstep timing is its step-level timing (lockstep_exact).
#include "core/error.hpp"
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

CollectiveRounds ring_rounds(Collective collective, int p, int64_t n, int64_t element_bytes) {
  ST_ASSERT(p >= 1 && n >= 0, "ring rounds: bad shape");
  CollectiveRounds out;
  out.ranks = p;
  out.lockstep_exact = true;
  const int64_t chunk = (n + p - 1) / p;
  if (p == 1 || chunk == 0) return out;
  std::vector<RankFlow> ring;
  for (int r = 0; r < p; ++r) ring.push_back({r, (r + 1) % p});
  out.patterns.push_back(std::move(ring));
  const bool scatter = collective == Collective::kReduceScatter || collective == Collective::kAllReduce;
  const bool gather = collective == Collective::kAllGather || collective == Collective::kAllReduce;
  ST_ASSERT(scatter || gather, "ring rounds: all-reduce, reduce-scatter or all-gather");
  for (int phase = 0; phase < 2; ++phase) {
    if ((phase == 0 && !scatter) || (phase == 1 && !gather)) continue;
    for (int k = 0; k + 1 < p; ++k) {
      Round round;
      round.pattern = 0;
      round.bytes = chunk * element_bytes;
      round.reduce_all = phase == 0;
      out.rounds.push_back(std::move(round));
    }
  }
  return out;
}

}  // namespace scaletwin::plan
