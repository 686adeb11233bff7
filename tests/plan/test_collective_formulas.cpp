// Every generator's bytes sent per rank and step count equal the formula documented in its file.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <cmath>

#include "core/error.hpp"

#include "plan/collectives.hpp"
#include "plan/verify.hpp"

using namespace scaletwin::plan;

namespace {

int ceil_log2(int p) {
  int k = 0;
  while ((1 << k) < p) ++k;
  return k;
}

int floor_pow2(int p) {
  int q = 1;
  while (q * 2 <= p) q *= 2;
  return q;
}

const std::vector<int64_t> kSizes = {1000, 4096, 12345};
constexpr int64_t kEb = 4;

}  // namespace

TEST_CASE("ring: 2(p-1) steps and 2(p-1)/p n bytes per rank", "[collective][formula]") {
  for (int p = 1; p <= 64; ++p)
    for (int64_t n : kSizes) {
      const VerifyResult v = verify(ring_allreduce(p, n, kEb));
      INFO(fmt::format("p={} n={}", p, n));
      REQUIRE(v.ok);
      CHECK(v.rounds == 2 * (p - 1));
      for (int64_t b : v.bytes_sent) CHECK(std::abs(b - 2.0 * (p - 1) / p * n * kEb) < 2.0 * kEb);
    }
}

TEST_CASE("interval_pairing: 2 ceil(log2 p) steps and 2(p-1)/p n bytes per rank for any p", "[collective][formula]") {
  for (int p = 1; p <= 64; ++p)
    for (int64_t n : kSizes) {
      const VerifyResult v = verify(interval_pairing_allreduce(p, n, kEb));
      INFO(fmt::format("p={} n={}", p, n));
      REQUIRE(v.ok);
      CHECK(v.rounds == 2 * ceil_log2(p));
      CHECK(v.rounds <= 2 * ceil_log2(p) + 2);
      // 2(p-1) chunk transfers, each chunk within one element of n/p
      for (int64_t b : v.bytes_sent) CHECK(std::abs(b - 2.0 * (p - 1) / p * n * kEb) < 2.0 * (p - 1) * kEb + 1e-9);
      for (int64_t b : verify(interval_pairing_allreduce(p, 64 * p, kEb)).bytes_sent)
        CHECK(b == 2 * (p - 1) * 64 * kEb);
    }
}

TEST_CASE("halving_doubling: 2 log2 q steps plus 2 with a fold and 2(q-1)/q n bytes plus n on folding ranks",
          "[collective][formula]") {
  for (int p = 1; p <= 64; ++p)
    for (int64_t n : kSizes) {
      const int q = floor_pow2(p);
      const VerifyResult v = verify(halving_doubling_allreduce(p, n, kEb));
      INFO(fmt::format("p={} n={}", p, n));
      REQUIRE(v.ok);
      CHECK(v.rounds == 2 * ceil_log2(q) + (p == q ? 0 : 2));
      CHECK(v.rounds <= 2 * ceil_log2(p) + 2);
      const double core = 2.0 * (q - 1) / q * n * kEb;
      const double tolerance = 2.0 * (q - 1) * kEb + 1e-9;  // 2(q-1) chunk transfers, each within one element
      const int rem = p - q;
      for (int r = 0; r < p; ++r) {
        const double expected = r < 2 * rem ? (r % 2 == 0 ? n * kEb : core + n * kEb) : core;
        CHECK(std::abs(v.bytes_sent[static_cast<size_t>(r)] - expected) < tolerance);
      }
      if (p == q)
        for (int64_t b : verify(halving_doubling_allreduce(p, 64 * p, kEb)).bytes_sent)
          CHECK(b == 2 * (p - 1) * 64 * kEb);
    }
}

TEST_CASE("reduce-scatter and all-gather forms: (p-1)/p n bytes and p-1 or ceil(log2 p) steps", "[collective][formula]") {
  for (int p = 1; p <= 64; ++p)
    for (int64_t n : kSizes) {
      INFO(fmt::format("p={} n={}", p, n));
      for (const Schedule& s : {ring_reduce_scatter(p, n, kEb), ring_allgather(p, n, kEb),
                                interval_pairing_reduce_scatter(p, n, kEb), interval_pairing_allgather(p, n, kEb),
                                direct_reduce_scatter(p, n, kEb), direct_allgather(p, n, kEb)}) {
        const VerifyResult v = verify(s);
        INFO(s.name);
        REQUIRE(v.ok);
        for (int64_t b : v.bytes_sent) CHECK(std::abs(b - (p - 1.0) / p * n * kEb) < (p - 1.0) * kEb + 1e-9);
        const int64_t even = 64 * int64_t{p};
        const std::string name = s.name.substr(0, s.name.find(' '));  // "ring reduce_scatter"
        const Schedule exact =
            make_collective(s.collective, algorithm_from_name(name, all_algorithms(), "", "name"), p, even, kEb);
        for (int64_t b : verify(exact).bytes_sent) CHECK(b == (p - 1) * 64 * kEb);
      }
      CHECK(verify(ring_reduce_scatter(p, n, kEb)).rounds == p - 1);
      CHECK(verify(interval_pairing_allgather(p, n, kEb)).rounds == ceil_log2(p));
      CHECK(verify(direct_allgather(p, n, kEb)).rounds == (p > 1 ? 1 : 0));
    }
}

TEST_CASE("direct: one step and (p-1) n bytes per rank", "[collective][formula]") {
  for (int p = 1; p <= 40; ++p) {
    const VerifyResult v = verify(direct_allreduce(p, 777, kEb));
    REQUIRE(v.ok);
    CHECK(v.rounds == (p > 1 ? 1 : 0));
    for (int64_t b : v.bytes_sent) CHECK(b == (p - 1) * 777 * kEb);
  }
}

TEST_CASE("binomial reduce and broadcast: ceil(log2 p) steps and n per message", "[collective][formula]") {
  for (int p = 1; p <= 64; ++p) {
    const int root = p / 2;
    const VerifyResult reduce = verify(binomial_reduce(p, 100, kEb, root));
    const VerifyResult bcast = verify(binomial_broadcast(p, 100, kEb, root));
    REQUIRE(reduce.ok);
    REQUIRE(bcast.ok);
    CHECK(reduce.rounds == ceil_log2(p));
    CHECK(bcast.rounds == ceil_log2(p));
    for (int r = 0; r < p; ++r) CHECK(reduce.bytes_sent[static_cast<size_t>(r)] == (r == root ? 0 : 100 * kEb));
    CHECK(bcast.bytes_sent[static_cast<size_t>(root)] == ceil_log2(p) * 100 * kEb);
  }
}

TEST_CASE("double binary tree: bytes per rank follow the two trees", "[collective][formula]") {
  for (int p = 1; p <= 64; ++p) {
    const int64_t n = 1001;
    const VerifyResult v = verify(double_binary_tree_allreduce(p, n, kEb, 4));
    REQUIRE(v.ok);
    std::vector<int> kids0(static_cast<size_t>(p), 0), kids1(static_cast<size_t>(p), 0);
    for (int r = 0; r < p; ++r) {
      if (btree_parent(p, r) >= 0) ++kids0[static_cast<size_t>(btree_parent(p, r))];
      if (dtree_parent(p, r) >= 0) ++kids1[static_cast<size_t>(dtree_parent(p, r))];
    }
    for (int r = 0; r < p; ++r) {
      if (p == 1) break;
      const auto i = static_cast<size_t>(r);
      const int64_t expected = (n / 2) * (kids0[i] + (btree_parent(p, r) >= 0)) +
                               (n - n / 2) * (kids1[i] + (dtree_parent(p, r) >= 0));
      CHECK(v.bytes_sent[i] == expected * kEb);
      CHECK(v.bytes_sent[i] <= 2 * n * kEb + kEb);
    }
    CHECK(v.rounds <= 2 * ceil_log2(p) + 2 * 3 + 2);
  }
}

TEST_CASE("parameter server: workers send n and shard j sends w times its slice", "[collective][formula]") {
  for (int w = 1; w <= 9; ++w)
    for (int k = 1; k <= 4; ++k) {
      const VerifyResult v = verify(ps_push_pull(w, k, 1000, kEb));
      REQUIRE(v.ok);
      CHECK(v.rounds == 2);
      for (int i = 0; i < w; ++i) CHECK(v.bytes_sent[static_cast<size_t>(i)] == 1000 * kEb);
      for (int j = 0; j < k; ++j)
        CHECK(v.bytes_sent[static_cast<size_t>(w + j)] == w * (part_offset(1000, k, j + 1) - part_offset(1000, k, j)) * kEb);
    }
}

TEST_CASE("parameter server with given shard sizes: shard j sends w times its size and an empty shard nothing",
          "[collective][formula]") {
  const std::vector<int64_t> sizes{700, 0, 250, 50};
  for (int w = 1; w <= 5; ++w) {
    const Schedule s = ps_push_pull(w, 4, 1000, kEb, sizes);
    const VerifyResult v = verify(s);
    REQUIRE(v.ok);
    for (int i = 0; i < w; ++i) CHECK(v.bytes_sent[static_cast<size_t>(i)] == 1000 * kEb);
    int64_t offset = 0;
    for (int j = 0; j < 4; ++j) {
      const auto r = static_cast<size_t>(w + j);
      CHECK(v.bytes_sent[r] == w * sizes[static_cast<size_t>(j)] * kEb);
      CHECK(s.slice_offset[r] == offset);
      CHECK(s.slice_length[r] == sizes[static_cast<size_t>(j)]);
      offset += sizes[static_cast<size_t>(j)];
    }
    CHECK(s.programs[static_cast<size_t>(w + 1)].steps.empty());
  }
  // The same through the registry, as a lowering's recipe asks for it.
  CollectiveOptions o;
  o.servers = 4;
  o.shard_sizes = sizes;
  CHECK(verify(make_collective(Collective::kPushPull, Algorithm::kPush, 3, 1000, kEb, o)).ok);
  CHECK(verify(make_collective(Collective::kPushPull, Algorithm::kPull, 3, 1000, kEb, o)).ok);
  o.shard_sizes = {700, 0, 250};  // one size per shard, summing to the elements: the lowering's duty
  CHECK_THROWS_AS(make_collective(Collective::kPushPull, Algorithm::kPush, 3, 1000, kEb, o), scaletwin::InternalError);
  o.shard_sizes = {700, 0, 250, 49};
  CHECK_THROWS_AS(make_collective(Collective::kPushPull, Algorithm::kPush, 3, 1000, kEb, o), scaletwin::InternalError);
}

TEST_CASE("hierarchical ring/ring: 2(L-1)/L n + 2(G-1)/G n/L bytes and 2(L-1) + 2(G-1) steps", "[collective][formula]") {
  for (int L : {1, 2, 4, 8})
    for (int G : {1, 2, 3, 5}) {
      const int p = L * G;
      const int64_t n = 8 * 5 * 3 * 7 * 4;  // divisible by every L·G here
      CollectiveOptions o;
      o.ranks_per_node = L;
      const VerifyResult v = verify(make_collective(Collective::kAllReduce, Algorithm::kHierarchical, p, n, kEb, o));
      INFO(fmt::format("L={} G={}", L, G));
      REQUIRE(v.ok);
      CHECK(v.rounds == 2 * (L - 1) + 2 * (G - 1));
      for (int64_t b : v.bytes_sent)
        CHECK(b == static_cast<int64_t>(std::llround((2.0 * (L - 1) / L * n + 2.0 * (G - 1) / G * n / L) * kEb)));
    }
}

TEST_CASE("the registry rejects unknown names and lists the known ones", "[collective]") {
  try {
    algorithm_from_name("bogus", collective_algorithms(Collective::kAllReduce), "", "--algo");
    FAIL("no error");
  } catch (const scaletwin::InputError& e) {
    const std::string what = e.what();
    CHECK(what.find("--algo") != std::string::npos);
    CHECK(what.find("interval_pairing") != std::string::npos);
    CHECK(what.find("bogus") != std::string::npos);
  }
  for (Algorithm a : all_algorithms()) CHECK(algorithm_from_name(algorithm_name(a), all_algorithms(), "", "x") == a);
  try {  // a known algorithm without a generator for this collective
    make_collective(Collective::kAllReduce, Algorithm::kBinomial, 4, 100, 4);
    FAIL("no error");
  } catch (const scaletwin::InputError& e) {
    const std::string what = e.what();
    CHECK(what.find("halving_doubling") != std::string::npos);
    CHECK(what.find("got \"binomial\"") != std::string::npos);
  }
  CHECK_THROWS_AS(collective_from_name("allsum"), scaletwin::InputError);
  CHECK(collective_from_name("reduce_scatter") == Collective::kReduceScatter);
  CollectiveOptions o;
  o.ranks_per_node = 3;
  CHECK_THROWS_AS(make_collective(Collective::kAllReduce, Algorithm::kHierarchical, 8, 100, 4, o),
                  scaletwin::InputError);
  o.ranks_per_node = 4;
  o.intra = Algorithm::kDoubleBinaryTree;
  CHECK_THROWS_AS(make_collective(Collective::kAllReduce, Algorithm::kHierarchical, 8, 100, 4, o),
                  scaletwin::InputError);
}
