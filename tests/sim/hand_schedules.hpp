// Hand-made schedules for the simulator tests, independent of the generators of plan/ (which have their own
// tests and are compared with the oracle in test_oracle.cpp).
#pragma once

#include "plan/schedule.hpp"

namespace scaletwin::test {

inline plan::Schedule empty_schedule(int p, int64_t elements) {
  plan::Schedule s;
  s.name = "hand";
  s.ranks = p;
  s.elements = elements;
  s.programs.resize(static_cast<size_t>(p));
  s.initial.assign(static_cast<size_t>(p), plan::InitialData::kOwn);
  s.goal.assign(static_cast<size_t>(p), plan::Goal::kAny);
  return s;
}

inline int add_step(plan::Schedule& s, int rank, plan::OpKind op, int peer, int64_t offset, int64_t length,
                    std::vector<int> deps) {
  plan::Step st;
  st.op = op;
  st.peer = peer;
  st.offset = offset;
  st.length = length;
  st.deps = std::move(deps);
  auto& steps = s.programs[static_cast<size_t>(rank)].steps;
  steps.push_back(st);
  return static_cast<int>(steps.size()) - 1;
}

// Ring all-reduce (Patarasuk–Yuan): p-1 reduce-scatter steps then p-1 all-gather steps; each step sends one
// chunk to the right neighbour and receives one from the left, and depends on the previous receive.
inline plan::Schedule hand_ring_allreduce(int p, int64_t elements) {
  plan::Schedule s = empty_schedule(p, elements);
  for (int r = 0; r < p; ++r) {
    const int right = (r + 1) % p, left = (r + p - 1) % p;
    int last_recv = -1;
    for (int k = 0; k < 2 * (p - 1); ++k) {
      const int send_chunk = ((r - k) % p + p) % p, recv_chunk = ((r - k - 1) % p + p) % p;
      std::vector<int> deps;
      if (last_recv >= 0) deps.push_back(last_recv);
      add_step(s, r, plan::OpKind::kSend, right, plan::part_offset(elements, p, send_chunk),
               plan::part_offset(elements, p, send_chunk + 1) - plan::part_offset(elements, p, send_chunk), deps);
      const auto op = k < p - 1 ? plan::OpKind::kRecvReduce : plan::OpKind::kRecv;
      last_recv = add_step(s, r, op, left, plan::part_offset(elements, p, recv_chunk),
                           plan::part_offset(elements, p, recv_chunk + 1) - plan::part_offset(elements, p, recv_chunk),
                           deps);
    }
  }
  return s;
}

// rank 0: Copy(n) then Send(n) to 1; rank 1: Recv(n) from 0.
inline plan::Schedule hand_send_after_copy(int64_t n) {
  plan::Schedule s = empty_schedule(2, 2 * n);
  plan::Step copy;
  const int c = add_step(s, 0, plan::OpKind::kCopy, -1, n, n, {});
  add_step(s, 0, plan::OpKind::kSend, 1, 0, n, {c});
  add_step(s, 1, plan::OpKind::kRecv, 0, 0, n, {});
  return s;
}

// rank 0: Send(100), Send(500) to 1 at once. rank 1: Copy(1000); Recv(100) after the copy; Recv(500) at once.
inline plan::Schedule hand_fifo_pair() {
  plan::Schedule s = empty_schedule(2, 2000);
  add_step(s, 0, plan::OpKind::kSend, 1, 0, 100, {});
  add_step(s, 0, plan::OpKind::kSend, 1, 100, 500, {});
  const int c = add_step(s, 1, plan::OpKind::kCopy, -1, 1000, 1000, {});
  add_step(s, 1, plan::OpKind::kRecv, 0, 0, 100, {c});
  add_step(s, 1, plan::OpKind::kRecv, 0, 100, 500, {});
  return s;
}

}  // namespace scaletwin::test
