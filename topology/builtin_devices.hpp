// The device catalogue's files, embedded at build time (cmake/embed.cmake); private to topology/.
#pragma once

#include <string_view>
#include <vector>

namespace scaletwin::topology::detail {

struct BuiltinDeviceText {
  std::string_view name;  // the file's base name: devices/NAME.json
  std::string_view text;  // the whole file
};

// Sorted by name. Defined in the generated builtin_device_texts.cpp.
std::vector<BuiltinDeviceText> builtin_device_texts();

}  // namespace scaletwin::topology::detail
