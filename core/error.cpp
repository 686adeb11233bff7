// Formatting of the typed errors (see error.hpp).
#include "core/error.hpp"

#include <fmt/format.h>

namespace scaletwin {

namespace {
std::string format_input_error(const std::string& file, const std::string& path, const std::string& expected) {
  std::string where = file.empty() ? std::string("command line") : file;
  if (!path.empty()) where += fmt::format(" at {}", path);
  return fmt::format("{}: expected {}", where, expected);
}
}  // namespace

InputError::InputError(std::string file, std::string json_path, std::string expected)
    : std::runtime_error(format_input_error(file, json_path, expected)),
      file_(std::move(file)),
      json_path_(std::move(json_path)) {}

InputError::InputError(const std::string& message) : std::runtime_error(message) {}

InputError InputError::with_message(const std::string& message, std::string file, std::string json_path) {
  InputError e(message);
  e.file_ = std::move(file);
  e.json_path_ = std::move(json_path);
  return e;
}

void fail_assert(const char* expr, const char* file, int line, const std::string& message) {
  throw InternalError(fmt::format("internal error at {}:{}: ({}) failed: {}", file, line, expr, message));
}

}  // namespace scaletwin
