// The cost oracle's dataflow walk and the closed forms (see oracle.hpp for the semantics).
#include "plan/oracle.hpp"

#include <algorithm>
#include <cmath>
#include <deque>

#include "core/error.hpp"

namespace scaletwin::plan {

UniformCostModel::UniformCostModel(double latency_s, double bandwidth_Bps, double reduce_Bps, double copy_Bps)
    : latency_s_(latency_s), bandwidth_Bps_(bandwidth_Bps), reduce_Bps_(reduce_Bps), copy_Bps_(copy_Bps) {
  ST_ASSERT(latency_s >= 0 && bandwidth_Bps > 0 && reduce_Bps > 0 && copy_Bps > 0, "bad uniform cost model");
}

namespace {

double per_rate(double bytes, double rate) { return std::isinf(rate) ? 0.0 : bytes / rate; }

struct Id {
  int rank, step;
};

// For every step, its matching step on the peer (FIFO per (src, dst, channel)); {-1, -1} for copies.
std::vector<std::vector<Id>> match_steps(const Schedule& s) {
  struct Entry {
    uint64_t key;
    Id id;
  };
  std::vector<Entry> sends, recvs;
  const auto key = [&](int src, int dst, int ch) {
    return (static_cast<uint64_t>(src) * static_cast<uint64_t>(s.ranks) + static_cast<uint64_t>(dst)) *
               static_cast<uint64_t>(s.channels) + static_cast<uint64_t>(ch);
  };
  std::vector<std::vector<Id>> match(static_cast<size_t>(s.ranks));
  for (int r = 0; r < s.ranks; ++r) {
    const auto& steps = s.programs[static_cast<size_t>(r)].steps;
    match[static_cast<size_t>(r)].assign(steps.size(), Id{-1, -1});
    for (int i = 0; i < static_cast<int>(steps.size()); ++i) {
      const Step& st = steps[static_cast<size_t>(i)];
      if (st.op == OpKind::kSend) sends.push_back({key(r, st.peer, st.channel), {r, i}});
      if (st.op == OpKind::kRecv || st.op == OpKind::kRecvReduce) recvs.push_back({key(st.peer, r, st.channel), {r, i}});
    }
  }
  const auto by_key = [](const Entry& a, const Entry& b) { return a.key < b.key; };
  std::stable_sort(sends.begin(), sends.end(), by_key);
  std::stable_sort(recvs.begin(), recvs.end(), by_key);
  ST_ASSERT(sends.size() == recvs.size(), "oracle: sends and receives do not pair up (verify the schedule first)");
  for (size_t i = 0; i < sends.size(); ++i) {
    ST_ASSERT(sends[i].key == recvs[i].key, "oracle: sends and receives do not pair up (verify the schedule first)");
    match[static_cast<size_t>(sends[i].id.rank)][static_cast<size_t>(sends[i].id.step)] = recvs[i].id;
    match[static_cast<size_t>(recvs[i].id.rank)][static_cast<size_t>(recvs[i].id.step)] = sends[i].id;
  }
  return match;
}

}  // namespace

OracleResult run_oracle(const Schedule& s, const CostModel& cost) {
  const auto match = match_steps(s);
  OracleResult out;
  out.rank_end_s.assign(static_cast<size_t>(s.ranks), 0.0);
  std::vector<std::vector<double>> ready(static_cast<size_t>(s.ranks));
  std::vector<std::vector<int>> pending(static_cast<size_t>(s.ranks));
  std::vector<std::vector<std::vector<int>>> dependents(static_cast<size_t>(s.ranks));
  std::vector<std::vector<char>> posted(static_cast<size_t>(s.ranks));
  std::vector<std::vector<int>> level(static_cast<size_t>(s.ranks));  // deepest round among the deps
  out.step_end_s.resize(static_cast<size_t>(s.ranks));
  std::deque<Id> queue;
  size_t total = 0;
  for (int r = 0; r < s.ranks; ++r) {
    const auto& steps = s.programs[static_cast<size_t>(r)].steps;
    const auto ri = static_cast<size_t>(r);
    ready[ri].assign(steps.size(), 0.0);
    pending[ri].assign(steps.size(), 0);
    dependents[ri].resize(steps.size());
    posted[ri].assign(steps.size(), 0);
    level[ri].assign(steps.size(), 0);
    out.step_end_s[ri].assign(steps.size(), 0.0);
    total += steps.size();
    for (size_t i = 0; i < steps.size(); ++i) {
      pending[ri][i] = static_cast<int>(steps[i].deps.size());
      for (int d : steps[i].deps) dependents[ri][static_cast<size_t>(d)].push_back(static_cast<int>(i));
      if (steps[i].deps.empty()) queue.push_back({r, static_cast<int>(i)});
    }
  }
  size_t completed = 0;
  const auto complete = [&](Id id, double end, int round) {
    const auto ri = static_cast<size_t>(id.rank);
    out.rounds = std::max(out.rounds, round);
    out.step_end_s[ri][static_cast<size_t>(id.step)] = end;
    out.rank_end_s[ri] = std::max(out.rank_end_s[ri], end);
    out.time_s = std::max(out.time_s, end);
    ++completed;
    for (int d : dependents[ri][static_cast<size_t>(id.step)]) {
      ready[ri][static_cast<size_t>(d)] = std::max(ready[ri][static_cast<size_t>(d)], end);
      level[ri][static_cast<size_t>(d)] = std::max(level[ri][static_cast<size_t>(d)], round);
      if (--pending[ri][static_cast<size_t>(d)] == 0) queue.push_back({id.rank, d});
    }
  };
  while (!queue.empty()) {
    const Id id = queue.front();
    queue.pop_front();
    const Step& st = s.programs[static_cast<size_t>(id.rank)].steps[static_cast<size_t>(id.step)];
    const double at = ready[static_cast<size_t>(id.rank)][static_cast<size_t>(id.step)];
    const double bytes = static_cast<double>(st.length * s.element_bytes);
    if (st.op == OpKind::kCopy) {
      const int round = level[static_cast<size_t>(id.rank)][static_cast<size_t>(id.step)];
      complete(id, at + per_rate(bytes, cost.copy_Bps(id.rank)), round);
      continue;
    }
    posted[static_cast<size_t>(id.rank)][static_cast<size_t>(id.step)] = 1;
    const Id m = match[static_cast<size_t>(id.rank)][static_cast<size_t>(id.step)];
    if (!posted[static_cast<size_t>(m.rank)][static_cast<size_t>(m.step)]) continue;
    const Id send = st.op == OpKind::kSend ? id : m, recv = st.op == OpKind::kSend ? m : id;
    const OpKind recv_op = s.programs[static_cast<size_t>(recv.rank)].steps[static_cast<size_t>(recv.step)].op;
    const double start = std::max(at, ready[static_cast<size_t>(m.rank)][static_cast<size_t>(m.step)]);
    const double end = start + cost.latency_s(send.rank, recv.rank) +
                       per_rate(bytes, cost.bandwidth_Bps(send.rank, recv.rank));
    const int round = 1 + std::max(level[static_cast<size_t>(id.rank)][static_cast<size_t>(id.step)],
                                   level[static_cast<size_t>(m.rank)][static_cast<size_t>(m.step)]);
    complete(send, end, round);
    complete(recv, recv_op == OpKind::kRecvReduce ? end + per_rate(bytes, cost.reduce_Bps(recv.rank)) : end, round);
  }
  ST_ASSERT(completed == total, "oracle: the schedule deadlocks (verify the schedule first)");
  return out;
}

namespace {
double log2_ceil(int p) {
  int k = 0;
  while ((1 << k) < p) ++k;
  return k;
}
}  // namespace

double closed_form_ring_allreduce(int p, double n, const AlphaBetaGamma& c) {
  return 2.0 * (p - 1) * c.alpha_s + 2.0 * (p - 1) / p * n * c.beta_s_per_byte + (p - 1.0) / p * n * c.gamma_s_per_byte;
}

double closed_form_ring_reduce_scatter(int p, double n, const AlphaBetaGamma& c) {
  return (p - 1) * c.alpha_s + (p - 1.0) / p * n * (c.beta_s_per_byte + c.gamma_s_per_byte);
}

double closed_form_ring_allgather(int p, double n, const AlphaBetaGamma& c) {
  return (p - 1) * c.alpha_s + (p - 1.0) / p * n * c.beta_s_per_byte;
}

double closed_form_interval_pairing_allreduce(int p, double n, const AlphaBetaGamma& c) {
  return 2.0 * log2_ceil(p) * c.alpha_s + 2.0 * (p - 1) / p * n * c.beta_s_per_byte +
         (p - 1.0) / p * n * c.gamma_s_per_byte;
}

double closed_form_halving_doubling_allreduce(int p, double n, const AlphaBetaGamma& c) {
  int q = 1;
  while (q * 2 <= p) q *= 2;
  double t = 2.0 * log2_ceil(q) * c.alpha_s + 2.0 * (q - 1) / q * n * c.beta_s_per_byte +
             (q - 1.0) / q * n * c.gamma_s_per_byte;
  if (q != p) t += 2 * c.alpha_s + 2 * n * c.beta_s_per_byte + n * c.gamma_s_per_byte;
  return t;
}

double closed_form_binomial_reduce(int p, double n, const AlphaBetaGamma& c) {
  return log2_ceil(p) * (c.alpha_s + n * (c.beta_s_per_byte + c.gamma_s_per_byte));
}

double closed_form_binomial_broadcast(int p, double n, const AlphaBetaGamma& c) {
  return log2_ceil(p) * (c.alpha_s + n * c.beta_s_per_byte);
}

double closed_form_direct_allreduce(int p, double n, const AlphaBetaGamma& c) {
  if (p == 1) return 0.0;
  return n * c.copy_s_per_byte + c.alpha_s + n * (c.beta_s_per_byte + c.gamma_s_per_byte);
}

double closed_form_ps_push_pull(int servers, double n, const AlphaBetaGamma& c) {
  const double slice = n / servers;
  return 2 * c.alpha_s + slice * (2 * c.beta_s_per_byte + c.gamma_s_per_byte);
}

}  // namespace scaletwin::plan
