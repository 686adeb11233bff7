// Interval pairing (HAN et al. 2023): the improved ring all-reduce in O(log p) steps, for any p.
//
// In step k rank r works with the ranks at interval 2^k: it sends to r ± 2^k and receives from r ∓ 2^k (mod p).
// The reduce-scatter halves the data each step, the all-gather doubles it. For arbitrary p (not only powers of
// two) we use the cyclic (Bruck-style) form instead of folding extra ranks in and out: rank r's window of chunks
// is the cyclic run ending at chunk r, so no rank idles and no extra step is needed.
//
//   K = ⌈log2 p⌉, m_k = min(2^k, p − 2^k) chunks moved in step k (Σ_k m_k = p − 1)
//   all-gather (doubling), k = 0..K-1:     r sends chunks [r−m_k+1 .. r] to r+2^k,
//                                           r Recvs chunks [r−2^k−m_k+1 .. r−2^k] from r−2^k
//        after step k, r holds chunks [r − min(2^(k+1), p) + 1 .. r]
//   reduce-scatter (halving) = the all-gather reversed in time and direction, k = K-1..0:
//                                           r sends chunks [r−2^k−m_k+1 .. r−2^k] to r−2^k,
//                                           r RecvReduces chunks [r−m_k+1 .. r] from r+2^k
//        every rank's partial sum of chunk c flows once to its parent in the all-gather's tree of c, after its
//        children's partials arrived (they arrive in earlier steps), so rank r ends with the sum of chunk r.
//   all-reduce = sequence(reduce-scatter, all-gather)
//
//   p = 5, all-gather: k=0 (interval 1) 1 chunk, k=1 (interval 2) 2 chunks, k=2 (interval 4) 1 chunk
//
// Steps (rounds): ⌈log2 p⌉ per phase, 2⌈log2 p⌉ for the all-reduce.
// Bytes sent per rank: (p−1) chunks per phase = (p−1)/p · n up to chunk rounding; all-reduce 2(p−1)/p · n.
// A window that wraps past chunk p−1 is sent as two messages in the same step (same peer, same round).
// Preconditions: p ≥ 1, any n ≥ 0.
#include <algorithm>

#include "plan/collectives.hpp"
#include "plan/compose.hpp"

namespace scaletwin::plan {

namespace {

int ceil_log2(int p) {
  int k = 0;
  while ((int64_t{1} << k) < p) ++k;
  return k;
}

int mod(int64_t a, int p) { return static_cast<int>(((a % p) + p) % p); }

enum class Action { kSend, kRecv, kRecvReduce };

// Adds the step(s) moving the cyclic chunk run [first, first + count) between rank and peer.
void move_chunks(ScheduleBuilder& b, Action action, int rank, int peer, int64_t n, int p, int64_t first, int count) {
  const int s = mod(first, p);
  auto piece = [&](int64_t from, int64_t to) {
    if (action == Action::kSend) b.send(rank, peer, from, to - from);
    if (action == Action::kRecv) b.recv(rank, peer, from, to - from);
    if (action == Action::kRecvReduce) b.recv_reduce(rank, peer, from, to - from);
  };
  if (s + count <= p) {
    piece(part_offset(n, p, s), part_offset(n, p, s + count));
  } else {
    piece(part_offset(n, p, s), n);
    piece(0, part_offset(n, p, s + count - p));
  }
}

}  // namespace

Schedule interval_pairing_allgather(int p, int64_t n, int64_t element_bytes) {
  ScheduleBuilder b("interval_pairing all-gather", p, n, element_bytes);
  const int steps = ceil_log2(p);
  for (int k = 0; k < steps; ++k) {
    const int interval = 1 << k;
    const int m = std::min(interval, p - interval);
    for (int r = 0; r < p; ++r) {
      move_chunks(b, Action::kSend, r, mod(r + interval, p), n, p, r - m + 1, m);
      move_chunks(b, Action::kRecv, r, mod(r - interval, p), n, p, r - interval - m + 1, m);
    }
    b.end_round();
  }
  Schedule s = b.finish();
  set_data_model(s, Collective::kAllGather, InitialData::kOwnSlice, Goal::kGatheredAll);
  return s;
}

Schedule interval_pairing_reduce_scatter(int p, int64_t n, int64_t element_bytes) {
  ScheduleBuilder b("interval_pairing reduce-scatter", p, n, element_bytes);
  for (int k = ceil_log2(p) - 1; k >= 0; --k) {
    const int interval = 1 << k;
    const int m = std::min(interval, p - interval);
    for (int r = 0; r < p; ++r) {
      move_chunks(b, Action::kSend, r, mod(r - interval, p), n, p, r - interval - m + 1, m);
      move_chunks(b, Action::kRecvReduce, r, mod(r + interval, p), n, p, r - m + 1, m);
    }
    b.end_round();
  }
  Schedule s = b.finish();
  set_data_model(s, Collective::kReduceScatter, InitialData::kOwn, Goal::kReducedSlice);
  return s;
}

Schedule interval_pairing_allreduce(int p, int64_t n, int64_t element_bytes) {
  Schedule s = sequence(schedules(interval_pairing_reduce_scatter(p, n, element_bytes),
                         interval_pairing_allgather(p, n, element_bytes)),
                        "interval_pairing");
  set_data_model(s, Collective::kAllReduce, InitialData::kOwn, Goal::kReducedAll);
  return s;
}

}  // namespace scaletwin::plan
