// Typed errors and exit codes shared by every part of scaletwin.
//
// Bad input (a file, a field, a command-line value) throws InputError, which names the file, the JSON path and
// what was expected; the command exits 2. A failure of the system (MPI, CUDA, a dead rank, out of memory) throws
// SystemError (exit 3). A broken invariant is an always-on ST_ASSERT that throws InternalError (exit 70).
#pragma once

#include <stdexcept>
#include <string>

namespace scaletwin {

enum ExitCode : int { kExitOk = 0, kExitBadInput = 2, kExitSystem = 3, kExitInternal = 70 };

class InputError : public std::runtime_error {
 public:
  // file: the file read ("" for the command line); json_path: e.g. "/scheme/servers"; expected: what would be valid.
  InputError(std::string file, std::string json_path, std::string expected);
  // A free-form message, for errors that have no file or path (command-line usage).
  explicit InputError(const std::string& message);
  // An error already formatted elsewhere (a forked child's), keeping its file and path.
  static InputError with_message(const std::string& message, std::string file, std::string json_path);
  const std::string& file() const { return file_; }
  const std::string& json_path() const { return json_path_; }

 private:
  std::string file_;
  std::string json_path_;
};

class SystemError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

[[noreturn]] void fail_assert(const char* expr, const char* file, int line, const std::string& message);

}  // namespace scaletwin

// Always on, also in release builds.
#define ST_ASSERT(cond, msg)                                                  \
  do {                                                                        \
    if (!(cond)) ::scaletwin::fail_assert(#cond, __FILE__, __LINE__, (msg)); \
  } while (0)
