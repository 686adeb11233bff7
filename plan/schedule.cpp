// Small accessors of the Schedule IR (see schedule.hpp for its semantics).
#include "plan/schedule.hpp"

#include <algorithm>

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

}  // namespace scaletwin::plan
