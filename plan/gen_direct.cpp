// Direct all-reduce, reduce-scatter and all-gather: everyone talks to everyone in one step.
//
//   all-reduce (the spec's `direct`: every rank sends its whole gradient to every other rank):
//     rank r: Copy [0, n) → scratch [n, 2n)  (a pristine copy of its own contribution)
//             then, all at once: Send scratch to every q ≠ r;  RecvReduce [0, n) from every q ≠ r
//   reduce-scatter: rank r sends chunk q to every q ≠ r and RecvReduces chunk r from every q ≠ r
//   all-gather:     rank r sends chunk r to every q ≠ r and Recvs chunk q from every q ≠ r
//
//   p = 3:  0 ⇄ 1, 0 ⇄ 2, 1 ⇄ 2, all in one step
//
// Steps (rounds): 1. Bytes sent per rank: all-reduce (p−1)·n, reduce-scatter and all-gather (p−1)/p · n up to
// chunk rounding. The all-reduce needs n scratch elements per rank (Schedule::scratch_elements): received data
// is reduced into the buffer while the rank's own contribution is still being sent.
// Preconditions: p ≥ 1, any n ≥ 0. Reference: the baseline of Thakur, Rabenseifner and Gropp 2005.
//
// Symbolic rounds of the all-reduce (direct_allreduce_rounds, registered): equal to rounds_of(direct_allreduce)
// without its p · 2(p−1) steps: a round of copies (every rank copies n elements to its scratch), then one round of
// p(p−1) flows r → q (q ≠ r, r ascending then q) of n elements, every receiver reducing.
#include "core/error.hpp"
#include "plan/collectives.hpp"
#include "plan/compose.hpp"

namespace scaletwin::plan {

Schedule direct_allreduce(int p, int64_t n, int64_t element_bytes) {
  ScheduleBuilder b("direct", p, n, element_bytes);
  b.set_scratch(p > 1 ? n : 0);
  if (p > 1) {
    for (int r = 0; r < p; ++r) b.copy(r, 0, n, n);
    b.end_round();
    for (int r = 0; r < p; ++r)
      for (int q = 0; q < p; ++q)
        if (q != r) {
          b.send(r, q, n, n);
          b.recv_reduce(r, q, 0, n);
        }
  }
  Schedule s = b.finish();
  set_data_model(s, Collective::kAllReduce, InitialData::kOwn, Goal::kReducedAll);
  return s;
}

Schedule direct_reduce_scatter(int p, int64_t n, int64_t element_bytes) {
  ScheduleBuilder b("direct reduce-scatter", p, n, element_bytes);
  auto off = [&](int c) { return part_offset(n, p, c); };
  for (int r = 0; r < p; ++r)
    for (int q = 0; q < p; ++q)
      if (q != r) {
        b.send(r, q, off(q), off(q + 1) - off(q));
        b.recv_reduce(r, q, off(r), off(r + 1) - off(r));
      }
  Schedule s = b.finish();
  set_data_model(s, Collective::kReduceScatter, InitialData::kOwn, Goal::kReducedSlice);
  return s;
}

Schedule direct_allgather(int p, int64_t n, int64_t element_bytes) {
  ScheduleBuilder b("direct all-gather", p, n, element_bytes);
  auto off = [&](int c) { return part_offset(n, p, c); };
  for (int r = 0; r < p; ++r)
    for (int q = 0; q < p; ++q)
      if (q != r) {
        b.send(r, q, off(r), off(r + 1) - off(r));
        b.recv(r, q, off(q), off(q + 1) - off(q));
      }
  Schedule s = b.finish();
  set_data_model(s, Collective::kAllGather, InitialData::kOwnSlice, Goal::kGatheredAll);
  return s;
}

CollectiveRounds direct_allreduce_rounds(int p, int64_t n, int64_t element_bytes) {
  ST_ASSERT(p >= 1 && n >= 0, "direct rounds: bad shape");
  CollectiveRounds out;
  out.ranks = p;
  if (p == 1) return out;
  Round copies;
  for (int r = 0; r < p; ++r) copies.copies.push_back({r, n * element_bytes});
  out.rounds.push_back(std::move(copies));
  std::vector<RankFlow> all_pairs;
  all_pairs.reserve(static_cast<size_t>(p) * static_cast<size_t>(p - 1));
  for (int r = 0; r < p; ++r)
    for (int q = 0; q < p; ++q)
      if (q != r) all_pairs.push_back({r, q});
  out.patterns.push_back(std::move(all_pairs));
  Round exchange;
  exchange.pattern = 0;
  exchange.bytes = n * element_bytes;
  exchange.reduce_all = true;
  out.rounds.push_back(std::move(exchange));
  return out;
}

}  // namespace scaletwin::plan
