// Output files are written whole or not at all: content goes to a temporary name beside the target, is flushed,
// and is renamed over it. A crash never leaves half a file. "-" means standard output.
#pragma once

#include <cstdint>
#include <string>

namespace scaletwin {

void write_file_atomic(const std::string& path, const std::string& content);

// Resolves `path` relative to the directory of `relative_to_file` unless it is absolute.
std::string resolve_relative(const std::string& path, const std::string& relative_to_file);

// 64-bit FNV-1a, for the deterministic plan hash both backends print.
uint64_t fnv1a64(const std::string& data, uint64_t seed = 1469598103934665603ULL);
std::string hex64(uint64_t v);

}  // namespace scaletwin
