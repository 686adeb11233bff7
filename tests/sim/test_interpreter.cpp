// The schedule interpreter on the contention-free platform against hand computations (the generator-by-generator
// comparison with plan/oracle.hpp is in test_oracle.cpp). One simulation per test case (SimGrid engine).
#include <catch2/catch.hpp>

#include <limits>

#include "sim/interpreter.hpp"
#include "tests/sim/hand_schedules.hpp"

using namespace scaletwin;

TEST_CASE("ring all-reduce on the contention-free platform takes 2(p-1) steps of alpha + chunk/B", "[sim]") {
  const int p = 5;
  const int64_t elements = 1000;  // chunks of 200 elements, 800 bytes
  const plan::Schedule s = test::hand_ring_allreduce(p, elements);
  const double alpha = 3e-6, bandwidth = 1e9, gamma = 1e-10;
  const auto finish = sim::run_schedule_contention_free(s, alpha, bandwidth, sim::StepCosts{1.0 / gamma, std::numeric_limits<double>::infinity(), 0.0});
  const double chunk_bytes = 800.0;
  const double step = alpha + chunk_bytes / bandwidth;
  // Reduce-scatter steps each add a reduction; all-gather steps do not.
  const double expected = (p - 1) * (step + chunk_bytes * gamma) + (p - 1) * step;
  for (double f : finish) CHECK(f == Approx(expected).epsilon(1e-12));
}

TEST_CASE("a transfer starts when both sides are ready (rendezvous)", "[sim]") {
  // rank 0 copies 1000 elements (busy 4000 B * 1e-6 s/B = 4 ms) and then sends; rank 1 posts its receive at once.
  plan::Schedule s = test::hand_send_after_copy(1000);
  const auto finish = sim::run_schedule_contention_free(s, 1e-3, 1e6, sim::StepCosts{std::numeric_limits<double>::infinity(), 1e6, 0.0});
  const double expected = 4e-3 + 1e-3 + 4000.0 / 1e6;
  CHECK(finish[0] == Approx(expected).epsilon(1e-12));
  CHECK(finish[1] == Approx(expected).epsilon(1e-12));
}

TEST_CASE("FIFO matching per channel follows program order, not posting order", "[sim]") {
  // rank 1 posts its second receive first (the first waits for a copy); messages must still pair in order.
  plan::Schedule s = test::hand_fifo_pair();
  const auto index = sim::index_schedule(s);
  CHECK(index.send_step_of_recv[1][1] == 0);
  CHECK(index.send_step_of_recv[1][2] == 1);
  const auto finish = sim::run_schedule_contention_free(s, 0.0, 1e6, sim::StepCosts{std::numeric_limits<double>::infinity(), 1e6, 0.0});
  // Both sends leave at t=0; the 100-element message (step 0) is matched by the receive posted after the copy
  // of 1000 elements (4 ms), the 500-element one at once: rank 1 ends at max(4ms + 0.4ms, 2ms).
  CHECK(finish[1] == Approx(4e-3 + 400.0 / 1e6).epsilon(1e-12));
}
