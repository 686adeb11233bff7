// The scaletwin command: parses the command line, dispatches to one subcommand, maps errors to exit codes.
#include <fmt/format.h>

#include <iostream>
#include <sstream>

#include "cli/command.hpp"
#include "core/error.hpp"
#include "core/files.hpp"

namespace scaletwin::cli {

void write_json_output(const std::string& path, const Json& json) { write_file_atomic(path, json.dump(2) + "\n"); }

void print_notes(const std::string& command, const std::string& lines) {
  std::istringstream in(lines);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) std::cerr << command << ": " << line << "\n";
}

std::vector<std::string> comma_items(const std::string& text) {
  std::vector<std::string> items;
  size_t start = 0;
  for (size_t comma = text.find(','); comma != std::string::npos; comma = text.find(',', start)) {
    items.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  items.push_back(text.substr(start));
  return items;
}

std::vector<int> parse_int_list(const std::string& text, const std::string& option) {
  std::vector<int> out;
  for (const std::string& item : comma_items(text)) {
    char* end = nullptr;
    const long v = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v <= 0 || v > (1 << 24))
      throw InputError("", option, fmt::format("a comma-separated list of positive integers (got \"{}\")", text));
    out.push_back(static_cast<int>(v));
  }
  return out;
}

}  // namespace scaletwin::cli

int main(int argc, char** argv) {
  using namespace scaletwin;
  CLI::App app{"scaletwin: predict, run and calibrate the scaling of CNN training on GPU clusters"};
  app.require_subcommand(1);
  cli::Action action;
  cli::add_describe_command(app, action);
  cli::add_collective_command(app, action);
  cli::add_predict_command(app, action);
  cli::add_run_command(app, action);
  cli::add_calibrate_command(app, action);
  cli::add_validate_command(app, action);
  cli::add_compare_command(app, action);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kExitBadInput;
  }
  try {
    return action ? action() : kExitBadInput;
  } catch (const InputError& e) {
    std::cerr << "scaletwin: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const SystemError& e) {
    std::cerr << "scaletwin: system error: " << e.what() << "\n";
    return kExitSystem;
  } catch (const InternalError& e) {
    std::cerr << "scaletwin: " << e.what() << "\n";
    return kExitInternal;
  } catch (const std::bad_alloc&) {
    std::cerr << "scaletwin: system error: out of memory\n";
    return kExitSystem;
  } catch (const std::exception& e) {
    std::cerr << "scaletwin: internal error: " << e.what() << "\n";
    return kExitInternal;
  }
}
