// Input and output files under hostile conditions (issue 54): endless or oversized inputs, devices and FIFOs named
// as inputs, documents nested deep enough to overflow a recursive copy, outputs that are symlinks or devices.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/json_reader.hpp"
#include "tests/input_error_message.hpp"

using namespace scaletwin;
using scaletwin::testing::input_error_message;
namespace fs = std::filesystem;

namespace {

struct Scratch {
  fs::path dir = fs::temp_directory_path() / ("scaletwin_test_files_" + std::to_string(getpid()));
  Scratch() { fs::create_directories(dir); }
  ~Scratch() { fs::remove_all(dir); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(dir / name, std::ios::binary) << text;
    return (dir / name).string();
  }
};

std::string nested(int depth) { return std::string(static_cast<size_t>(depth), '[') + std::string(static_cast<size_t>(depth), ']'); }

}  // namespace

TEST_CASE("inputs are regular files: devices, FIFOs and directories are refused at once, naming the file", "[files]") {
  const Scratch s;
  const std::string ok = s.write("ok.json", R"({"a": 1})");
  CHECK(read_input_file(ok, "JSON file") == R"({"a": 1})");
  CHECK(load_json_file(ok).at("a") == 1);
  // /dev/zero and /dev/urandom never end: reading them would grow until memory runs out.
  for (const std::string dev : {"/dev/zero", "/dev/urandom"}) {
    const std::string m = input_error_message([&] { load_json_file(dev); });
    CHECK(m.find(dev) != std::string::npos);
    CHECK(m.find("a character device") != std::string::npos);
  }
  const std::string fifo = (s.dir / "fifo").string();
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  std::string m = input_error_message([&] { load_json_file(fifo); });  // no writer: must not wait for one
  CHECK(m.find("a FIFO") != std::string::npos);
  m = input_error_message([&] { load_json_file(s.dir.string()); });
  CHECK(m.find("a directory") != std::string::npos);
  m = input_error_message([&] { load_json_file((s.dir / "absent.json").string()); });
  CHECK(m.find("absent.json") != std::string::npos);
  CHECK(m.find("No such file") != std::string::npos);
  // A symlink to a regular file is read through.
  fs::create_symlink(ok, s.dir / "link.json");
  CHECK(load_json_file((s.dir / "link.json").string()).at("a") == 1);
}

TEST_CASE("inputs larger than the cap are refused before they are read, and the cap is well above real files",
          "[files]") {
  const Scratch s;
  const std::string big = s.write("big.json", std::string(4096, ' ') + "{}");
  const std::string m = input_error_message([&] { read_input_file(big, "JSON file", 1024); });
  CHECK(m.find("big.json") != std::string::npos);
  CHECK(m.find("at most 1024 bytes") != std::string::npos);
  CHECK(m.find("4098 bytes") != std::string::npos);
  CHECK(read_input_file(big, "JSON file", 4098).size() == 4098);
  // The largest reference file shipped beside the project is 1.4 MB; the cap leaves it far behind.
  const std::string reference = std::string(SCALETWIN_SOURCE_DIR) + "/../shared/reference/modern/throughput.json";
  if (fs::exists(reference)) {
    CHECK(static_cast<int64_t>(fs::file_size(reference)) * 10 < kMaxInputFileBytes);
    CHECK_NOTHROW(load_json_file(reference));
  }
}

TEST_CASE("documents nested deeper than the cap are refused while parsing, naming the place", "[json]") {
  CHECK_NOTHROW(parse_json_text(nested(kMaxJsonDepth), "ok.json"));
  std::string m = input_error_message([] { parse_json_text(nested(kMaxJsonDepth + 1), "deep.json"); });
  CHECK(m.find("deep.json at /0/0/0") != std::string::npos);
  CHECK(m.find("nested at most 100 deep") != std::string::npos);
  // 10^5 deep inside a measured run: refused before any reader copies the run recursively.
  m = input_error_message([] {
    parse_json_text(R"({"runs": [{"id": "x", "extra": )" + nested(100000) + "}]}", "runs.json");
  });
  CHECK(m.find("runs.json at /runs/0/extra/0/0") != std::string::npos);
  std::string objects;
  for (int i = 0; i < 200000; ++i) objects += R"({"a": )";
  m = input_error_message([&] { parse_json_text(objects, "objects.json"); });
  CHECK(m.find("objects.json at /a/a/a") != std::string::npos);
}
