// Recursive halving / doubling with a fold for non-powers of two (Rabenseifner; Thakur, Rabenseifner and Gropp,
// "Optimization of collective communication operations in MPICH", IJHPCA 2005).
//
//   q = 2^⌊log2 p⌋ core ranks, rem = p − q. Fold-in: for j < rem, rank 2j sends its data to 2j+1 (which reduces
//   it) and sits out; core rank j is real rank 2j+1 for j < rem, j + rem otherwise.
//   core reduce-scatter (halving, far first), k = 0..log2 q − 1, mask = q >> (k+1):
//        j exchanges with j ^ mask; each keeps the half of its chunk range that holds chunk j, sends the other
//        half, RecvReduces the kept half        → core rank j holds the sum of chunk j
//   core all-gather (doubling, near first), k = 0..log2 q − 1, mask = 1 << k:
//        j sends its 2^k chunks to j ^ mask and Recvs the partner's 2^k chunks
//   fold-out: 2j+1 sends the result to 2j.
//
//   q = 4: RS  0↔2 1↔3 (halves), 0↔1 2↔3 (quarters);  AG  0↔1 2↔3, 0↔2 1↔3
//
// All-reduce = sequence(fold-in, remap(core RS, core AG), fold-out); the reduce-scatter and all-gather forms fold
// the same way and give each real rank its balanced slice (core chunk j = the slices of the ranks it stands for).
// Steps (rounds): all-reduce 2·log2 q, plus 2 when p is not a power of two (≤ 2⌈log2 p⌉ + 2); RS/AG log2 q (+2).
// Bytes sent per rank: all-reduce 2(q−1)/q · n (power of two: 2(p−1)/p · n); with a fold the core ranks that
// send the result back send n more, the folded ranks n. RS / AG: (q−1)/q · n on the core, plus the fold.
// Preconditions: p ≥ 1, any n ≥ 0.
#include <utility>
#include <vector>

#include "plan/collectives.hpp"
#include "plan/compose.hpp"

namespace scaletwin::plan {

namespace {

struct Fold {
  int q = 1, rem = 0;
  std::vector<int> core;  // core rank j → real rank
  explicit Fold(int p) {
    while (q * 2 <= p) q *= 2;
    rem = p - q;
    for (int j = 0; j < q; ++j) core.push_back(j < rem ? 2 * j + 1 : j + rem);
  }
};

// bounds[j] .. bounds[j+1]: the elements of core chunk j.
Schedule core_reduce_scatter(int q, const std::vector<int64_t>& bounds, int64_t n, int64_t eb) {
  ScheduleBuilder b("halving", q, n, eb);
  std::vector<int> lo(static_cast<size_t>(q), 0), hi(static_cast<size_t>(q), q);
  for (int mask = q / 2; mask >= 1; mask /= 2) {
    for (int j = 0; j < q; ++j) {
      int& l = lo[static_cast<size_t>(j)];
      int& h = hi[static_cast<size_t>(j)];
      const int mid = (l + h) / 2;
      const bool upper = (j & mask) != 0;
      const int send_lo = upper ? l : mid, send_hi = upper ? mid : h;
      const int keep_lo = upper ? mid : l, keep_hi = upper ? h : mid;
      b.send(j, j ^ mask, bounds[send_lo], bounds[send_hi] - bounds[send_lo]);
      b.recv_reduce(j, j ^ mask, bounds[keep_lo], bounds[keep_hi] - bounds[keep_lo]);
      l = keep_lo;
      h = keep_hi;
    }
    b.end_round();
  }
  return b.finish();
}

Schedule core_allgather(int q, const std::vector<int64_t>& bounds, int64_t n, int64_t eb) {
  ScheduleBuilder b("doubling", q, n, eb);
  for (int mask = 1; mask < q; mask *= 2) {
    for (int j = 0; j < q; ++j) {
      const int own = j / mask * mask, other = (j ^ mask) / mask * mask;
      b.send(j, j ^ mask, bounds[own], bounds[own + mask] - bounds[own]);
      b.recv(j, j ^ mask, bounds[other], bounds[other + mask] - bounds[other]);
    }
    b.end_round();
  }
  return b.finish();
}

// Core chunk j = the balanced slices of the real ranks core rank j stands for.
std::vector<int64_t> folded_bounds(const Fold& f, int p, int64_t n) {
  std::vector<int64_t> bounds;
  for (int j = 0; j < f.q; ++j) bounds.push_back(part_offset(n, p, j < f.rem ? 2 * j : j + f.rem));
  bounds.push_back(n);
  return bounds;
}

enum class FoldData { kWhole, kSlice };

// Rank `from` of each folded pair sends (the whole buffer or the slice of the even rank) to `to`.
Schedule fold_step(const Fold& f, int p, int64_t n, int64_t eb, bool in, FoldData data, bool reduce) {
  ScheduleBuilder b(in ? "fold-in" : "fold-out", p, n, eb);
  for (int j = 0; j < f.rem; ++j) {
    const int even = 2 * j, odd = 2 * j + 1;
    const int from = in ? even : odd, to = in ? odd : even;
    const int64_t off = data == FoldData::kWhole ? 0 : part_offset(n, p, even);
    const int64_t len = data == FoldData::kWhole ? n : part_offset(n, p, even + 1) - off;
    b.send(from, to, off, len);
    if (reduce) b.recv_reduce(to, from, off, len);
    else b.recv(to, from, off, len);
  }
  return b.finish();
}

}  // namespace

Schedule halving_doubling_reduce_scatter(int p, int64_t n, int64_t eb) {
  const Fold f(p);
  Schedule core = core_reduce_scatter(f.q, folded_bounds(f, p, n), n, eb);
  Schedule s = sequence(schedules(fold_step(f, p, n, eb, true, FoldData::kWhole, true), remap(std::move(core), f.core, p),
                         fold_step(f, p, n, eb, false, FoldData::kSlice, false)),
                        "halving_doubling reduce-scatter");
  set_data_model(s, Collective::kReduceScatter, InitialData::kOwn, Goal::kReducedSlice);
  return s;
}

Schedule halving_doubling_allgather(int p, int64_t n, int64_t eb) {
  const Fold f(p);
  Schedule core = core_allgather(f.q, folded_bounds(f, p, n), n, eb);
  Schedule s = sequence(schedules(fold_step(f, p, n, eb, true, FoldData::kSlice, false), remap(std::move(core), f.core, p),
                         fold_step(f, p, n, eb, false, FoldData::kWhole, false)),
                        "halving_doubling all-gather");
  set_data_model(s, Collective::kAllGather, InitialData::kOwnSlice, Goal::kGatheredAll);
  return s;
}

Schedule halving_doubling_allreduce(int p, int64_t n, int64_t eb) {
  const Fold f(p);
  std::vector<int64_t> bounds;
  for (int j = 0; j <= f.q; ++j) bounds.push_back(part_offset(n, f.q, j));
  Schedule core =
      sequence(schedules(core_reduce_scatter(f.q, bounds, n, eb), core_allgather(f.q, bounds, n, eb)), "core");
  Schedule s = sequence(schedules(fold_step(f, p, n, eb, true, FoldData::kWhole, true), remap(std::move(core), f.core, p),
                         fold_step(f, p, n, eb, false, FoldData::kWhole, false)),
                        "halving_doubling");
  set_data_model(s, Collective::kAllReduce, InitialData::kOwn, Goal::kReducedAll);
  return s;
}

}  // namespace scaletwin::plan
