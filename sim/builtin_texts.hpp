// The built-in stack and calibration files, embedded at build time (cmake/embed.cmake); private to sim/.
#pragma once

#include <string_view>
#include <vector>

namespace scaletwin::sim::detail {

struct BuiltinText {
  std::string_view name;  // the file's base name: stacks/NAME.json, calibrations/NAME.json
  std::string_view text;  // the whole file
};

// Sorted by name. Defined in the generated builtin_stack_texts.cpp, builtin_calibration_texts.cpp and
// builtin_convergence_texts.cpp.
std::vector<BuiltinText> builtin_stack_texts();
std::vector<BuiltinText> builtin_calibration_texts();
std::vector<BuiltinText> builtin_convergence_texts();

}  // namespace scaletwin::sim::detail
