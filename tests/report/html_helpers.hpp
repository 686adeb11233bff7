// Helpers for tests that read HTML report pages (tests/sim/test_report_html.cpp, tests/calibrate/test_validate.cpp):
// counting occurrences and cutting out one chart's SVG by its data-chart id.
#pragma once

#include <catch2/catch.hpp>

#include <string>

namespace scaletwin::test {

inline size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

// The <svg data-chart="ID"> element of `html`, up to its closing tag.
inline std::string chart(const std::string& html, const std::string& id) {
  const size_t begin = html.find("data-chart=\"" + id + "\"");
  REQUIRE(begin != std::string::npos);
  const size_t end = html.find("</svg>", begin);
  REQUIRE(end != std::string::npos);
  return html.substr(begin, end - begin);
}

}  // namespace scaletwin::test
