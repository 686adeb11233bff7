// The schedule-to-NCCL lowering, without a GPU: round counts and contents in closed form for the ring, deps and
// FIFO order respected, and a host simulation of the lowered rounds with NCCL's own matching rule (inside a
// group, the k-th send a→b meets the k-th receive posted by b from a) that must leave every generator's goal met.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>

#include "core/error.hpp"
#include "exec/cuda/nccl_lowering.hpp"
#include "plan/collectives.hpp"

namespace {

using namespace scaletwin;
using namespace scaletwin::exec::cuda;
using plan::OpKind;

double value(int rank, int64_t i) { return (rank + 1) * 1000.0 + static_cast<double>(i % 97); }

// Runs the lowering's rounds on host buffers (elements + scratch per rank), as the NCCL runner would.
std::vector<std::vector<double>> simulate(const plan::Schedule& s, const NcclLowering& low) {
  const int64_t size = s.elements + s.scratch_elements;
  std::vector<std::vector<double>> buf(static_cast<size_t>(s.ranks), std::vector<double>(static_cast<size_t>(size), 0.0));
  for (int r = 0; r < s.ranks; ++r)
    for (int64_t i = 0; i < s.elements; ++i) {
      const bool own = s.initial[r] == plan::InitialData::kOwn ||
                       (s.initial[r] == plan::InitialData::kOwnSlice && i >= s.slice_offset[r] &&
                        i < s.slice_offset[r] + s.slice_length[r]);
      buf[r][i] = own ? value(r, i) : 0.0;
    }
  for (int k = 0; k < low.rounds; ++k) {
    for (int r = 0; r < s.ranks; ++r)
      for (int step : low.ranks[r][k].copies) {
        const plan::Step& st = s.programs[r].steps[step];
        for (int64_t i = 0; i < st.length; ++i) buf[r][st.offset + i] = buf[r][st.src_offset + i];
      }
    // NCCL matching inside the group: per ordered pair, sends and receives in posting order.
    std::map<std::pair<int, int>, std::vector<const P2pOp*>> sends, recvs;
    for (int r = 0; r < s.ranks; ++r)
      for (const P2pOp& op : low.ranks[r][k].p2p)
        (op.op == OpKind::kSend ? sends[{r, op.peer}] : recvs[{op.peer, r}]).push_back(&op);
    REQUIRE(sends.size() == recvs.size());
    std::vector<std::vector<double>> staging(static_cast<size_t>(s.ranks));
    for (int r = 0; r < s.ranks; ++r) staging[r].assign(static_cast<size_t>(low.staging_elements[r]), 0.0);
    const auto before = buf;  // the sends of a group read what the buffers held when it started
    for (const auto& [pair, list] : sends) {
      const auto& matching = recvs.at(pair);
      REQUIRE(matching.size() == list.size());
      for (size_t q = 0; q < list.size(); ++q) {
        const P2pOp& snd = *list[q];
        const P2pOp& rcv = *matching[q];
        REQUIRE(snd.length == rcv.length);
        for (int64_t i = 0; i < snd.length; ++i) {
          const double v = before[pair.first][snd.offset + i];
          if (rcv.op == OpKind::kRecv) buf[pair.second][rcv.offset + i] = v;
          else staging[pair.second][rcv.staging_offset + i] = v;
        }
      }
    }
    for (int r = 0; r < s.ranks; ++r)
      for (const P2pOp& op : low.ranks[r][k].p2p)
        if (op.op == OpKind::kRecvReduce)
          for (int64_t i = 0; i < op.length; ++i) buf[r][op.offset + i] += staging[r][op.staging_offset + i];
  }
  return buf;
}

void check_goal(const plan::Schedule& s, const std::vector<std::vector<double>>& buf) {
  for (int r = 0; r < s.ranks; ++r)
    for (int64_t i = 0; i < s.elements; ++i) {
      double sum = 0.0, owner = 0.0;
      for (int q = 0; q < s.ranks; ++q) {
        if (s.initial[q] == plan::InitialData::kOwn) sum += value(q, i);
        if (s.initial[q] == plan::InitialData::kOwnSlice && i >= s.slice_offset[q] &&
            i < s.slice_offset[q] + s.slice_length[q])
          owner = value(q, i);
      }
      const bool in_slice = !s.slice_offset.empty() && i >= s.slice_offset[r] && i < s.slice_offset[r] + s.slice_length[r];
      INFO(s.name << ": rank " << r << " element " << i);
      switch (s.goal[r]) {
        case plan::Goal::kReducedAll: REQUIRE(buf[r][i] == sum); break;
        case plan::Goal::kReducedSlice:
          if (in_slice) REQUIRE(buf[r][i] == sum);
          break;
        case plan::Goal::kGatheredAll: REQUIRE(buf[r][i] == owner); break;
        case plan::Goal::kAny: break;
      }
    }
}

// Deps run in earlier rounds (a copy may also feed a step of its own round); FIFO per queue is kept.
void check_order(const plan::Schedule& s, const NcclLowering& low) {
  for (int r = 0; r < s.ranks; ++r) {
    std::map<std::tuple<int, int, int>, int> last_round;  // (direction, peer, channel) → round of the last step
    for (size_t i = 0; i < s.programs[r].steps.size(); ++i) {
      const plan::Step& st = s.programs[r].steps[i];
      const int round = low.round_of_step[r][i];
      REQUIRE(round >= 0);
      for (int d : st.deps) {
        const bool copy = s.programs[r].steps[d].op == OpKind::kCopy;
        REQUIRE((low.round_of_step[r][d] < round || (copy && low.round_of_step[r][d] == round)));
      }
      if (st.op == OpKind::kCopy) continue;
      auto& last = last_round[{st.op == OpKind::kSend ? 0 : 1, st.peer, st.channel}];
      REQUIRE(round >= last);
      last = round;
    }
  }
}

}  // namespace

TEST_CASE("NCCL lowering: the ring all-reduce takes 2(p − 1) rounds of one send and one receive per rank") {
  for (int p : {2, 3, 4, 7}) {
    const plan::Schedule s = plan::ring_allreduce(p, 1000, 4);
    const NcclLowering low = lower_for_nccl(s);
    INFO("p = " << p);
    REQUIRE(low.rounds == 2 * (p - 1));
    for (int r = 0; r < p; ++r) {
      for (int k = 0; k < low.rounds; ++k) {
        const auto& ops = low.ranks[r][k].p2p;
        REQUIRE(ops.size() == 2);
        int sends = 0;
        for (const P2pOp& op : ops) sends += op.op == OpKind::kSend ? 1 : 0;
        REQUIRE(sends == 1);
        // Reduce-scatter rounds reduce, all-gather rounds overwrite.
        for (const P2pOp& op : ops)
          if (op.op != OpKind::kSend) REQUIRE((op.op == OpKind::kRecvReduce) == (k < p - 1));
      }
      // Staging: one received chunk per round, so the largest chunk this rank reduces (at most ⌈n / p⌉).
      int64_t largest = 0;
      for (const plan::Step& st : s.programs[r].steps)
        if (st.op == OpKind::kRecvReduce) largest = std::max(largest, st.length);
      REQUIRE(low.staging_elements[r] == largest);
      REQUIRE(largest <= (1000 + p - 1) / p);
    }
    check_order(s, low);
    check_goal(s, simulate(s, low));
  }
}

TEST_CASE("NCCL lowering: every generator's schedule, run round by round with NCCL's matching, meets its goal") {
  int checked = 0;
  for (plan::Collective kind : plan::all_collectives()) {
    if (kind == plan::Collective::kCustom) continue;  // the hybrid's regions: data model checked by plan/verify
    for (const plan::Algorithm algo : plan::collective_algorithms(kind)) {
      for (int p : {1, 2, 3, 4, 6, 8}) {
        plan::CollectiveOptions options;
        options.servers = 2;
        if (kind == plan::Collective::kReduce || kind == plan::Collective::kBroadcast) options.root = p / 2;
        if (algo == plan::Algorithm::kHierarchical) {
          if (p % 2 != 0) continue;
          options.ranks_per_node = 2;
        }
        const plan::Schedule s = plan::make_collective(kind, algo, p, 37, 4, options);
        if (!s.regions.empty()) continue;
        INFO(plan::collective_name(kind) << " " << plan::algorithm_name(algo) << " p = " << p);
        const NcclLowering low = lower_for_nccl(s);
        REQUIRE(low.ranks.size() == static_cast<size_t>(s.ranks));
        check_order(s, low);
        check_goal(s, simulate(s, low));
        ++checked;
      }
    }
  }
  REQUIRE(checked > 60);
}

TEST_CASE("NCCL lowering: messages on two channels are posted in the same order at both ends") {
  // Rank 0 sends A on channel 1 then B on channel 0; rank 1 posts its receive of channel 0 first. NCCL has no
  // tags, so both ends must post them in one agreed order: (peer, channel, sequence).
  plan::Schedule s;
  s.name = "two channels";
  s.ranks = 2;
  s.elements = 4;
  s.channels = 2;
  s.programs.resize(2);
  s.programs[0].steps = {{OpKind::kSend, 1, 1, 0, 2, 0, {}}, {OpKind::kSend, 1, 0, 2, 2, 0, {}}};
  s.programs[1].steps = {{OpKind::kRecv, 0, 0, 2, 2, 0, {}}, {OpKind::kRecv, 0, 1, 0, 2, 0, {}}};
  s.initial = {plan::InitialData::kOwn, plan::InitialData::kNone};
  s.goal = {plan::Goal::kAny, plan::Goal::kAny};
  const NcclLowering low = lower_for_nccl(s);
  REQUIRE(low.rounds == 1);
  REQUIRE(low.ranks[0][0].p2p[0].offset == 2);  // channel 0 first on both sides
  REQUIRE(low.ranks[1][0].p2p[0].offset == 2);
  const auto buf = simulate(s, low);
  for (int64_t i = 0; i < 4; ++i) REQUIRE(buf[1][i] == value(0, i));
}

TEST_CASE("NCCL lowering: a copy feeds a send of the same round and deps postpone a step to a later round") {
  plan::Schedule s;
  s.name = "copy then send";
  s.ranks = 2;
  s.elements = 4;
  s.programs.resize(2);
  // Rank 0: copy [0,2) onto [2,4), send [2,4) (needs the copy), then receive [0,2) after the send.
  s.programs[0].steps = {{OpKind::kCopy, -1, 0, 2, 2, 0, {}}, {OpKind::kSend, 1, 0, 2, 2, 0, {0}},
                         {OpKind::kRecv, 1, 0, 0, 2, 0, {1}}};
  s.programs[1].steps = {{OpKind::kRecvReduce, 0, 0, 0, 2, 0, {}}, {OpKind::kSend, 0, 0, 0, 2, 0, {0}}};
  s.initial = {plan::InitialData::kOwn, plan::InitialData::kOwn};
  s.goal = {plan::Goal::kAny, plan::Goal::kAny};
  const NcclLowering low = lower_for_nccl(s);
  REQUIRE(low.rounds == 2);
  REQUIRE(low.round_of_step[0] == std::vector<int>{0, 0, 1});
  REQUIRE(low.round_of_step[1] == std::vector<int>{0, 1});
  const auto buf = simulate(s, low);
  REQUIRE(buf[1][0] == value(1, 0) + value(0, 0));  // rank 1 got rank 0's copied [0,2) and reduced it
  REQUIRE(buf[0][0] == value(1, 0) + value(0, 0));  // and sent the sum back
  REQUIRE(low.staging_elements[1] == 2);
  REQUIRE(low.staging_elements[0] == 0);
}

TEST_CASE("NCCL lowering: a schedule that cannot progress, or whose messages do not pair up, is refused") {
  plan::Schedule s;
  s.name = "deadlock";
  s.ranks = 2;
  s.elements = 2;
  s.programs.resize(2);
  // Each rank receives before it sends: the receive's partner send waits on it.
  s.programs[0].steps = {{OpKind::kRecv, 1, 0, 0, 1, 0, {}}, {OpKind::kSend, 1, 0, 1, 1, 0, {0}}};
  s.programs[1].steps = {{OpKind::kRecv, 0, 0, 0, 1, 0, {}}, {OpKind::kSend, 0, 0, 1, 1, 0, {0}}};
  REQUIRE_THROWS_AS(lower_for_nccl(s), InternalError);
  s.programs[1].steps = {{OpKind::kRecv, 0, 0, 0, 2, 0, {}}};  // rank 0 sends nothing to 1... and lengths differ
  s.programs[0].steps = {{OpKind::kSend, 1, 0, 0, 1, 0, {}}};
  REQUIRE_THROWS_AS(lower_for_nccl(s), InternalError);
  s.programs[0].steps.clear();
  REQUIRE_THROWS_AS(lower_for_nccl(s), InternalError);
}
