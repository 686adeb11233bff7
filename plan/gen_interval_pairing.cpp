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
//
// Symbolic rounds (interval_pairing_rounds, registered for the three): equal to rounds_of(schedule) without its
// 2p⌈log2 p⌉ steps. Round k of a phase is the pattern r → r ± 2^k (every rank, in rank order) with each flow carrying
// its window of m_k chunks (the two pieces of a wrapped window are one flow, as rounds_of merges messages between the
// same pair in one round); the reduce-scatter's receivers reduce. Chunks differ by at most one element, so a round's
// flows differ by a few elements: a byte table where they do. With fewer elements than ranks (empty chunks) the
// rounds are extracted from the schedule.
#include <algorithm>
#include <map>

#include "core/error.hpp"
#include "plan/collectives.hpp"
#include "plan/compose.hpp"
#include "plan/rounds.hpp"

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

CollectiveRounds interval_pairing_rounds(Collective collective, int p, int64_t n, int64_t element_bytes) {
  const bool scatter = collective == Collective::kReduceScatter || collective == Collective::kAllReduce;
  const bool gather = collective == Collective::kAllGather || collective == Collective::kAllReduce;
  ST_ASSERT(scatter || gather, "interval pairing rounds: all-reduce, reduce-scatter or all-gather");
  // Fewer elements than ranks: empty chunks drop transfers, which moves later ones to earlier levels; such tiny
  // collectives are extracted from their schedule (cheap at that size).
  if (n < p) return rounds_of(make_collective(collective, Algorithm::kIntervalPairing, p, n, element_bytes));
  CollectiveRounds out;
  out.ranks = p;
  std::map<std::vector<RankFlow>, int> pattern_index;  // a pattern met again (p = 5: r → r+4 is r → r−1) is shared
  // One round: each rank sends the cyclic window of `count` chunks starting at chunk r + shift to r + step.
  const auto add_round = [&](int step, int64_t shift, int count, bool reduce) {
    std::vector<RankFlow> flows;
    std::vector<int64_t> bytes;
    for (int r = 0; r < p; ++r) {
      const int first = mod(r + shift, p);
      const int64_t elements = first + count <= p
                                   ? part_offset(n, p, first + count) - part_offset(n, p, first)
                                   : (n - part_offset(n, p, first)) + part_offset(n, p, first + count - p);
      if (elements == 0) continue;
      flows.emplace_back(r, mod(int64_t{r} + step, p));
      bytes.push_back(elements * element_bytes);
    }
    if (flows.empty()) return;
    Round round;
    const auto [it, added] = pattern_index.emplace(flows, static_cast<int>(out.patterns.size()));
    if (added) out.patterns.push_back(flows);
    round.pattern = it->second;
    if (std::all_of(bytes.begin(), bytes.end(), [&](int64_t b) { return b == bytes.front(); })) {
      round.bytes = bytes.front();
    } else {
      round.flow_bytes = static_cast<int>(out.byte_tables.size());
      out.byte_tables.push_back(std::move(bytes));
    }
    round.reduce_all = reduce;
    out.rounds.push_back(std::move(round));
  };
  const int steps = ceil_log2(p);
  if (scatter)
    for (int k = steps - 1; k >= 0; --k) {
      const int interval = 1 << k, m = std::min(interval, p - interval);
      add_round(-interval, -interval - m + 1, m, true);
    }
  if (gather)
    for (int k = 0; k < steps; ++k) {
      const int interval = 1 << k, m = std::min(interval, p - interval);
      add_round(interval, -m + 1, m, false);
    }
  return out;
}

Schedule interval_pairing_allreduce(int p, int64_t n, int64_t element_bytes) {
  Schedule s = sequence(schedules(interval_pairing_reduce_scatter(p, n, element_bytes),
                         interval_pairing_allgather(p, n, element_bytes)),
                        "interval_pairing");
  set_data_model(s, Collective::kAllReduce, InitialData::kOwn, Goal::kReducedAll);
  return s;
}

}  // namespace scaletwin::plan
