// The verifier catches deliberately broken schedules: double reduction, missing contribution, FIFO length
// mismatch, unmatched messages, deadlock, forward deps, bad ranges; and it measures rounds.
#include <catch2/catch.hpp>

#include "plan/collectives.hpp"
#include "plan/compose.hpp"
#include "plan/verify.hpp"

using namespace scaletwin::plan;

namespace {

Schedule reduce_to_1(int senders_of_0) {
  // p = 3, everyone contributes, rank 1 must hold the sum.
  ScheduleBuilder b("hand", 3, 10, 4);
  for (int i = 0; i < senders_of_0; ++i) {
    b.send(0, 1, 0, 10);
    b.recv_reduce(1, 0, 0, 10);
  }
  b.send(2, 1, 0, 10);
  b.recv_reduce(1, 2, 0, 10);
  Schedule s = b.finish();
  set_data_model(s, Collective::kReduce, InitialData::kOwn, Goal::kAny);
  s.goal[1] = Goal::kReducedAll;
  return s;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("a correct hand-written reduce verifies", "[verify]") {
  const VerifyResult v = verify(reduce_to_1(1));
  INFO(v.error);
  CHECK(v.ok);
  CHECK(v.rounds == 1);
  CHECK(v.bytes_sent == std::vector<int64_t>{40, 0, 40});
}

TEST_CASE("double reduction is caught as a count of 2 and not a bitset", "[verify]") {
  const VerifyResult v = verify(reduce_to_1(2));
  INFO(v.error);
  CHECK_FALSE(v.ok);
  CHECK(contains(v.error, "0×2"));
}

TEST_CASE("a missing contribution is caught", "[verify]") {
  const VerifyResult v = verify(reduce_to_1(0));
  INFO(v.error);
  CHECK_FALSE(v.ok);
  CHECK(contains(v.error, "rank 1"));
  CHECK(contains(v.error, "reduced_all"));
}

TEST_CASE("a receive that reduces where it should overwrite is caught in a real algorithm", "[verify]") {
  Schedule s = ring_allreduce(4, 40, 4);
  auto& steps = s.programs[2].steps;
  // The last step of rank 2 is an all-gather Recv: make it reduce.
  REQUIRE(steps.back().op == OpKind::kRecv);
  steps.back().op = OpKind::kRecvReduce;
  const VerifyResult v = verify(s);
  INFO(v.error);
  CHECK_FALSE(v.ok);
  CHECK(contains(v.error, "×2"));
}

TEST_CASE("FIFO length mismatch is caught", "[verify]") {
  Schedule s = ring_allreduce(3, 30, 4);
  for (Step& st : s.programs[1].steps)
    if (st.op == OpKind::kRecvReduce) {
      st.length -= 1;
      break;
    }
  const VerifyResult v = verify(s);
  INFO(v.error);
  CHECK_FALSE(v.ok);
  CHECK(contains(v.error, "length mismatch"));
}

TEST_CASE("unmatched sends and receives are caught", "[verify]") {
  Schedule s = reduce_to_1(1);
  s.programs[2].steps.pop_back();  // rank 2's send disappears
  const VerifyResult v = verify(s);
  CHECK_FALSE(v.ok);
  CHECK(contains(v.error, "unmatched receive"));
}

TEST_CASE("a deadlock is caught and named", "[verify]") {
  // Both ranks wait to receive before they send.
  Schedule s = empty_schedule("deadlock", 2, 8, 4);
  for (int r = 0; r < 2; ++r) {
    s.programs[static_cast<size_t>(r)].steps.push_back(Step{OpKind::kRecv, 1 - r, 0, 0, 8, 0, {}});
    s.programs[static_cast<size_t>(r)].steps.push_back(Step{OpKind::kSend, 1 - r, 0, 0, 8, 0, {0}});
  }
  const VerifyResult v = verify(s);
  INFO(v.error);
  CHECK_FALSE(v.ok);
  CHECK(contains(v.error, "deadlock"));
  CHECK(contains(v.error, "rank 0 step 0"));
}

TEST_CASE("a cycle of waits across three ranks deadlocks", "[verify]") {
  // Rank r forwards to r+1 only after it received from r-1: nobody starts.
  Schedule s = empty_schedule("cycle", 3, 8, 4);
  for (int r = 0; r < 3; ++r)
    s.programs[static_cast<size_t>(r)].steps = {Step{OpKind::kRecv, (r + 2) % 3, 0, 0, 8, 0, {}},
                                                Step{OpKind::kSend, (r + 1) % 3, 0, 0, 8, 0, {0}}};
  const VerifyResult v = verify(s);
  CHECK_FALSE(v.ok);
  CHECK(contains(v.error, "deadlock: 6 of 6 steps never ran"));
}

TEST_CASE("forward deps and bad peers and ranges outside the buffer are caught", "[verify]") {
  Schedule s = reduce_to_1(1);
  s.programs[0].steps[0].deps = {0};
  CHECK(contains(verify(s).error, "does not point to an earlier step"));
  s = reduce_to_1(1);
  s.programs[0].steps[0].peer = 0;
  CHECK(contains(verify(s).error, "bad peer"));
  s = reduce_to_1(1);
  s.programs[0].steps[0].length = 11;
  CHECK(contains(verify(s).error, "outside the buffer"));
  s = reduce_to_1(1);
  s.programs[0].steps[0].channel = 1;
  CHECK(contains(verify(s).error, "bad channel"));
}

TEST_CASE("a gathered goal needs exactly the data of the owner", "[verify]") {
  Schedule s = ring_allgather(4, 16, 4);
  CHECK(verify(s).ok);
  s.initial[3] = InitialData::kOwn;  // rank 3 is no owner any more: its data in slice 3 is data from a non-owner
  const VerifyResult v = verify(s);
  CHECK_FALSE(v.ok);
  CHECK(contains(v.error, "gathered_all"));
}

TEST_CASE("rounds are the longest chain of transfers", "[verify]") {
  CHECK(verify(ring_allreduce(5, 50, 4)).rounds == 8);
  CHECK(verify(binomial_broadcast(9, 50, 4, 0)).rounds == 4);
  CHECK(verify(direct_allreduce(6, 50, 4)).rounds == 1);  // the copy adds no round
}
