// What every fuzz target shares: the expected outcome of hostile input is a scaletwin::InputError (exit 2 in the
// CLI); anything else — another exception, an assert (InternalError), a crash, a sanitizer report, a timeout or a
// leak — is a finding. guard() runs one reader on one input and lets every other exception escape, so that
// libFuzzer reports it as a crash ("deadly signal" after std::terminate) together with the input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "core/json_reader.hpp"

namespace scaletwin::fuzz {

inline std::string as_text(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// Runs fn(); an InputError is the expected answer to bad input and is swallowed, everything else escapes.
template <class Fn>
void guard(Fn&& fn) {
  try {
    fn();
  } catch (const InputError& e) {
    // A message must say something: an empty what() would leave the user with no clue.
    if (std::string(e.what()).empty()) __builtin_trap();
  }
}

// Parses the input as JSON the way every reader gets its document (load_json_file → parse_json_text).
inline Json parse_document(const uint8_t* data, size_t size, const std::string& origin) {
  return parse_json_text(as_text(data, size), origin);
}

}  // namespace scaletwin::fuzz
