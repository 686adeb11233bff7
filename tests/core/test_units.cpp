// Unit parsing: the one place where "25MB", "10Gbps", "1.25GBps", "5us", "4.37Tf" become SI numbers.
#include <catch2/catch.hpp>

#include "core/error.hpp"
#include "core/units.hpp"

using namespace scaletwin;

TEST_CASE("sizes parse with decimal and binary prefixes", "[units]") {
  CHECK(parse_quantity("25MB", Quantity::kBytes) == Approx(25e6));
  CHECK(parse_quantity("4KiB", Quantity::kBytes) == Approx(4096));
  CHECK(parse_quantity("1GiB", Quantity::kBytes) == Approx(1073741824.0));
  CHECK(parse_quantity("1048576", Quantity::kBytes) == Approx(1048576));
  CHECK(parse_quantity(" 2 MB ", Quantity::kBytes) == Approx(2e6));
}

TEST_CASE("bandwidth: bps is bits, Bps is bytes", "[units]") {
  CHECK(parse_quantity("10Gbps", Quantity::kBandwidthBytesPerSec) == Approx(1.25e9));
  CHECK(parse_quantity("1.25GBps", Quantity::kBandwidthBytesPerSec) == Approx(1.25e9));
  CHECK(parse_quantity("56Gbps", Quantity::kBandwidthBytesPerSec) == Approx(7e9));
  CHECK(parse_quantity("3e9", Quantity::kBandwidthBytesPerSec) == Approx(3e9));
}

TEST_CASE("time and FLOP rates", "[units]") {
  CHECK(parse_quantity("5us", Quantity::kSeconds) == Approx(5e-6));
  CHECK(parse_quantity("2ms", Quantity::kSeconds) == Approx(2e-3));
  CHECK(parse_quantity("0.5", Quantity::kSeconds) == Approx(0.5));
  CHECK(parse_quantity("4.37Tf", Quantity::kFlopsPerSec) == Approx(4.37e12));
  CHECK(parse_quantity("989TFLOP/s", Quantity::kFlopsPerSec) == Approx(989e12));
}

TEST_CASE("durations print in the unit that suits them, and a residue below 0.05 ns as 0 s", "[units]") {
  CHECK(format_seconds(0.0) == "0 s");
  CHECK(format_seconds(1e-14) == "0 s");
  CHECK(format_seconds(-1e-14) == "0 s");
  CHECK(format_seconds(2.5e-9) == "2.5 ns");
  CHECK(format_seconds(5e-6) == "5.00 us");
  CHECK(format_seconds(0.03064) == "30.64 ms");
  CHECK(format_seconds(1.5) == "1.500 s");
}

TEST_CASE("bad quantities name the place and what was expected", "[units]") {
  CHECK_THROWS_AS(parse_quantity("ten", Quantity::kBytes), InputError);
  CHECK_THROWS_AS(parse_quantity("5parsecs", Quantity::kSeconds), InputError);
  CHECK_THROWS_AS(parse_quantity("", Quantity::kBytes), InputError);
  CHECK_THROWS_AS(parse_quantity("10GiBps", Quantity::kBandwidthBytesPerSec), InputError);  // binary only for sizes
  CHECK_THROWS_AS(parse_quantity("3ms", Quantity::kBytes), InputError);                       // milli-bytes
  try {
    parse_quantity("fast", Quantity::kBandwidthBytesPerSec, "c.json", "/network/bandwidth");
    FAIL("no error");
  } catch (const InputError& e) {
    const std::string msg = e.what();
    CHECK(msg.find("c.json") != std::string::npos);
    CHECK(msg.find("/network/bandwidth") != std::string::npos);
    CHECK(msg.find("10Gbps") != std::string::npos);
  }
}
