// The lock-step lowering of a schedule into NCCL group rounds (see nccl_lowering.hpp).
#include "exec/cuda/nccl_lowering.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "core/error.hpp"

namespace scaletwin::exec::cuda {

using plan::OpKind;

namespace {

struct StepLink {
  int partner_rank = -1, partner_step = -1;
  int prev_in_queue = -1;  // the previous step of the same (direction, peer, channel) queue
  int64_t sequence = 0;    // position in that queue
};

// Pairs the q-th Send a→b on channel c with the q-th Recv/RecvReduce at b from a on channel c.
std::vector<std::vector<StepLink>> link_messages(const plan::Schedule& s) {
  using Queue = std::tuple<int, int, int>;  // (source, destination, channel)
  std::map<Queue, std::vector<int>> sends, recvs;
  std::vector<std::vector<StepLink>> links(static_cast<size_t>(s.ranks));
  for (int r = 0; r < s.ranks; ++r) {
    const auto& steps = s.programs[static_cast<size_t>(r)].steps;
    links[static_cast<size_t>(r)].resize(steps.size());
    for (size_t i = 0; i < steps.size(); ++i) {
      const plan::Step& st = steps[i];
      if (st.op == OpKind::kCopy) continue;
      ST_ASSERT(st.peer >= 0 && st.peer < s.ranks && st.peer != r,
                fmt::format("schedule '{}' rank {} step {}: bad peer {}", s.name, r, i, st.peer));
      auto& queue = st.op == OpKind::kSend ? sends[{r, st.peer, st.channel}] : recvs[{st.peer, r, st.channel}];
      StepLink& link = links[static_cast<size_t>(r)][i];
      link.prev_in_queue = queue.empty() ? -1 : queue.back();
      link.sequence = static_cast<int64_t>(queue.size());
      queue.push_back(static_cast<int>(i));
    }
  }
  ST_ASSERT(sends.size() == recvs.size(), fmt::format("schedule '{}': a message queue without its other end", s.name));
  for (const auto& [queue, send_steps] : sends) {
    const auto [src, dst, channel] = queue;
    const auto it = recvs.find(queue);
    ST_ASSERT(it != recvs.end() && it->second.size() == send_steps.size(),
              fmt::format("schedule '{}': {} sends {}→{} on channel {} do not meet as many receives", s.name,
                          send_steps.size(), src, dst, channel));
    for (size_t q = 0; q < send_steps.size(); ++q) {
      const int si = send_steps[q], ri = it->second[q];
      ST_ASSERT(s.programs[static_cast<size_t>(src)].steps[static_cast<size_t>(si)].length ==
                    s.programs[static_cast<size_t>(dst)].steps[static_cast<size_t>(ri)].length,
                fmt::format("schedule '{}': message {} {}→{} channel {}: lengths differ", s.name, q, src, dst,
                            channel));
      links[static_cast<size_t>(src)][static_cast<size_t>(si)].partner_rank = dst;
      links[static_cast<size_t>(src)][static_cast<size_t>(si)].partner_step = ri;
      links[static_cast<size_t>(dst)][static_cast<size_t>(ri)].partner_rank = src;
      links[static_cast<size_t>(dst)][static_cast<size_t>(ri)].partner_step = si;
    }
  }
  return links;
}

class Lowerer {
 public:
  explicit Lowerer(const plan::Schedule& s) : s_(s), links_(link_messages(s)) {
    out_.ranks.resize(static_cast<size_t>(s.ranks));
    out_.staging_elements.assign(static_cast<size_t>(s.ranks), 0);
    out_.round_of_step.resize(static_cast<size_t>(s.ranks));
    first_open_.assign(static_cast<size_t>(s.ranks), 0);
    for (int r = 0; r < s.ranks; ++r) {
      const size_t n = program(r).size();
      out_.round_of_step[static_cast<size_t>(r)].assign(n, -1);
      left_ += static_cast<int64_t>(n);
    }
  }

  NcclLowering run() {
    for (int k = 0; left_ > 0; ++k) {
      for (auto& rounds : out_.ranks) rounds.emplace_back();
      const int64_t before = left_;
      for (int r = 0; r < s_.ranks; ++r) run_copies(r, k);
      for (int r = 0; r < s_.ranks; ++r) pair_sends(r, k);
      ST_ASSERT(left_ < before, fmt::format("schedule '{}' cannot progress in NCCL round {}: {} steps wait on "
                                            "deps or messages that never come", s_.name, k, left_));
      for (int r = 0; r < s_.ranks; ++r) finish_round(r, k);
      out_.rounds = k + 1;
    }
    return std::move(out_);
  }

 private:
  const std::vector<plan::Step>& program(int r) const { return s_.programs[static_cast<size_t>(r)].steps; }
  int& round_of(int r, int i) { return out_.round_of_step[static_cast<size_t>(r)][static_cast<size_t>(i)]; }

  // Done before round k's group: completed in an earlier round, or a copy run earlier in round k.
  bool deps_done(int r, int i, int k) {
    for (int d : program(r)[static_cast<size_t>(i)].deps) {
      ST_ASSERT(d >= 0 && d < i, fmt::format("schedule '{}' rank {} step {}: dep {} is not an earlier step",
                                             s_.name, r, i, d));
      const int rd = round_of(r, d);
      if (rd < 0 || rd > k) return false;
      if (rd == k && program(r)[static_cast<size_t>(d)].op != OpKind::kCopy) return false;
    }
    return true;
  }

  void assign(int r, int i, int k) {
    round_of(r, i) = k;
    --left_;
  }

  // One pass in program order suffices: a copy's deps are earlier steps.
  void run_copies(int r, int k) {
    const auto& steps = program(r);
    for (int i = first_open_[static_cast<size_t>(r)]; i < static_cast<int>(steps.size()); ++i) {
      if (steps[static_cast<size_t>(i)].op != OpKind::kCopy || round_of(r, i) >= 0 || !deps_done(r, i, k)) continue;
      assign(r, i, k);
      out_.ranks[static_cast<size_t>(r)][static_cast<size_t>(k)].copies.push_back(i);
    }
  }

  // Sends in program order, so the previous pair of a queue is decided before the next one.
  void pair_sends(int r, int k) {
    const auto& steps = program(r);
    for (int i = first_open_[static_cast<size_t>(r)]; i < static_cast<int>(steps.size()); ++i) {
      if (steps[static_cast<size_t>(i)].op != OpKind::kSend || round_of(r, i) >= 0) continue;
      const StepLink& link = links_[static_cast<size_t>(r)][static_cast<size_t>(i)];
      if (link.prev_in_queue >= 0 && round_of(r, link.prev_in_queue) < 0) continue;  // FIFO
      if (!deps_done(r, i, k) || !deps_done(link.partner_rank, link.partner_step, k)) continue;
      assign(r, i, k);
      assign(link.partner_rank, link.partner_step, k);
      add_op(r, i, k);
      add_op(link.partner_rank, link.partner_step, k);
    }
  }

  void add_op(int r, int i, int k) {
    const plan::Step& st = program(r)[static_cast<size_t>(i)];
    out_.ranks[static_cast<size_t>(r)][static_cast<size_t>(k)].p2p.push_back(
        {i, st.op, st.peer, st.offset, st.length, -1});
  }

  // Posting order (peer, channel, sequence), staging slices, and the rank's first open step.
  void finish_round(int r, int k) {
    RankRound& round = out_.ranks[static_cast<size_t>(r)][static_cast<size_t>(k)];
    const auto key = [&](const P2pOp& op) {
      const plan::Step& st = program(r)[static_cast<size_t>(op.step)];
      return std::make_tuple(op.peer, op.op == OpKind::kSend ? 0 : 1, st.channel,
                             links_[static_cast<size_t>(r)][static_cast<size_t>(op.step)].sequence);
    };
    std::sort(round.p2p.begin(), round.p2p.end(), [&](const P2pOp& a, const P2pOp& b) { return key(a) < key(b); });
    int64_t staging = 0;
    for (P2pOp& op : round.p2p) {
      if (op.op != OpKind::kRecvReduce) continue;
      op.staging_offset = staging;
      staging += op.length;
    }
    int64_t& most = out_.staging_elements[static_cast<size_t>(r)];
    most = std::max(most, staging);
    int& first = first_open_[static_cast<size_t>(r)];
    while (first < static_cast<int>(program(r).size()) && round_of(r, first) >= 0) ++first;
  }

  const plan::Schedule& s_;
  std::vector<std::vector<StepLink>> links_;
  NcclLowering out_;
  std::vector<int> first_open_;
  int64_t left_ = 0;
};

}  // namespace

NcclLowering lower_for_nccl(const plan::Schedule& schedule) {
  ST_ASSERT(schedule.ranks >= 1 && schedule.programs.size() == static_cast<size_t>(schedule.ranks),
            fmt::format("schedule '{}': {} programs for {} ranks", schedule.name, schedule.programs.size(),
                        schedule.ranks));
  return Lowerer(schedule).run();
}

}  // namespace scaletwin::exec::cuda
