// Small accessors of the Schedule IR (see schedule.hpp for its semantics).
#include "plan/schedule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "core/error.hpp"

namespace scaletwin::plan {

const char* op_kind_name(OpKind op) {
  switch (op) {
    case OpKind::kSend: return "send";
    case OpKind::kRecv: return "recv";
    case OpKind::kRecvReduce: return "recv_reduce";
    case OpKind::kCopy: return "copy";
  }
  return "?";
}

const char* collective_name(Collective c) {
  switch (c) {
    case Collective::kAllReduce: return "allreduce";
    case Collective::kReduceScatter: return "reduce_scatter";
    case Collective::kAllGather: return "allgather";
    case Collective::kReduce: return "reduce";
    case Collective::kBroadcast: return "broadcast";
    case Collective::kPushPull: return "push_pull";
    case Collective::kCustom: return "custom";
  }
  return "?";
}

int64_t Schedule::bytes_sent_by(int rank) const {
  int64_t elements_sent = 0;
  for (const Step& s : programs.at(static_cast<size_t>(rank)).steps)
    if (s.op == OpKind::kSend) elements_sent += s.length;
  return elements_sent * element_bytes;
}

int64_t Schedule::max_bytes_sent_per_rank() const {
  int64_t best = 0;
  for (int r = 0; r < ranks; ++r) best = std::max(best, bytes_sent_by(r));
  return best;
}

size_t Schedule::total_steps() const {
  size_t n = 0;
  for (const auto& p : programs) n += p.steps.size();
  return n;
}

ScheduleIndex index_schedule(const Schedule& s) {
  ScheduleIndex index;
  const auto ranks = static_cast<size_t>(s.ranks);
  ST_ASSERT(s.programs.size() == ranks, "schedule " + s.name + ": one program per rank");
  index.send_step_of_recv.resize(ranks);
  index.dependents.resize(ranks);
  // FIFO queues of send step indices per (src, dst, channel), in program order.
  std::map<std::tuple<int, int, int>, std::vector<int>> sends;
  for (int r = 0; r < s.ranks; ++r) {
    const auto& steps = s.programs[static_cast<size_t>(r)].steps;
    index.send_step_of_recv[static_cast<size_t>(r)].assign(steps.size(), -1);
    index.dependents[static_cast<size_t>(r)].resize(steps.size());
    for (size_t i = 0; i < steps.size(); ++i) {
      for (int d : steps[i].deps) {
        ST_ASSERT(d >= 0 && static_cast<size_t>(d) < i, fmt::format("schedule {}: rank {} step {} dep {}", s.name, r, i, d));
        index.dependents[static_cast<size_t>(r)][static_cast<size_t>(d)].push_back(static_cast<int>(i));
      }
      if (steps[i].op == OpKind::kSend) sends[{r, steps[i].peer, steps[i].channel}].push_back(static_cast<int>(i));
    }
  }
  std::map<std::tuple<int, int, int>, size_t> taken;
  for (int r = 0; r < s.ranks; ++r) {
    const auto& steps = s.programs[static_cast<size_t>(r)].steps;
    for (size_t i = 0; i < steps.size(); ++i) {
      const Step& st = steps[i];
      if (st.op != OpKind::kRecv && st.op != OpKind::kRecvReduce) continue;
      const auto key = std::make_tuple(st.peer, r, st.channel);
      const auto& queue = sends[key];
      size_t& k = taken[key];
      ST_ASSERT(k < queue.size(), fmt::format("schedule {}: rank {} step {} has no matching send", s.name, r, i));
      const int send = queue[k++];
      ST_ASSERT(s.programs[static_cast<size_t>(st.peer)].steps[static_cast<size_t>(send)].length == st.length,
                fmt::format("schedule {}: rank {} step {}: length differs from the matching send", s.name, r, i));
      index.send_step_of_recv[static_cast<size_t>(r)][i] = send;
    }
  }
  for (const auto& [key, queue] : sends)
    ST_ASSERT(taken[key] == queue.size(), fmt::format("schedule {}: unmatched sends from {} to {}", s.name,
                                                      std::get<0>(key), std::get<1>(key)));
  return index;
}

}  // namespace scaletwin::plan
