// Strict JSON reading: unknown keys, wrong types and ranges are errors that name the file and the JSON path.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/json_reader.hpp"
#include "tests/input_error_message.hpp"

using namespace scaletwin;
using scaletwin::testing::input_error_message;

TEST_CASE("typed accessors read values and defaults", "[json]") {
  const Json j = parse_json_text(R"({"a": 3, "b": "x", "c": true, "bw": "10Gbps", "o": {"k": 1.5}})", "t.json");
  JsonObject o = JsonObject::root(j, "t.json");
  CHECK(o.get_int("a") == 3);
  CHECK(o.get_string("b") == "x");
  CHECK(o.get_bool("c"));
  CHECK(o.get_quantity("bw", Quantity::kBandwidthBytesPerSec) == Approx(1.25e9));
  CHECK(o.get_object("o").get_number("k") == Approx(1.5));
  CHECK(o.get_int("missing", 7) == 7);
  CHECK_NOTHROW(o.finish());
}

TEST_CASE("every error names the file, the path and the expectation", "[json]") {
  const Json j = parse_json_text(R"({"a": "three", "n": -2, "typo": 1, "o": {"e": "maybe"}})", "s.json");
  const JsonObject o = JsonObject::root(j, "s.json");
  std::string m = input_error_message([&] { o.get_int("a"); });
  CHECK(m.find("s.json at /a") != std::string::npos);
  CHECK(m.find("an integer") != std::string::npos);
  m = input_error_message([&] { o.get_int("n", std::nullopt, 1); });
  CHECK(m.find("/n") != std::string::npos);
  CHECK(m.find(">= 1") != std::string::npos);
  m = input_error_message([&] { o.get_object("o").get_enum("e", {"yes", "no"}); });
  CHECK(m.find("/o/e") != std::string::npos);
  CHECK(m.find("yes, no") != std::string::npos);
  m = input_error_message([&] { o.get_string("absent"); });
  CHECK(m.find("/absent") != std::string::npos);
  m = input_error_message([&] { o.finish(); });
  CHECK(m.find("s.json at /typo") != std::string::npos);  // "a", "n", "o" were read above, "typo" never
  CHECK(m.find("unknown key \"typo\"") != std::string::npos);
}

TEST_CASE("syntax errors and missing files are input errors", "[json]") {
  const std::string m = input_error_message([] { parse_json_text("{\n  \"a\": 1,\n  oops\n}", "broken.json"); });
  CHECK(m.find("broken.json") != std::string::npos);
  CHECK(m.find("line 3") != std::string::npos);
  CHECK(input_error_message([] { load_json_file("/nonexistent/x.json"); }).find("/nonexistent/x.json") != std::string::npos);
}

TEST_CASE("a key given twice in one object is an input error at its path", "[json]") {
  std::string m = input_error_message([] { parse_json_text(R"({"nodes": 2, "model": "m", "nodes": 4})", "d.json"); });
  CHECK(m.find("d.json at /nodes") != std::string::npos);
  CHECK(m.find("\"nodes\" appears twice") != std::string::npos);
  // Inside arrays and nested objects the path counts the elements before it, containers included.
  m = input_error_message([] {
    parse_json_text(
        R"({"runs": [{"id": "a", "x": [1, {"y": 2}]}, {"id": "b", "scheme": {"name": "ps", "name": "ps"}}]})", "m.json");
  });
  CHECK(m.find("m.json at /runs/1/scheme/name") != std::string::npos);
  m = input_error_message([] { parse_json_text(R"([[1, 2], {"k": 1}, {"k": 1, "k": 2}])", "a.json"); });
  CHECK(m.find("a.json at /2/k") != std::string::npos);
  // The same key in sibling objects, or in an object and the one inside it, is not a repeat.
  const Json ok = parse_json_text(R"({"a": {"a": 1}, "b": [{"a": 1}, {"a": 2}]})", "ok.json");
  CHECK(ok.at("b").at(1).at("a") == 2);
}

TEST_CASE("atomic writes leave the whole file or nothing", "[files]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "scaletwin_test_atomic";
  fs::create_directories(dir);
  const std::string path = (dir / "out.json").string();
  write_file_atomic(path, "{\"x\": 1}\n");
  std::ifstream in(path);
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(content == "{\"x\": 1}\n");
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++files;
  CHECK(files == 1);  // no temporary left behind
  CHECK_THROWS_AS(write_file_atomic((dir / "no/such/dir/f").string(), "x"), InputError);
  fs::remove_all(dir);
}

TEST_CASE("relative paths resolve against the referring file", "[files]") {
  CHECK(resolve_relative("m.json", "/a/b/s.json") == "/a/b/m.json");
  CHECK(resolve_relative("/abs/m.json", "/a/b/s.json") == "/abs/m.json");
  CHECK(fnv1a64("abc") != fnv1a64("abd"));
  CHECK(hex64(255) == "00000000000000ff");
}
