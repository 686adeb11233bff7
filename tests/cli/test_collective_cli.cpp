// scaletwin collective as the spec fixes it: the JSON fields, verified true/null, units in --bytes, the ring's
// closed form under the documented default α-β, and exit 2 on unknown algorithms naming the known ones.
#include <catch2/catch.hpp>

#include "run_binary.hpp"

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

namespace {

using scaletwin::test::Result;
using scaletwin::test::run_scaletwin;

}  // namespace

TEST_CASE("collective --json gives the spec fields and ring matches its closed form", "[cli][collective]") {
  const Result r = run_scaletwin("collective --algo ring --ranks 8 --bytes 8MB --verify --json -");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["algorithm"] == "ring");
  CHECK(j["ranks"] == 8);
  CHECK(j["bytes"] == 8000000);
  CHECK(j["steps"] == 14);
  CHECK(j["max_bytes_sent_per_rank"] == 14000000);
  CHECK(j["verified"] == true);
  // default: 5 µs, 10 Gbit/s, free reductions: 2(p-1)α + 2(p-1)/p · n/B
  CHECK(j["alpha_beta_time_s"].get<double>() == Approx(14 * 5e-6 + 14000000 / 1.25e9).epsilon(1e-12));
}

TEST_CASE("collective without --verify reports verified null", "[cli][collective]") {
  const Result r = run_scaletwin("collective --algo interval_pairing --ranks 100 --bytes 1KiB --json -");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["verified"].is_null());
  CHECK(j["bytes"] == 1024);
  CHECK(j["steps"] == 14);
}

TEST_CASE("collective prints a table and rejects bad input with exit 2", "[cli][collective]") {
  const Result table = run_scaletwin("collective --algo halving_doubling --ranks 6 --bytes 1MB --verify");
  REQUIRE(table.code == 0);
  CHECK(table.out.find("verified        yes") != std::string::npos);
  const Result unknown = run_scaletwin("collective --algo bogus --ranks 4 --bytes 1MB");
  CHECK(unknown.code == 2);
  CHECK(unknown.out.find("interval_pairing") != std::string::npos);
  CHECK(run_scaletwin("collective --algo ring --ranks 4 --bytes 3").code == 2);
  CHECK(run_scaletwin("collective --algo ring --ranks 4 --bytes 12parsecs").code == 2);
  CHECK(run_scaletwin("collective --algo ring --bytes 1MB").code == 2);
  CHECK(run_scaletwin("collective --algo ring --ranks 4 --bytes 1MB --collective allsum").code == 2);
}
