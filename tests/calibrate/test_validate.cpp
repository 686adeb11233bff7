// validate's error and MAPE formulas on a hand-computed case, and its JSON shape (../shared/spec.md).
#include <catch2/catch.hpp>

#include "calibrate/validate.hpp"

using namespace scaletwin::calibrate;

TEST_CASE("error = (predicted - measured) / measured, MAPE = mean |error| in percent", "[unit]") {
  // errors: (110-100)/100 = +0.10, (150-200)/200 = -0.25, (40-40)/40 = 0  ->  MAPE = 100 * 0.35 / 3
  const Validation v = make_validation({"a", "b", "c"}, {100, 200, 40}, {110, 150, 40});
  REQUIRE(v.rows.size() == 3);
  CHECK(v.rows[0].error == Approx(0.10).epsilon(1e-12));
  CHECK(v.rows[1].error == Approx(-0.25).epsilon(1e-12));
  CHECK(v.rows[2].error == 0.0);
  CHECK(v.mape == Approx(35.0 / 3.0).epsilon(1e-12));
  const auto j = validation_to_json(v);
  CHECK(j.at("mape") == Approx(35.0 / 3.0));
  CHECK(j.at("runs").size() == 3);
  CHECK(j.at("runs")[1].at("id") == "b");
  CHECK(j.at("runs")[1].at("measured_images_per_sec") == 200.0);
  CHECK(j.at("runs")[1].at("predicted_images_per_sec") == 150.0);
  CHECK(j.at("runs")[1].at("error") == Approx(-0.25));
  const std::string table = validation_table(v);
  CHECK(table.find("-25.0%") != std::string::npos);
  CHECK(table.find("MAPE 11.67%") != std::string::npos);
}
