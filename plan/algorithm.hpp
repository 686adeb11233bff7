// The collective algorithms of the generator registry (plan/collectives.hpp), as one enum. A name is parsed once,
// where it enters scaletwin (a scenario's "algorithm", "intra" and "inter"; `collective --algo`); everything after
// that — recipes, generators, the simulator, the executor — passes the enum, and writes the name back with
// algorithm_name().
#pragma once

#include <string>
#include <vector>

namespace scaletwin::plan {

enum class Algorithm {
  kRing,              // "ring"
  kIntervalPairing,   // "interval_pairing" (HAN et al. 2023)
  kHalvingDoubling,   // "halving_doubling" (Rabenseifner)
  kDoubleBinaryTree,  // "double_binary_tree" (NCCL 2.4)
  kDirect,            // "direct"
  kHierarchical,      // "hierarchical": intra reduce-scatter, inter all-reduce, intra all-gather
  kBinomial,          // "binomial": reduce and broadcast
  kPs,                // "ps": parameter-server push then pull, every worker (all-reduce semantics)
  kPsAsync,           // "ps_async": one worker's push and pull
  kPush,              // "push"
  kPull,              // "pull"
  kPushPull,          // "push_pull"
  kAsync,             // "async": one worker's push_pull
  kHybrid,            // "hybrid": a model-parallel layer's all-gather then reduce-scatter
};

const char* algorithm_name(Algorithm a);
std::vector<Algorithm> all_algorithms();
// The all-reduce algorithms that are not built of others: what a scenario accepts as the "inter" of a hierarchical
// all-reduce (its "intra" takes those with a reduce-scatter form: collective_algorithms(kReduceScatter)).
std::vector<Algorithm> flat_allreduce_algorithms();
std::vector<std::string> algorithm_names(const std::vector<Algorithm>& algorithms);
// The algorithm of `allowed` named `name`; else InputError(file, field, "one of <allowed> (got ...)").
Algorithm algorithm_from_name(const std::string& name, const std::vector<Algorithm>& allowed, const std::string& file,
                              const std::string& field);

}  // namespace scaletwin::plan
