// SGD with momentum and weight decay against a hand computation, and the learning-rate schedule (linear scaling,
// gradual warm-up, step decay) against its closed form.
#include <catch2/catch.hpp>

#include "exec/cpu/cpu_backend.hpp"
#include "exec/loss_scaler.hpp"
#include "exec/optimizer.hpp"

using namespace scaletwin::exec;

TEST_CASE("SGD with momentum and weight decay matches a hand computation over two steps") {
  CpuBackend backend(1);
  Buffer w = backend.alloc(3), g = backend.alloc(3);
  const float w0[3] = {1.0f, -2.0f, 0.5f};
  backend.upload(w.data(), w0, 3);
  Sgd sgd(backend, 3, 0.9f, 0.01f);
  const float g1[3] = {0.5f, 0.25f, -1.0f}, g2[3] = {-0.5f, 1.0f, 0.0f};
  const double lr1 = 0.1, lr2 = 0.05;
  backend.upload(g.data(), g1, 3);
  sgd.step(w.data(), g.data(), static_cast<float>(lr1));
  backend.upload(g.data(), g2, 3);
  sgd.step(w.data(), g.data(), static_cast<float>(lr2));
  for (int i = 0; i < 3; ++i) {
    // m1 = g1 + wd·w0; w1 = w0 − lr1·m1; m2 = 0.9·m1 + g2 + wd·w1; w2 = w1 − lr2·m2
    const double m1 = g1[i] + 0.01 * w0[i];
    const double w1 = w0[i] - lr1 * m1;
    const double m2 = 0.9 * m1 + g2[i] + 0.01 * w1;
    const double w2 = w1 - lr2 * m2;
    CHECK(w.data()[i] == Approx(w2).epsilon(1e-6));
    CHECK(sgd.momentum_buffer()[i] == Approx(m2).epsilon(1e-6));
  }
}

TEST_CASE("SGD on a slice leaves the rest of the buffer alone") {
  CpuBackend backend(1);
  Buffer w = backend.alloc(4), g = backend.alloc(4);
  backend.fill(w.data(), 1.0f, 4);
  backend.fill(g.data(), 2.0f, 4);
  Sgd sgd(backend, 4, 0.0f, 0.0f);
  sgd.step(w.data(), g.data(), 0.25f, 1, 2);
  CHECK(w.data()[0] == 1.0f);
  CHECK(w.data()[1] == 0.5f);
  CHECK(w.data()[2] == 0.5f);
  CHECK(w.data()[3] == 1.0f);
}

TEST_CASE("learning rate: linear scaling with gradual warm-up and step decay (Goyal et al. 2017)") {
  LrSchedule s;
  s.base_lr = 0.1;
  s.reference_batch = 256;
  s.global_batch = 1024;
  s.warmup_steps = 10;
  s.decay_steps = {100, 200};
  CHECK(s.scaled_lr() == Approx(0.4));
  CHECK(s.lr(0) == Approx(0.1));
  CHECK(s.lr(5) == Approx(0.25));
  CHECK(s.lr(10) == Approx(0.4));
  CHECK(s.lr(99) == Approx(0.4));
  CHECK(s.lr(100) == Approx(0.04));
  CHECK(s.lr(250) == Approx(0.004));
  // A global batch below the reference: scaled down, nothing to warm up.
  s.global_batch = 128;
  CHECK(s.lr(0) == Approx(0.05));
  CHECK(warmup_steps_for(5, 60000, 1024) == 5 * 58);
}

TEST_CASE("fp16 loss scaling: halve and skip on overflow, double after a run of finite steps, never below the floor") {
  LossScaler::Options o;
  o.initial_scale = 1024.0;
  o.growth_interval = 3;
  o.min_scale = 256.0;
  LossScaler s(o);
  REQUIRE(LossScaler().scale() == 65536.0);  // GradScaler's default start, 2^16
  REQUIRE(s.update(true));
  REQUIRE(s.update(true));
  REQUIRE(s.scale() == 1024.0);
  REQUIRE(s.update(true));  // the third finite step in a row
  REQUIRE(s.scale() == 2048.0);
  REQUIRE_FALSE(s.update(false));  // overflow: skipped, halved, the run of finite steps restarts
  REQUIRE(s.scale() == 1024.0);
  REQUIRE(s.update(true));
  REQUIRE(s.update(true));
  REQUIRE_FALSE(s.update(false));
  REQUIRE(s.scale() == 512.0);
  REQUIRE_FALSE(s.update(false));
  REQUIRE_FALSE(s.update(false));
  REQUIRE(s.scale() == 256.0);  // the floor
  REQUIRE(s.skipped_steps() == 4);
  REQUIRE(s.applied_steps() == 5);
  o.backoff_factor = 1.5;
  REQUIRE_THROWS(LossScaler(o));
}
