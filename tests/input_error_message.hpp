// Test helper: the message of the InputError that f throws, "" when it throws none (other exceptions propagate).
#pragma once

#include <functional>
#include <string>

#include "core/error.hpp"

namespace scaletwin::testing {

inline std::string input_error_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace scaletwin::testing
