// The built-in cluster files, embedded at build time (see embed_clusters.cmake); private to topology/.
#pragma once

#include <string_view>
#include <vector>

namespace scaletwin::topology::detail {

struct BuiltinClusterText {
  std::string_view name;  // the file's base name: clusters/NAME.json
  std::string_view text;  // the whole file
};

// Sorted by name. Defined in the generated builtin_clusters.cpp.
std::vector<BuiltinClusterText> builtin_cluster_texts();

}  // namespace scaletwin::topology::detail
