// Rounds of a collective for the fast mode (see fast_rounds.hpp): level extraction from a materialized schedule,
// and the symbolic rounds of the ring generators.
#include "sim/fast_rounds.hpp"

#include <algorithm>
#include <deque>
#include <map>

#include "core/error.hpp"
#include "sim/interpreter.hpp"

namespace scaletwin::sim::fast {

namespace {

struct StepRef {
  int rank;
  int step;
};

// The level of every step (see the header): transfers resolve when both sides' deps are complete.
std::vector<std::vector<int>> step_levels(const plan::Schedule& s, const ScheduleIndex& index,
                                          std::vector<std::vector<StepRef>>& recv_of_send) {
  const auto ranks = static_cast<size_t>(s.ranks);
  std::vector<std::vector<int>> level(ranks), pre(ranks), remaining(ranks);
  std::vector<std::vector<char>> posted(ranks);
  recv_of_send.assign(ranks, {});
  std::deque<StepRef> ready;
  for (size_t r = 0; r < ranks; ++r) {
    const auto& steps = s.programs[r].steps;
    level[r].assign(steps.size(), 0);
    pre[r].assign(steps.size(), 0);
    posted[r].assign(steps.size(), 0);
    remaining[r].resize(steps.size());
    recv_of_send[r].assign(steps.size(), StepRef{-1, -1});
    for (size_t i = 0; i < steps.size(); ++i) {
      remaining[r][i] = static_cast<int>(steps[i].deps.size());
      if (remaining[r][i] == 0) ready.push_back({static_cast<int>(r), static_cast<int>(i)});
    }
  }
  for (size_t r = 0; r < ranks; ++r)
    for (size_t i = 0; i < s.programs[r].steps.size(); ++i) {
      const int send = index.send_step_of_recv[r][i];
      if (send >= 0) {
        const int peer = s.programs[r].steps[i].peer;
        recv_of_send[static_cast<size_t>(peer)][static_cast<size_t>(send)] = {static_cast<int>(r), static_cast<int>(i)};
      }
    }
  auto complete = [&](StepRef x, int lvl) {
    level[static_cast<size_t>(x.rank)][static_cast<size_t>(x.step)] = lvl;
    for (int d : index.dependents[static_cast<size_t>(x.rank)][static_cast<size_t>(x.step)]) {
      int& p = pre[static_cast<size_t>(x.rank)][static_cast<size_t>(d)];
      p = std::max(p, lvl);
      if (--remaining[static_cast<size_t>(x.rank)][static_cast<size_t>(d)] == 0) ready.push_back({x.rank, d});
    }
  };
  size_t resolved = 0, total = s.total_steps();
  while (!ready.empty()) {
    const StepRef x = ready.front();
    ready.pop_front();
    const auto r = static_cast<size_t>(x.rank), i = static_cast<size_t>(x.step);
    const plan::Step& st = s.programs[r].steps[i];
    if (st.op == plan::OpKind::kCopy) {
      complete(x, pre[r][i] + 1);
      ++resolved;
      continue;
    }
    const StepRef other = st.op == plan::OpKind::kSend
                              ? recv_of_send[r][i]
                              : StepRef{st.peer, index.send_step_of_recv[r][i]};
    ST_ASSERT(other.rank >= 0 && other.step >= 0, "fast rounds: a transfer without its partner");
    posted[r][i] = 1;
    if (!posted[static_cast<size_t>(other.rank)][static_cast<size_t>(other.step)]) continue;
    const int lvl = 1 + std::max(pre[r][i], pre[static_cast<size_t>(other.rank)][static_cast<size_t>(other.step)]);
    complete(x, lvl);
    complete(other, lvl);
    resolved += 2;
  }
  ST_ASSERT(resolved == total, "fast rounds: the schedule deadlocks (" + s.name + ")");
  return level;
}

}  // namespace

CollectiveRounds rounds_of(const plan::Schedule& s) {
  const ScheduleIndex index = index_schedule(s);
  std::vector<std::vector<StepRef>> recv_of_send;
  const std::vector<std::vector<int>> level = step_levels(s, index, recv_of_send);
  int levels = 0;
  for (const auto& l : level)
    for (int x : l) levels = std::max(levels, x);
  struct Flow {
    int src, dst;
    int64_t bytes;
    bool reduce;
  };
  std::vector<std::vector<Flow>> flows(static_cast<size_t>(levels) + 1);
  std::vector<std::vector<std::pair<int, int64_t>>> copies(static_cast<size_t>(levels) + 1);
  for (size_t r = 0; r < static_cast<size_t>(s.ranks); ++r) {
    const auto& steps = s.programs[r].steps;
    for (size_t i = 0; i < steps.size(); ++i) {
      const auto lvl = static_cast<size_t>(level[r][i]);
      const int64_t bytes = steps[i].length * s.element_bytes;
      if (steps[i].op == plan::OpKind::kCopy) copies[lvl].push_back({static_cast<int>(r), bytes});
      if (steps[i].op != plan::OpKind::kSend) continue;
      const StepRef v = recv_of_send[r][i];
      const bool reduce = s.programs[static_cast<size_t>(v.rank)].steps[static_cast<size_t>(v.step)].op ==
                          plan::OpKind::kRecvReduce;
      flows[lvl].push_back({static_cast<int>(r), v.rank, bytes, reduce});
    }
  }
  // Messages between the same pair in one round travel one route: one flow of their total bytes moves them in
  // the same time as the messages sharing it (the smaller one finishing first and leaving its share to the other).
  for (auto& level_flows : flows) {
    std::map<RankFlow, size_t> seen;
    std::vector<Flow> merged;
    for (const Flow& f : level_flows) {
      auto [it, fresh] = seen.emplace(RankFlow{f.src, f.dst}, merged.size());
      if (fresh) {
        merged.push_back(f);
      } else {
        merged[it->second].bytes += f.bytes;
        merged[it->second].reduce = merged[it->second].reduce || f.reduce;
      }
    }
    level_flows = std::move(merged);
  }
  CollectiveRounds out;
  out.ranks = s.ranks;
  std::map<std::vector<RankFlow>, int> pattern_id;
  for (size_t lvl = 1; lvl < flows.size(); ++lvl) {
    if (flows[lvl].empty() && copies[lvl].empty()) continue;
    Round round;
    round.copies = std::move(copies[lvl]);
    if (!flows[lvl].empty()) {
      std::vector<RankFlow> pairs;
      bool uniform = true, all_reduce = true, any_reduce = false;
      for (const Flow& f : flows[lvl]) {
        pairs.push_back({f.src, f.dst});
        uniform = uniform && f.bytes == flows[lvl][0].bytes;
        all_reduce = all_reduce && f.reduce;
        any_reduce = any_reduce || f.reduce;
      }
      auto [it, fresh] = pattern_id.emplace(pairs, static_cast<int>(out.patterns.size()));
      if (fresh) out.patterns.push_back(std::move(pairs));
      round.pattern = it->second;
      round.bytes = flows[lvl][0].bytes;
      round.reduce_all = all_reduce;
      for (const Flow& f : flows[lvl]) {
        if (!uniform) round.flow_bytes.push_back(f.bytes);
        if (!all_reduce && any_reduce) round.reduce.push_back(f.reduce ? 1 : 0);
      }
    }
    out.rounds.push_back(std::move(round));
  }
  return out;
}

CollectiveRounds ring_rounds(plan::Collective collective, int p, int64_t n, int64_t element_bytes) {
  ST_ASSERT(p >= 1 && n >= 0, "ring rounds: bad shape");
  CollectiveRounds out;
  out.ranks = p;
  const int64_t chunk = (n + p - 1) / p;
  if (p == 1 || chunk == 0) return out;
  std::vector<RankFlow> ring;
  for (int r = 0; r < p; ++r) ring.push_back({r, (r + 1) % p});
  out.patterns.push_back(std::move(ring));
  const bool scatter = collective == plan::Collective::kReduceScatter || collective == plan::Collective::kAllReduce;
  const bool gather = collective == plan::Collective::kAllGather || collective == plan::Collective::kAllReduce;
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

}  // namespace scaletwin::sim::fast
