// The layout rules of ../shared/style.md that a reader can check with grep, checked on the source tree itself:
// collectives are data, so no file of sim/ or exec/ names a collective algorithm, and no function is longer than
// 80 lines.
#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "plan/algorithm.hpp"
#include "plan/scenario.hpp"

namespace {

namespace fs = std::filesystem;

// The C++ and CUDA sources under the given folders of the repository.
std::vector<fs::path> sources(const std::vector<std::string>& folders) {
  std::vector<fs::path> out;
  for (const std::string& folder : folders)
    for (const auto& entry : fs::recursive_directory_iterator(fs::path(SCALETWIN_SOURCE_DIR) / folder)) {
      const std::string ext = entry.path().extension().string();
      if (entry.is_regular_file() && (ext == ".cpp" || ext == ".hpp" || ext == ".cu" || ext == ".cuh"))
        out.push_back(entry.path());
    }
  return out;
}

std::vector<std::string> lines_of(const fs::path& file) {
  std::ifstream in(file);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

struct Function {
  int first_line = 0;  // 1-based, the line that opens the body
  int body_lines = 0;  // lines between the opening and the closing brace
};

// Functions defined at namespace scope (house style: their signature starts in column 0 and their closing brace is
// a "}" in column 0; member functions defined inside a class body are not seen). A signature may span a few lines
// before its "{".
std::vector<Function> functions_of(const std::vector<std::string>& lines) {
  static const std::regex not_function("^(namespace|struct|class|enum|extern|union|template|using|typedef)\\b.*");
  std::vector<Function> out;
  int candidate = -1, open = -1;
  for (int i = 0; i < static_cast<int>(lines.size()); ++i) {
    const std::string& line = lines[static_cast<size_t>(i)];
    if (open >= 0) {
      if (!line.empty() && line[0] == '}') {
        out.push_back({open + 1, i - open - 1});
        open = candidate = -1;
      }
      continue;
    }
    if (!line.empty() && std::isalpha(static_cast<unsigned char>(line[0])))
      candidate = std::regex_match(line, not_function) ? -1 : i;
    const bool comment = line.find_first_not_of(' ') != std::string::npos &&
                         line.compare(line.find_first_not_of(' '), 2, "//") == 0;
    if (candidate >= 0 && i - candidate < 8 && !line.empty() && line.back() == '{' && !comment) {
      open = i;
      continue;
    }
    if (!line.empty() && (line.back() == ';' || line.back() == '}')) candidate = -1;
  }
  return out;
}

}  // namespace

TEST_CASE("the function scanner measures bodies and skips types and namespaces", "[unit]") {
  const std::vector<std::string> code = {
      "namespace a {",                    // 1
      "struct S {",                       // 2
      "  int f() {",                      // 3: a member: not seen
      "    return 1;",                    // 4
      "  }",                              // 5
      "};",                               // 6
      "int one() { return 1; }",          // 7: on one line: no body lines to count
      "std::string two(int x,",           // 8
      "                int y) {",         // 9: opens here
      "  return std::to_string(x + y);",  // 10
      "}",                                // 11
      "}  // namespace a",                // 12
  };
  const std::vector<Function> f = functions_of(code);
  REQUIRE(f.size() == 1);
  CHECK(f[0].first_line == 9);
  CHECK(f[0].body_lines == 1);
}

TEST_CASE("no file of sim/ or exec/ names a collective algorithm", "[unit]") {
  using namespace scaletwin::plan;
  // The registry's names, but for those that are also a parameter server's mode ("async"): the mode is not an
  // algorithm, and the runner names the mode it reports.
  std::vector<std::string> algorithm_names;
  for (Algorithm a : all_algorithms()) {
    const std::string name = algorithm_name(a);
    bool mode = false;
    for (PsMode m : {PsMode::kSync, PsMode::kAsync, PsMode::kMixedAsync}) mode = mode || name == ps_mode_name(m);
    if (!mode) algorithm_names.push_back(name);
  }
  CHECK(algorithm_names.size() + 1 == all_algorithms().size());
  std::vector<std::string> found;
  int files = 0;
  for (const fs::path& file : sources({"sim", "exec"})) {
    ++files;
    const std::vector<std::string> lines = lines_of(file);
    for (size_t i = 0; i < lines.size(); ++i) {
      bool names = lines[i].find("Algorithm::") != std::string::npos;  // an enumerator of plan/algorithm.hpp
      for (const std::string& name : algorithm_names)
        names = names || lines[i].find(fmt::format("\"{}\"", name)) != std::string::npos;
      if (names) found.push_back(fmt::format("{}:{}: {}", file.string(), i + 1, lines[i]));
    }
  }
  CHECK(files > 50);
  INFO(fmt::format("{}", fmt::join(found, "\n")));
  CHECK(found.empty());
}

TEST_CASE("no function is longer than 80 lines", "[unit]") {
  std::vector<std::string> long_ones;
  int functions = 0;
  for (const fs::path& file : sources({"core", "models", "topology", "plan", "report", "sim", "exec", "calibrate",
                                       "cli", "bench", "tests"})) {
    for (const Function& f : functions_of(lines_of(file))) {
      ++functions;
      if (f.body_lines > 80) long_ones.push_back(fmt::format("{}:{}: {} lines", file.string(), f.first_line, f.body_lines));
    }
  }
  CHECK(functions > 1000);
  INFO(fmt::format("{}", fmt::join(long_ones, "\n")));
  CHECK(long_ones.empty());
}
