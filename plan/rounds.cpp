// Rounds of a collective (see rounds.hpp): level extraction from a materialized schedule, the writer that interns
// patterns and tables, and the compositions.
#include "plan/rounds.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <map>
#include <unordered_map>
#include <tuple>

#include "core/error.hpp"
#include "core/pair_key.hpp"

namespace scaletwin::plan {

namespace {

struct StepRef {
  int rank;
  int step;
};

// The level of every step (see the header): transfers resolve when both sides' deps are complete.
std::vector<std::vector<int>> step_levels(const Schedule& s, const ScheduleIndex& index,
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
    const Step& st = s.programs[r].steps[i];
    if (st.op == OpKind::kCopy) {
      complete(x, pre[r][i] + 1);
      ++resolved;
      continue;
    }
    const StepRef other = st.op == OpKind::kSend
                              ? recv_of_send[r][i]
                              : StepRef{st.peer, index.send_step_of_recv[r][i]};
    ST_ASSERT(other.rank >= 0 && other.step >= 0, "rounds: a transfer without its partner");
    posted[r][i] = 1;
    if (!posted[static_cast<size_t>(other.rank)][static_cast<size_t>(other.step)]) continue;
    const int lvl = 1 + std::max(pre[r][i], pre[static_cast<size_t>(other.rank)][static_cast<size_t>(other.step)]);
    complete(x, lvl);
    complete(other, lvl);
    resolved += 2;
  }
  ST_ASSERT(resolved == total, "rounds: the schedule deadlocks (" + s.name + ")");
  return level;
}

using Flow = LevelFlow;  // (src, dst, bytes, reduce)

// Builds a CollectiveRounds: interns patterns and tables, so that rounds of the same flows share them.
class RoundsWriter {
 public:
  explicit RoundsWriter(int ranks) { out_.ranks = ranks; }

  // The round of `flows` (those between the same pair merged into one flow of their total bytes: they travel one
  // route and move in the same time as the messages sharing it) and `copies`, without appending it.
  Round make(std::vector<Flow> flows, std::vector<std::pair<int, int64_t>> copies) {
    std::unordered_map<uint64_t, size_t> seen;  // (src, dst) → its flow in `merged`
    seen.reserve(flows.size());
    std::vector<Flow> merged;
    merged.reserve(flows.size());
    for (const Flow& f : flows) {
      auto [it, fresh] = seen.emplace(pair_key(f.src, f.dst), merged.size());
      if (fresh) {
        merged.push_back(f);
      } else {
        merged[it->second].bytes += f.bytes;
        merged[it->second].reduce = merged[it->second].reduce || f.reduce;
      }
    }
    Round round;
    round.copies = std::move(copies);
    if (merged.empty()) return round;
    std::vector<RankFlow> pairs;
    std::vector<int64_t> bytes;
    std::vector<char> reduce;
    bool uniform = true, all_reduce = true, any_reduce = false;
    for (const Flow& f : merged) {
      pairs.push_back({f.src, f.dst});
      bytes.push_back(f.bytes);
      reduce.push_back(f.reduce ? 1 : 0);
      uniform = uniform && f.bytes == merged[0].bytes;
      all_reduce = all_reduce && f.reduce;
      any_reduce = any_reduce || f.reduce;
    }
    round.pattern = intern(patterns_, out_.patterns, std::move(pairs));
    round.bytes = merged[0].bytes;
    if (!uniform) round.flow_bytes = intern(bytes_, out_.byte_tables, std::move(bytes));
    round.reduce_all = all_reduce;
    if (!all_reduce && any_reduce) round.reduce = intern(reduces_, out_.reduce_tables, std::move(reduce));
    return round;
  }
  void append(Round round) { out_.rounds.push_back(std::move(round)); }
  // The indices here of the patterns and tables of one source (-1: not interned yet).
  struct Adopted {
    std::vector<int> pattern, bytes, reduce;
    explicit Adopted(const CollectiveRounds& from)
        : pattern(from.patterns.size(), -1), bytes(from.byte_tables.size(), -1), reduce(from.reduce_tables.size(), -1) {}
  };
  // Round r of `from`, its pattern and tables interned here (each once per source), ranks unchanged.
  Round adopt(const CollectiveRounds& from, Adopted& seen, const Round& r) {
    Round round = r;
    auto once = [](int& slot, auto&& make) {
      if (slot < 0) slot = make();
      return slot;
    };
    if (r.pattern >= 0)
      round.pattern = once(seen.pattern[static_cast<size_t>(r.pattern)], [&] {
        return intern(patterns_, out_.patterns, from.patterns[static_cast<size_t>(r.pattern)]);
      });
    if (r.flow_bytes >= 0)
      round.flow_bytes = once(seen.bytes[static_cast<size_t>(r.flow_bytes)], [&] {
        return intern(bytes_, out_.byte_tables, from.byte_tables[static_cast<size_t>(r.flow_bytes)]);
      });
    if (r.reduce >= 0)
      round.reduce = once(seen.reduce[static_cast<size_t>(r.reduce)], [&] {
        return intern(reduces_, out_.reduce_tables, from.reduce_tables[static_cast<size_t>(r.reduce)]);
      });
    return round;
  }
  CollectiveRounds finish() { return std::move(out_); }

 private:
  template <typename T>
  static int intern(std::map<T, int>& index, std::vector<T>& store, T value) {
    auto [it, fresh] = index.emplace(value, static_cast<int>(store.size()));
    if (fresh) store.push_back(std::move(value));
    return it->second;
  }
  CollectiveRounds out_;
  std::map<std::vector<RankFlow>, int> patterns_;
  std::map<std::vector<int64_t>, int> bytes_;
  std::map<std::vector<char>, int> reduces_;
};

// The flows of round r of `c`.
std::vector<Flow> flows_of(const CollectiveRounds& c, const Round& r) {
  std::vector<Flow> out;
  if (r.pattern < 0) return out;
  const auto& pattern = c.patterns[static_cast<size_t>(r.pattern)];
  out.reserve(pattern.size());
  for (size_t f = 0; f < pattern.size(); ++f)
    out.push_back({pattern[f].first, pattern[f].second, c.bytes_of(r, f), c.reduces(r, f)});
  return out;
}

}  // namespace

CollectiveRounds rounds_of(const Schedule& s) {
  const ScheduleIndex index = index_schedule(s);
  std::vector<std::vector<StepRef>> recv_of_send;
  const std::vector<std::vector<int>> level = step_levels(s, index, recv_of_send);
  int levels = 0;
  for (const auto& l : level)
    for (int x : l) levels = std::max(levels, x);
  std::vector<std::vector<Flow>> flows(static_cast<size_t>(levels) + 1);
  std::vector<std::vector<std::pair<int, int64_t>>> copies(static_cast<size_t>(levels) + 1);
  for (size_t r = 0; r < static_cast<size_t>(s.ranks); ++r) {
    const auto& steps = s.programs[r].steps;
    for (size_t i = 0; i < steps.size(); ++i) {
      const auto lvl = static_cast<size_t>(level[r][i]);
      const int64_t bytes = steps[i].length * s.element_bytes;
      if (steps[i].op == OpKind::kCopy) copies[lvl].push_back({static_cast<int>(r), bytes});
      if (steps[i].op != OpKind::kSend) continue;
      const StepRef v = recv_of_send[r][i];
      const bool reduce =
          s.programs[static_cast<size_t>(v.rank)].steps[static_cast<size_t>(v.step)].op == OpKind::kRecvReduce;
      flows[lvl].push_back({static_cast<int>(r), v.rank, bytes, reduce});
    }
  }
  RoundsWriter out(s.ranks);
  for (size_t lvl = 1; lvl < flows.size(); ++lvl)
    if (!flows[lvl].empty() || !copies[lvl].empty()) out.append(out.make(std::move(flows[lvl]), std::move(copies[lvl])));
  return out.finish();
}

CollectiveRounds rounds_of_levels(int ranks, std::vector<std::vector<LevelFlow>> levels) {
  RoundsWriter out(ranks);
  for (auto& level : levels)
    if (!level.empty()) out.append(out.make(std::move(level), {}));
  return out.finish();
}

CollectiveRounds remap_rounds(CollectiveRounds r, const std::vector<int>& group, int ranks) {
  ST_ASSERT(static_cast<int>(group.size()) == r.ranks, "remap_rounds: one target per rank");
  auto at = [&group](int rank) { return group[static_cast<size_t>(rank)]; };
  for (auto& pattern : r.patterns)
    for (auto& [src, dst] : pattern) {
      src = at(src);
      dst = at(dst);
    }
  for (Round& round : r.rounds)
    for (auto& copy : round.copies) copy.first = at(copy.first);
  r.ranks = ranks;
  r.lockstep_exact = false;
  return r;
}

CollectiveRounds parallel_rounds(const std::vector<CollectiveRounds>& parts) {
  ST_ASSERT(!parts.empty(), "parallel_rounds: at least one part");
  size_t count = 0;
  for (const CollectiveRounds& p : parts) {
    ST_ASSERT(p.ranks == parts[0].ranks, "parallel_rounds: parts on the same ranks");
    count = std::max(count, p.rounds.size());
  }
  // Rounds whose parts' rounds are alike (the same patterns, bytes, tables and copies) are one combined round:
  // made once, appended as often as they occur.
  using PartKey = std::tuple<int, int64_t, int, bool, int, std::vector<std::pair<int, int64_t>>>;
  std::map<std::vector<PartKey>, Round> made;
  RoundsWriter out(parts[0].ranks);
  for (size_t k = 0; k < count; ++k) {
    std::vector<PartKey> key;
    key.reserve(parts.size());
    for (const CollectiveRounds& p : parts) {
      if (k >= p.rounds.size()) {
        key.emplace_back(-2, 0, -1, false, -1, std::vector<std::pair<int, int64_t>>{});
        continue;
      }
      const Round& r = p.rounds[k];
      key.emplace_back(r.pattern, r.bytes, r.flow_bytes, r.reduce_all, r.reduce, r.copies);
    }
    auto it = made.find(key);
    if (it == made.end()) {
      std::vector<Flow> flows;
      std::vector<std::pair<int, int64_t>> copies;
      for (const CollectiveRounds& p : parts) {
        if (k >= p.rounds.size()) continue;
        const std::vector<Flow> f = flows_of(p, p.rounds[k]);
        flows.insert(flows.end(), f.begin(), f.end());
        copies.insert(copies.end(), p.rounds[k].copies.begin(), p.rounds[k].copies.end());
      }
      it = made.emplace(std::move(key), out.make(std::move(flows), std::move(copies))).first;
    }
    out.append(it->second);
  }
  return out.finish();
}

CollectiveRounds sequence_rounds(const std::vector<CollectiveRounds>& parts) {
  ST_ASSERT(!parts.empty(), "sequence_rounds: at least one part");
  RoundsWriter out(parts[0].ranks);
  for (const CollectiveRounds& p : parts) {
    ST_ASSERT(p.ranks == parts[0].ranks, "sequence_rounds: parts on the same ranks");
    RoundsWriter::Adopted seen(p);
    for (const Round& r : p.rounds) out.append(out.adopt(p, seen, r));
  }
  return out.finish();
}

std::vector<std::string> canonical_rounds(const CollectiveRounds& c) {
  std::vector<std::string> out;
  for (const Round& r : c.rounds) {
    std::vector<std::tuple<int, int, int64_t, bool>> flows;
    for (const Flow& f : flows_of(c, r)) flows.emplace_back(f.src, f.dst, f.bytes, f.reduce);
    std::sort(flows.begin(), flows.end());
    auto copies = r.copies;
    std::sort(copies.begin(), copies.end());
    std::string line;
    for (const auto& [src, dst, bytes, reduce] : flows) line += fmt::format("{}>{}:{}{} ", src, dst, bytes, reduce ? "+" : "");
    line += "|";
    for (const auto& [rank, bytes] : copies) line += fmt::format(" {}:{}", rank, bytes);
    out.push_back(std::move(line));
  }
  return out;
}

}  // namespace scaletwin::plan
