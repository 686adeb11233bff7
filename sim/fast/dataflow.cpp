// Step-level collectives of the fast mode (see dataflow.hpp): the interpreter's state machine
// (sim/interpreter.cpp) without SimGrid, returning the actions the fast mode's event loop takes.
#include "sim/fast/dataflow.hpp"

#include <cmath>
#include <utility>

#include "core/error.hpp"

namespace scaletwin::sim::fast {

DataflowSchedule::DataflowSchedule(plan::Schedule s) : schedule(std::move(s)), index(index_schedule(schedule)) {
  recv_step_of_send.resize(static_cast<size_t>(schedule.ranks));
  for (size_t r = 0; r < recv_step_of_send.size(); ++r)
    recv_step_of_send[r].assign(schedule.programs[r].steps.size(), -1);
  for (size_t r = 0; r < recv_step_of_send.size(); ++r) {
    const auto& steps = schedule.programs[r].steps;
    for (size_t i = 0; i < steps.size(); ++i) {
      const int send = index.send_step_of_recv[r][i];
      if (send >= 0)
        recv_step_of_send[static_cast<size_t>(steps[i].peer)][static_cast<size_t>(send)] = static_cast<int>(i);
    }
  }
}

double DataflowRun::bytes(int rank, int step) const {
  const plan::Step& st = s_->schedule.programs[static_cast<size_t>(rank)].steps[static_cast<size_t>(step)];
  return static_cast<double>(st.length * s_->schedule.element_bytes);
}

void DataflowRun::activate(int rank, std::vector<DataflowAction>& out) {
  const auto ranks = static_cast<size_t>(s_->schedule.ranks);
  if (remaining_.empty()) {
    remaining_.resize(ranks);
    posted_.resize(ranks);
    steps_left_.assign(ranks, 0);
    for (size_t r = 0; r < ranks; ++r) {
      const auto& steps = s_->schedule.programs[r].steps;
      remaining_[r].resize(steps.size());
      posted_[r].assign(steps.size(), 0);
      steps_left_[r] = static_cast<int>(steps.size());
      for (size_t i = 0; i < steps.size(); ++i) remaining_[r][i] = static_cast<int>(steps[i].deps.size());
    }
  }
  const auto r = static_cast<size_t>(rank);
  if (steps_left_[r] == 0) {
    ++ranks_done_;
    out.push_back({DataflowAction::kRankDone, rank});
    return;
  }
  std::vector<int> ready;  // collected first: starting a step may complete it and start its dependents
  for (size_t i = 0; i < remaining_[r].size(); ++i)
    if (s_->schedule.programs[r].steps[i].deps.empty()) ready.push_back(static_cast<int>(i));
  for (int i : ready) start(rank, i, out);
}

void DataflowRun::start(int rank, int step, std::vector<DataflowAction>& out) {
  const plan::Step& st = s_->schedule.programs[static_cast<size_t>(rank)].steps[static_cast<size_t>(step)];
  switch (st.op) {
    case plan::OpKind::kSend:
      if (costs_->message_overhead_s > 0.0)
        out.push_back({DataflowAction::kTimer, rank, step, kOverhead, costs_->message_overhead_s});
      else
        post(rank, step, out);
      break;
    case plan::OpKind::kRecv:
    case plan::OpKind::kRecvReduce: post(rank, step, out); break;
    case plan::OpKind::kCopy: {
      const double t = bytes(rank, step) * costs_->copy_s_per_byte[static_cast<size_t>(rank)];
      if (t > 0.0)
        out.push_back({DataflowAction::kTimer, rank, step, kCopy, t});
      else
        complete(rank, step, out);
      break;
    }
  }
}

void DataflowRun::post(int rank, int step, std::vector<DataflowAction>& out) {
  const auto r = static_cast<size_t>(rank), i = static_cast<size_t>(step);
  posted_[r][i] = 1;
  const plan::Step& st = s_->schedule.programs[r].steps[i];
  const bool send = st.op == plan::OpKind::kSend;
  const int peer_step = send ? s_->recv_step_of_send[r][i] : s_->index.send_step_of_recv[r][i];
  ST_ASSERT(peer_step >= 0, "fast dataflow: a transfer without its partner in " + s_->schedule.name);
  if (!posted_[static_cast<size_t>(st.peer)][static_cast<size_t>(peer_step)]) return;
  const int sender = send ? rank : st.peer, sender_step = send ? step : peer_step;
  out.push_back({DataflowAction::kTransfer, sender, sender_step, 0, 0.0, bytes(rank, step), send ? st.peer : rank});
}

void DataflowRun::on_timer(int rank, int step, int what, std::vector<DataflowAction>& out) {
  if (what == kOverhead)
    post(rank, step, out);
  else
    complete(rank, step, out);
}

void DataflowRun::on_flow_end(int rank, int step, std::vector<DataflowAction>& out) {
  const auto r = static_cast<size_t>(rank), i = static_cast<size_t>(step);
  const plan::Step& st = s_->schedule.programs[r].steps[i];
  const int peer = st.peer, recv = s_->recv_step_of_send[r][i];
  complete(rank, step, out);
  const plan::Step& rs = s_->schedule.programs[static_cast<size_t>(peer)].steps[static_cast<size_t>(recv)];
  const double t = rs.op == plan::OpKind::kRecvReduce
                       ? bytes(peer, recv) * costs_->reduce_s_per_byte[static_cast<size_t>(peer)]
                       : 0.0;
  if (t > 0.0)
    out.push_back({DataflowAction::kTimer, peer, recv, kReduce, t});
  else
    complete(peer, recv, out);
}

void DataflowRun::complete(int rank, int step, std::vector<DataflowAction>& out) {
  const auto r = static_cast<size_t>(rank);
  for (int d : s_->index.dependents[r][static_cast<size_t>(step)])
    if (--remaining_[r][static_cast<size_t>(d)] == 0) start(rank, d, out);
  if (--steps_left_[r] == 0) {
    ++ranks_done_;
    out.push_back({DataflowAction::kRankDone, rank});
  }
}

}  // namespace scaletwin::sim::fast
