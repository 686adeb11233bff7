// Names of the collective algorithms (see algorithm.hpp).
#include "plan/algorithm.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace scaletwin::plan {

const char* algorithm_name(Algorithm a) {
  switch (a) {
    case Algorithm::kRing: return "ring";
    case Algorithm::kIntervalPairing: return "interval_pairing";
    case Algorithm::kHalvingDoubling: return "halving_doubling";
    case Algorithm::kDoubleBinaryTree: return "double_binary_tree";
    case Algorithm::kDirect: return "direct";
    case Algorithm::kHierarchical: return "hierarchical";
    case Algorithm::kBinomial: return "binomial";
    case Algorithm::kPs: return "ps";
    case Algorithm::kPsAsync: return "ps_async";
    case Algorithm::kPush: return "push";
    case Algorithm::kPull: return "pull";
    case Algorithm::kPushPull: return "push_pull";
    case Algorithm::kAsync: return "async";
    case Algorithm::kHybrid: return "hybrid";
  }
  return "?";
}

std::vector<Algorithm> all_algorithms() {
  return {Algorithm::kRing,     Algorithm::kIntervalPairing, Algorithm::kHalvingDoubling, Algorithm::kDoubleBinaryTree,
          Algorithm::kDirect,   Algorithm::kHierarchical,    Algorithm::kBinomial,        Algorithm::kPs,
          Algorithm::kPsAsync,  Algorithm::kPush,            Algorithm::kPull,            Algorithm::kPushPull,
          Algorithm::kAsync,    Algorithm::kHybrid};
}

std::vector<Algorithm> flat_allreduce_algorithms() {
  return {Algorithm::kRing, Algorithm::kIntervalPairing, Algorithm::kHalvingDoubling, Algorithm::kDoubleBinaryTree,
          Algorithm::kDirect};
}

std::vector<std::string> algorithm_names(const std::vector<Algorithm>& algorithms) {
  std::vector<std::string> names;
  for (Algorithm a : algorithms) names.emplace_back(algorithm_name(a));
  return names;
}

Algorithm algorithm_from_name(const std::string& name, const std::vector<Algorithm>& allowed, const std::string& file,
                              const std::string& field) {
  for (Algorithm a : allowed)
    if (name == algorithm_name(a)) return a;
  throw InputError(file, field,
                   fmt::format("one of {} (got \"{}\")", fmt::join(algorithm_names(allowed), ", "), name));
}

}  // namespace scaletwin::plan
