// The interpreter's own rules, on small hand-made schedules and the ring: FIFO matching per (peer, channel) even
// when a later receive is ready first, channels that do not match each other, Copy and scratch, a rank map,
// collectives in flight at the same time advanced by progress(), staging that stops growing once warm, and the
// MPI_Allreduce baseline against the closed form.
#include <catch2/catch.hpp>

#include <cmath>
#include <numeric>

#include "plan/collectives.hpp"
#include "test_comm_support.hpp"

namespace scaletwin::test {
namespace {

using plan::OpKind;

plan::Step step(OpKind op, int peer, int64_t offset, int64_t length, std::vector<int> deps = {}, int channel = 0) {
  plan::Step s;
  s.op = op;
  s.peer = peer;
  s.offset = offset;
  s.length = length;
  s.deps = std::move(deps);
  s.channel = channel;
  return s;
}

plan::Schedule custom(const std::string& name, int ranks, int64_t elements, int channels = 1) {
  plan::Schedule s;
  s.name = name;
  s.collective = plan::Collective::kCustom;
  s.ranks = ranks;
  s.elements = elements;
  s.channels = channels;
  s.programs.resize(static_cast<size_t>(ranks));
  return s;
}

std::vector<float> iota_buffer(int64_t n, float first) {
  std::vector<float> b(static_cast<size_t>(n));
  std::iota(b.begin(), b.end(), first);
  return b;
}

}  // namespace

TEST_CASE("receives of one (peer, channel) match sends in program order, even when a later one is ready first",
          "[mpi][comm]") {
  if (world_size() < 2) return;
  // Rank 0 sends [0,4) then [4,8) to rank 1. Rank 1's first RecvReduce waits on a send of its own; its second has
  // no deps and would steal the first message if posted first.
  plan::Schedule s = custom("fifo", 2, 12);
  s.programs[0].steps = {step(OpKind::kSend, 1, 0, 4), step(OpKind::kSend, 1, 4, 4), step(OpKind::kRecv, 1, 8, 4)};
  s.programs[1].steps = {step(OpKind::kSend, 0, 8, 4), step(OpKind::kRecvReduce, 0, 0, 4, {0}),
                         step(OpKind::kRecvReduce, 0, 4, 4)};
  exec::ScheduleRunner runner(MPI_COMM_WORLD);
  const int me = world_rank();
  std::vector<float> b = iota_buffer(12, me == 0 ? 0.0f : 100.0f);
  runner.run(s, std::span<float>(b));
  int64_t bad = 0;
  if (me == 1)
    for (int i = 0; i < 8; ++i) bad += b[static_cast<size_t>(i)] != static_cast<float>(i + 100 + i);
  if (me == 0)
    for (int i = 8; i < 12; ++i) bad += b[static_cast<size_t>(i)] != static_cast<float>(100 + i);
  CHECK(sum_over_ranks(bad) == 0);
}

TEST_CASE("channels are matched separately, Copy and scratch work inside a rank", "[mpi][comm]") {
  if (world_size() < 2) return;
  // Rank 1 receives channel 1 first in program order, channel 0 second; rank 0 sends channel 0 first. Both ranks
  // first copy [0,2) into scratch and send from there (so receiving into [0,2) cannot race with it).
  plan::Schedule s = custom("channels", 2, 6, 2);
  s.scratch_elements = 2;
  plan::Step copy_out = step(OpKind::kCopy, -1, 6, 2);
  copy_out.src_offset = 0;
  s.programs[0].steps = {step(OpKind::kSend, 1, 2, 2, {}, 0), step(OpKind::kSend, 1, 4, 2, {}, 1), copy_out,
                         step(OpKind::kSend, 1, 6, 2, {2}, 0)};
  s.programs[1].steps = {step(OpKind::kRecv, 0, 4, 2, {}, 1), step(OpKind::kRecv, 0, 2, 2, {}, 0), copy_out,
                         step(OpKind::kRecvReduce, 0, 0, 2, {1, 2}, 0)};
  exec::ScheduleRunner runner(MPI_COMM_WORLD);
  const int me = world_rank();
  std::vector<float> b = iota_buffer(6, me == 0 ? 0.0f : 10.0f);
  runner.run(s, std::span<float>(b));
  const std::vector<float> expected_1 = {10.0f, 12.0f, 2.0f, 3.0f, 4.0f, 5.0f};
  int64_t bad = (me == 1 && b != expected_1) ? 1 : 0;
  if (me == 0) bad = b != iota_buffer(6, 0.0f) ? 1 : 0;
  CHECK(sum_over_ranks(bad) == 0);
}

TEST_CASE("a rank map places schedule ranks on other MPI ranks", "[mpi][comm]") {
  const int p = world_size();
  std::vector<int> reversed(static_cast<size_t>(p));
  for (int s = 0; s < p; ++s) reversed[static_cast<size_t>(s)] = p - 1 - s;
  exec::ScheduleRunner runner(MPI_COMM_WORLD, reversed);
  CHECK(runner.schedule_rank() == p - 1 - world_rank());
  const plan::Schedule s = plan::ring_allreduce(p, 1001, 4);
  CHECK(differences_from_mpi_allreduce<float>(runner, s) == 0);
}

TEST_CASE("collectives in flight together advance with progress() while the caller computes", "[mpi][comm]") {
  const int p = world_size();
  exec::ScheduleRunner runner(MPI_COMM_WORLD);
  const plan::Schedule a = plan::ring_allreduce(p, 5000, 4);
  const plan::Schedule b = plan::ring_allreduce(p, 777, 4);
  std::vector<float> ba = initial_buffer<float>(a, world_rank());
  std::vector<float> bb = initial_buffer<float>(b, world_rank());
  const exec::CollectiveHandle ha = runner.start(a, std::span<float>(ba));
  const exec::CollectiveHandle hb = runner.start(b, std::span<float>(bb));
  CHECK(runner.in_flight() == (p > 1 ? 2 : 0));
  double busy = 0;  // "compute" between progress calls, as the backward pass does between layers
  while (!runner.progress())
    for (int i = 0; i < 1000; ++i) busy += i * 1e-9;
  CHECK(runner.test(ha));
  CHECK(runner.test(hb));
  runner.wait(ha);  // already done: returns at once
  CHECK(sum_over_ranks(goal_mismatches<float>(a, world_rank(), ba) + goal_mismatches<float>(b, world_rank(), bb)) == 0);
  CHECK(busy >= 0);
}

TEST_CASE("a warm runner allocates no more staging and its stats count what it sent", "[mpi][comm]") {
  const int p = world_size();
  exec::ScheduleRunner runner(MPI_COMM_WORLD);
  const plan::Schedule s = plan::ring_allreduce(p, 4099, 4);
  std::vector<float> buffer(4099, 1.0f);
  runner.run(s, std::span<float>(buffer));
  const int64_t warm = runner.stats().staging_bytes;
  for (int i = 0; i < 5; ++i) runner.run(s, std::span<float>(buffer));
  CHECK(runner.stats().staging_bytes == warm);
  CHECK(runner.stats().collectives == 6);
  CHECK(runner.stats().bytes_sent == 6 * s.bytes_sent_by(world_rank()));
  CHECK(buffer[0] == static_cast<float>(std::pow(p, 6)));
}

TEST_CASE("transfers split into small segments give the same results", "[mpi][comm]") {
  const int p = world_size();
  exec::ScheduleRunner runner(MPI_COMM_WORLD, {}, 40);  // 10 floats, 5 doubles: most steps split, unevenly
  for (const plan::Algorithm algorithm :
       {plan::Algorithm::kRing, plan::Algorithm::kIntervalPairing, plan::Algorithm::kHalvingDoubling,
        plan::Algorithm::kDoubleBinaryTree, plan::Algorithm::kDirect}) {
    INFO(plan::algorithm_name(algorithm));
    const auto s = plan::make_collective(plan::Collective::kAllReduce, algorithm, p, 1237, 4);
    CHECK(differences_from_mpi_allreduce<float>(runner, s) == 0);
    CHECK(run_and_check<double>(runner, s) == 0);
  }
  const auto s = plan::ring_allreduce(p, 1237, 4);
  const int64_t before = runner.stats().messages_sent;
  std::vector<float> buffer(1237, 1.0f);
  runner.run(s, std::span<float>(buffer));
  int64_t expected_messages = 0;
  for (const auto& step : s.programs[static_cast<size_t>(world_rank())].steps)
    if (step.op == plan::OpKind::kSend) expected_messages += (step.length + 9) / 10;
  CHECK(runner.stats().messages_sent - before == expected_messages);
}

TEST_CASE("the MPI_Allreduce baseline gives the closed-form sum", "[mpi][comm]") {
  const int p = world_size();
  std::vector<int32_t> b(257);
  for (size_t i = 0; i < b.size(); ++i) b[i] = contribution<int32_t>(world_rank(), static_cast<int64_t>(i));
  exec::mpi_allreduce_baseline(std::span<int32_t>(b), MPI_COMM_WORLD);
  int64_t bad = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    int32_t sum = 0;
    for (int r = 0; r < p; ++r) sum += contribution<int32_t>(r, static_cast<int64_t>(i));
    bad += b[i] != sum;
  }
  CHECK(sum_over_ranks(bad) == 0);
}

}  // namespace scaletwin::test
