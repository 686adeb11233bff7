// The scaletwin command: parses the command line, dispatches to one subcommand, maps errors to exit codes.
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <new>
#include <sstream>

#include "cli/command.hpp"
#include "cli/launch.hpp"
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

CLI::Validator positive_count(const std::string& what) {
  return CLI::Validator(
      [what](const std::string& v) {
        long long n = 0;
        const bool number = !v.empty() && std::sscanf(v.c_str(), "%lld", &n) == 1;
        return number && n >= 1 ? std::string() : fmt::format("a positive number of {} (got \"{}\")", what, v);
      },
      "POSITIVE");
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

namespace {

// A standard descriptor that is closed (`scaletwin ... >&-`) is held open on /dev/null for reading, so that writes
// to it keep failing (EBADF) instead of landing in the first file the command opens, which would take its number.
void hold_closed_standard_descriptors() {
  for (int fd = 0; fd <= 2; ++fd)
    if (::fcntl(fd, F_GETFD) == -1 && errno == EBADF) {
      const int held = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
      if (held != fd && held >= 0) ::close(held);  // only the lowest free number is taken: fd itself
    }
}

// Memory that runs out ends the command with exit 3 and a message, wherever it runs out: an exception would unwind
// through destructors that allocate themselves (the JSON library's, freeing a large document), and a second failure
// there aborts (issue 54, F9).
void exit_on_out_of_memory() {
  static const char kMessage[] = "scaletwin: system error: out of memory\n";
  if (::write(STDERR_FILENO, kMessage, sizeof kMessage - 1) < 0) {
  }
  ::_exit(kExitSystem);
}

// The command's exit code, once standard output has been flushed: output that could not be written (standard
// output closed, or a full disk or /dev/full) is a failure of the system (exit 3), never a silent success.
int flush_standard_output(int code) {
  errno = 0;
  std::cout.flush();
  const bool ok = std::cout.good() && std::fflush(stdout) == 0 && !std::ferror(stdout);
  if (ok) return code;
  const int error = errno;  // the first failure's, where the library kept it
  std::cerr << "scaletwin: system error: standard output: writing failed"
            << (error != 0 ? std::string(": ") + std::strerror(error) : std::string()) << "\n";
  return code == kExitOk ? kExitSystem : code;
}

}  // namespace

}  // namespace scaletwin::cli

int main(int argc, char** argv) {
  using namespace scaletwin;
  if (const int code = cli::supervise_rank(argc, argv); code >= 0) return code;
  cli::hold_closed_standard_descriptors();
  std::set_new_handler(cli::exit_on_out_of_memory);
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
  cli::add_explore_command(app, action);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ValidationError& e) {  // a value an option's check refuses: said as every input error is
    std::cerr << "scaletwin: error: " << e.what() << "\nRun with --help for more information.\n";
    return kExitBadInput;
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kExitBadInput;
  }
  try {
    const int code = cli::flush_standard_output(action ? action() : kExitBadInput);
    release_held_signals();
    return code;
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
