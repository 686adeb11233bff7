// Binomial-tree reduce and broadcast (Thakur, Rabenseifner and Gropp 2005, MPICH's short-message algorithms).
//
//   ranks relabelled v = (r − root) mod p;  K = ⌈log2 p⌉
//   reduce, k = 0..K-1, mask = 2^k:  v with v mod 2^(k+1) = 2^k sends its buffer to v − 2^k and is done;
//                                     v with v mod 2^(k+1) = 0 and v + 2^k < p RecvReduces it
//   broadcast, k = K-1..0:            v with v mod 2^(k+1) = 0 and v + 2^k < p sends the buffer to v + 2^k;
//                                     v with v mod 2^(k+1) = 2^k Recvs it from v − 2^k
//
//   p = 8 reduce:  1→0 3→2 5→4 7→6 | 2→0 6→4 | 4→0        (broadcast: the same arrows reversed, in reverse order)
//
// Steps (rounds): ⌈log2 p⌉. Bytes sent per rank: n for every non-root rank in the reduce; in the broadcast,
// n times the number of children (the root: ⌈log2 p⌉·n).
// Preconditions: p ≥ 1, 0 ≤ root < p, any n ≥ 0. Data model: reduce: everyone contributes, the root must hold the
// sum; broadcast: the root holds the whole buffer (kOwnSlice over [0, n)), everyone must hold exactly it.
#include "plan/collectives.hpp"
#include "plan/compose.hpp"

namespace scaletwin::plan {

namespace {
int ceil_log2(int p) {
  int k = 0;
  while ((1 << k) < p) ++k;
  return k;
}
}  // namespace

Schedule binomial_reduce(int p, int64_t n, int64_t element_bytes, int root) {
  ScheduleBuilder b("binomial reduce", p, n, element_bytes);
  auto real = [&](int v) { return (v + root) % p; };
  for (int k = 0; k < ceil_log2(p); ++k) {
    const int mask = 1 << k;
    for (int v = 0; v < p; ++v) {
      if (v % (2 * mask) == mask) b.send(real(v), real(v - mask), 0, n);
      if (v % (2 * mask) == 0 && v + mask < p) b.recv_reduce(real(v), real(v + mask), 0, n);
    }
    b.end_round();
  }
  Schedule s = b.finish();
  set_data_model(s, Collective::kReduce, InitialData::kOwn, Goal::kAny);
  s.goal[static_cast<size_t>(root)] = Goal::kReducedAll;
  return s;
}

Schedule binomial_broadcast(int p, int64_t n, int64_t element_bytes, int root) {
  ScheduleBuilder b("binomial broadcast", p, n, element_bytes);
  auto real = [&](int v) { return (v + root) % p; };
  for (int k = ceil_log2(p) - 1; k >= 0; --k) {
    const int mask = 1 << k;
    for (int v = 0; v < p; ++v) {
      if (v % (2 * mask) == 0 && v + mask < p) b.send(real(v), real(v + mask), 0, n);
      if (v % (2 * mask) == mask) b.recv(real(v), real(v - mask), 0, n);
    }
    b.end_round();
  }
  Schedule s = b.finish();
  set_data_model(s, Collective::kBroadcast, InitialData::kNone, Goal::kGatheredAll);
  s.initial[static_cast<size_t>(root)] = InitialData::kOwnSlice;
  s.slice_offset.assign(static_cast<size_t>(p), 0);
  s.slice_length.assign(static_cast<size_t>(p), 0);
  s.slice_length[static_cast<size_t>(root)] = n;
  return s;
}

}  // namespace scaletwin::plan
