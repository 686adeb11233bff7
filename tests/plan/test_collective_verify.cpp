// Every collective of the registry verifies symbolically for every p from 1 to 64 and for p = 1000, at sizes
// that divide evenly, that do not, and that are smaller than p.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "plan/collectives.hpp"
#include "plan/verify.hpp"

using namespace scaletwin::plan;

namespace {

struct Case {
  Collective kind;
  Algorithm algorithm = Algorithm::kRing;
  CollectiveOptions options;
};

std::vector<Case> all_cases(int p) {
  std::vector<Case> cases;
  for (Collective kind : all_collectives())
    for (const Algorithm algo : collective_algorithms(kind)) {
      CollectiveOptions o;
      if (algo == Algorithm::kHierarchical) {
        o.ranks_per_node = p % 4 == 0 ? 4 : (p % 2 == 0 ? 2 : 1);
        cases.push_back({kind, algo, o});
        o.intra = Algorithm::kIntervalPairing;
        o.inter = Algorithm::kHalvingDoubling;
        cases.push_back({kind, algo, o});
        o.intra = Algorithm::kDirect;
        o.inter = Algorithm::kDoubleBinaryTree;
        cases.push_back({kind, algo, o});
        continue;
      }
      if (algo == Algorithm::kPs || algo == Algorithm::kPsAsync || kind == Collective::kPushPull) o.servers = 1 + p % 3;
      if (kind == Collective::kReduce || kind == Collective::kBroadcast) o.root = p / 3;
      if (algo == Algorithm::kDoubleBinaryTree) o.chunks = 3;
      cases.push_back({kind, algo, o});
      if (algo == Algorithm::kHybrid) {
        o.intra = Algorithm::kHalvingDoubling;
        cases.push_back({kind, algo, o});
      }
    }
  return cases;
}

void check_all(int p, const std::vector<int64_t>& sizes) {
  for (const Case& c : all_cases(p))
    for (int64_t n : sizes) {
      const Schedule s = make_collective(c.kind, c.algorithm, p, n, 4, c.options);
      const VerifyResult v = verify(s);
      INFO(fmt::format("{} {} intra={} inter={} p={} n={}: {}", collective_name(c.kind), algorithm_name(c.algorithm),
                       algorithm_name(c.options.intra), algorithm_name(c.options.inter), p, n, v.error));
      REQUIRE(v.ok);
    }
}

}  // namespace

TEST_CASE("every collective verifies for p = 1..64", "[collective][verify]") {
  for (int p = 1; p <= 64; ++p) check_all(p, {0, 1, int64_t{p} - 1, 7 * int64_t{p}, 7 * int64_t{p} + 5, 1000});
}

TEST_CASE("every collective verifies for p = 1000", "[collective][verify][slow]") {
  check_all(1000, {999, 100000 + 7});
}
