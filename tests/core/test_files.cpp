// Input and output files under hostile conditions (issue 54): endless or oversized inputs, devices and FIFOs named
// as inputs, documents nested deep enough to overflow a recursive copy, outputs that are symlinks or devices.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
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

std::string read_back(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

size_t entries(const fs::path& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}

std::string nested(int depth) {
  return std::string(static_cast<size_t>(depth), '[') + std::string(static_cast<size_t>(depth), ']');
}

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

TEST_CASE("an output named by a symlink replaces the link's target and keeps the link", "[files]") {
  const Scratch s;
  const std::string target = s.write("target.json", "old");
  fs::create_symlink("target.json", s.dir / "link.json");  // relative, read against the link's directory
  fs::create_directories(s.dir / "sub");
  fs::create_symlink("../link.json", s.dir / "sub" / "chain.json");  // a link to a link
  write_file_atomic((s.dir / "link.json").string(), "new");
  CHECK(fs::is_symlink(s.dir / "link.json"));
  CHECK(read_back(target) == "new");
  write_file_atomic((s.dir / "sub" / "chain.json").string(), "newer");
  CHECK(fs::is_symlink(s.dir / "sub" / "chain.json"));
  CHECK(fs::is_symlink(s.dir / "link.json"));
  CHECK(read_back(target) == "newer");
  // A dangling link creates its target.
  fs::create_symlink(s.dir / "created.json", s.dir / "dangling.json");
  write_file_atomic((s.dir / "dangling.json").string(), "made");
  CHECK(fs::is_symlink(s.dir / "dangling.json"));
  CHECK(read_back(s.dir / "created.json") == "made");
  CHECK(entries(s.dir) == 5);  // target, link, sub, created, dangling: no temporary left beside them
}

TEST_CASE("an output that is a device or a FIFO is written in place, not replaced by a regular file", "[files]") {
  const Scratch s;
  write_file_atomic("/dev/null", "discarded");
  struct stat st {};
  REQUIRE(stat("/dev/null", &st) == 0);
  CHECK(S_ISCHR(st.st_mode));
  // A full device is a failure of the system (exit 3), not a silently lost output.
  CHECK_THROWS_AS(write_file_atomic("/dev/full", "lost"), SystemError);
  const fs::path fifo = s.dir / "fifo";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  const int reader = open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  REQUIRE(reader >= 0);
  write_file_atomic(fifo.string(), "through the pipe");
  char buffer[64] = {};
  CHECK(read(reader, buffer, sizeof buffer) == 16);
  close(reader);
  CHECK(std::string(buffer) == "through the pipe");
  CHECK(fs::is_fifo(fifo));
  CHECK(input_error_message([&] { write_file_atomic(s.dir.string(), "x"); }).find("a directory") != std::string::npos);
}

TEST_CASE("a replaced output keeps its permissions, and a 249-character name has a temporary name that fits",
          "[files]") {
  const Scratch s;
  const std::string kept = s.write("kept.json", "old");
  fs::permissions(kept, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  write_file_atomic(kept, "new");
  CHECK(read_back(kept) == "new");
  CHECK(fs::status(kept).permissions() == (fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read));
  const fs::path long_name = s.dir / std::string(249, 'n');
  write_file_atomic(long_name.string(), "long");
  CHECK(read_back(long_name) == "long");
  CHECK(entries(s.dir) == 2);
}

TEST_CASE("subnormal numbers and quantities are refused naming the place, while 0 and the smallest normal pass", "[json]") {
  const Json j = parse_json_text(R"({"tiny": 5e-324, "neg": -2e-310, "zero": 0, "least": 2.2250738585072014e-308,
                                     "t": "5e-324s"})", "n.json");
  const JsonObject o = JsonObject::root(j, "n.json");
  for (const char* key : {"tiny", "neg"}) {
    const std::string m = input_error_message([&] { o.get_number(key); });
    CHECK(m.find(std::string("n.json at /") + key) != std::string::npos);
    CHECK(m.find("subnormal") != std::string::npos);
  }
  CHECK(o.get_number("zero") == 0.0);
  CHECK(o.get_number("least") == std::numeric_limits<double>::min());
  CHECK(input_error_message([&] { o.get_quantity("tiny", Quantity::kSeconds); }).find("n.json at /tiny") !=
        std::string::npos);
  CHECK(input_error_message([&] { o.get_quantity("t", Quantity::kSeconds); }).find("n.json at /t") !=
        std::string::npos);
  CHECK(o.get_quantity("zero", Quantity::kSeconds, std::nullopt, /*allow_zero=*/true) == 0.0);
}
