// Output files are written whole or not at all: content goes to a temporary name beside the target, is flushed,
// and is renamed over it. A crash never leaves half a file. "-" means standard output.
//
// Input files are read whole through read_input_file, which accepts only regular files of bounded size: a device
// (/dev/zero), a FIFO or a directory named as an input is refused at once instead of being read until memory runs
// out.
#pragma once

#include <cstdint>
#include <string>

namespace scaletwin {

void write_file_atomic(const std::string& path, const std::string& content);

// write_file_atomic in two phases, for outputs that change together (StagedDirectory::publish): prepare_output writes
// `content` to a temporary file beside the path's target (through its symlinks), or straight into a device, FIFO or
// socket the path names (then nothing is left to commit); commit_output renames the temporary over the target;
// abandon_output removes it. Until commit_output, no file the path names has changed.
struct PreparedOutput {
  std::string path;       // as given
  std::string temporary;  // "" when written in place
  std::string target;     // the path with its symlinks followed
};
PreparedOutput prepare_output(const std::string& path, const std::string& content);
void commit_output(const PreparedOutput& prepared);
void abandon_output(const PreparedOutput& prepared) noexcept;

// From a command's first output on, SIGINT, SIGTERM and SIGHUP are held (recorded by a handler, not acted on) until
// release_held_signals(): the command writes every output whole, then the held signal acts as it would have (by
// default it ends the process: 128 + N). A command writes
// its outputs at its end, so a signal during the work still stops it at once, and one that arrives while it writes
// leaves neither a temporary file nor one output without the others (issue 54, F14). write_file_atomic and
// StagedDirectory::write call hold_signals_for_outputs(); main calls release_held_signals() after the command.
void hold_signals_for_outputs();
void release_held_signals();

// The largest input file any reader accepts: real scenarios, models and clusters are kilobytes, the largest shipped
// measurements file (../shared/reference/modern/throughput.json) 1.4 MB.
inline constexpr int64_t kMaxInputFileBytes = int64_t{64} << 20;

// The whole content of the input file `path`, described as `what` in messages ("JSON file"). It must be a regular
// file (a symlink to one is followed) of at most max_bytes; InputError naming the file and the reason otherwise.
std::string read_input_file(const std::string& path, const std::string& what, int64_t max_bytes = kMaxInputFileBytes);

// Resolves `path` relative to the directory of `relative_to_file` unless it is absolute.
std::string resolve_relative(const std::string& path, const std::string& relative_to_file);

// 64-bit FNV-1a, for the deterministic plan hash both backends print.
uint64_t fnv1a64(const std::string& data, uint64_t seed = 1469598103934665603ULL);
std::string hex64(uint64_t v);

}  // namespace scaletwin
