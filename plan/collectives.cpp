// The collective registry: (collective, algorithm) → generator (see collectives.hpp).
#include "plan/collectives.hpp"

#include <fmt/format.h>

#include <functional>
#include <map>
#include <utility>

#include "core/error.hpp"

namespace scaletwin::plan {

namespace {

using Generator = std::function<Schedule(int p, int64_t n, int64_t eb, const CollectiveOptions& o)>;

const std::map<Algorithm, Generator>& generators(Collective kind) {
  static const std::map<Algorithm, Generator> allreduce = {
      {Algorithm::kRing,
       [](int p, int64_t n, int64_t eb, const CollectiveOptions&) { return ring_allreduce(p, n, eb); }},
      {Algorithm::kIntervalPairing,
       [](int p, int64_t n, int64_t eb, const CollectiveOptions&) { return interval_pairing_allreduce(p, n, eb); }},
      {Algorithm::kHalvingDoubling,
       [](int p, int64_t n, int64_t eb, const CollectiveOptions&) { return halving_doubling_allreduce(p, n, eb); }},
      {Algorithm::kDoubleBinaryTree,
       [](int p, int64_t n, int64_t eb, const CollectiveOptions& o) {
         return double_binary_tree_allreduce(p, n, eb, o.chunks);
       }},
      {Algorithm::kDirect,
       [](int p, int64_t n, int64_t eb, const CollectiveOptions&) { return direct_allreduce(p, n, eb); }},
      {Algorithm::kHierarchical,
       [](int p, int64_t n, int64_t eb, const CollectiveOptions& o) { return hierarchical_allreduce(p, n, eb, o); }},
      {Algorithm::kPs,
       [](int p, int64_t n, int64_t eb, const CollectiveOptions& o) { return ps_push_pull(p, o.servers, n, eb, o.shard_sizes); }},
      {Algorithm::kPsAsync,
       [](int, int64_t n, int64_t eb, const CollectiveOptions& o) { return ps_push_pull(1, o.servers, n, eb, o.shard_sizes); }},
  };
  static const std::map<Algorithm, Generator> reduce_scatter = {
      {Algorithm::kRing,
       [](int p, int64_t n, int64_t eb, const CollectiveOptions&) { return ring_reduce_scatter(p, n, eb); }},
      {Algorithm::kIntervalPairing, [](int p, int64_t n, int64_t eb,
                                       const CollectiveOptions&) { return interval_pairing_reduce_scatter(p, n, eb); }},
      {Algorithm::kHalvingDoubling, [](int p, int64_t n, int64_t eb,
                                       const CollectiveOptions&) { return halving_doubling_reduce_scatter(p, n, eb); }},
      {Algorithm::kDirect,
       [](int p, int64_t n, int64_t eb, const CollectiveOptions&) { return direct_reduce_scatter(p, n, eb); }},
  };
  static const std::map<Algorithm, Generator> allgather = {
      {Algorithm::kRing,
       [](int p, int64_t n, int64_t eb, const CollectiveOptions&) { return ring_allgather(p, n, eb); }},
      {Algorithm::kIntervalPairing,
       [](int p, int64_t n, int64_t eb, const CollectiveOptions&) { return interval_pairing_allgather(p, n, eb); }},
      {Algorithm::kHalvingDoubling,
       [](int p, int64_t n, int64_t eb, const CollectiveOptions&) { return halving_doubling_allgather(p, n, eb); }},
      {Algorithm::kDirect,
       [](int p, int64_t n, int64_t eb, const CollectiveOptions&) { return direct_allgather(p, n, eb); }},
  };
  static const std::map<Algorithm, Generator> reduce = {
      {Algorithm::kBinomial,
       [](int p, int64_t n, int64_t eb, const CollectiveOptions& o) { return binomial_reduce(p, n, eb, o.root); }},
  };
  static const std::map<Algorithm, Generator> broadcast = {
      {Algorithm::kBinomial,
       [](int p, int64_t n, int64_t eb, const CollectiveOptions& o) { return binomial_broadcast(p, n, eb, o.root); }},
  };
  static const std::map<Algorithm, Generator> push_pull = {
      {Algorithm::kPush,
       [](int p, int64_t n, int64_t eb, const CollectiveOptions& o) { return ps_push(p, o.servers, n, eb, o.shard_sizes); }},
      {Algorithm::kPull,
       [](int p, int64_t n, int64_t eb, const CollectiveOptions& o) { return ps_pull(p, o.servers, n, eb, o.shard_sizes); }},
      {Algorithm::kPushPull,
       [](int p, int64_t n, int64_t eb, const CollectiveOptions& o) { return ps_push_pull(p, o.servers, n, eb, o.shard_sizes); }},
      {Algorithm::kAsync,
       [](int, int64_t n, int64_t eb, const CollectiveOptions& o) { return ps_push_pull(1, o.servers, n, eb, o.shard_sizes); }},
  };
  static const std::map<Algorithm, Generator> custom = {
      {Algorithm::kHybrid,
       [](int p, int64_t n, int64_t eb, const CollectiveOptions& o) { return hybrid_traffic(p, n, eb, o.intra); }},
  };
  switch (kind) {
    case Collective::kAllReduce: return allreduce;
    case Collective::kReduceScatter: return reduce_scatter;
    case Collective::kAllGather: return allgather;
    case Collective::kReduce: return reduce;
    case Collective::kBroadcast: return broadcast;
    case Collective::kPushPull: return push_pull;
    case Collective::kCustom: return custom;
  }
  return custom;
}

using RoundsForm = std::function<CollectiveRounds(int p, int64_t n, int64_t eb, const CollectiveOptions& o)>;

// The symbolic rounds registered beside their generators (each generator file states what its form equals).
const std::map<Algorithm, RoundsForm>& symbolic_forms(Collective kind) {
  static const std::map<Algorithm, RoundsForm> allreduce = {
      {Algorithm::kRing, [](int p, int64_t n, int64_t eb,
                            const CollectiveOptions&) { return ring_rounds(Collective::kAllReduce, p, n, eb); }},
      {Algorithm::kDirect,
       [](int p, int64_t n, int64_t eb, const CollectiveOptions&) { return direct_allreduce_rounds(p, n, eb); }},
      {Algorithm::kHierarchical, [](int p, int64_t n, int64_t eb,
                                    const CollectiveOptions& o) { return hierarchical_allreduce_rounds(p, n, eb, o); }},
      {Algorithm::kIntervalPairing,
       [](int p, int64_t n, int64_t eb, const CollectiveOptions&) {
         return interval_pairing_rounds(Collective::kAllReduce, p, n, eb);
       }},
      {Algorithm::kDoubleBinaryTree, [](int p, int64_t n, int64_t eb,
                                        const CollectiveOptions& o) { return double_binary_tree_rounds(p, n, eb, o.chunks); }},
  };
  static const std::map<Algorithm, RoundsForm> reduce_scatter = {
      {Algorithm::kRing, [](int p, int64_t n, int64_t eb,
                            const CollectiveOptions&) { return ring_rounds(Collective::kReduceScatter, p, n, eb); }},
      {Algorithm::kIntervalPairing,
       [](int p, int64_t n, int64_t eb, const CollectiveOptions&) {
         return interval_pairing_rounds(Collective::kReduceScatter, p, n, eb);
       }},
  };
  static const std::map<Algorithm, RoundsForm> allgather = {
      {Algorithm::kRing, [](int p, int64_t n, int64_t eb,
                            const CollectiveOptions&) { return ring_rounds(Collective::kAllGather, p, n, eb); }},
      {Algorithm::kIntervalPairing,
       [](int p, int64_t n, int64_t eb, const CollectiveOptions&) {
         return interval_pairing_rounds(Collective::kAllGather, p, n, eb);
       }},
  };
  static const std::map<Algorithm, RoundsForm> none;
  switch (kind) {
    case Collective::kAllReduce: return allreduce;
    case Collective::kReduceScatter: return reduce_scatter;
    case Collective::kAllGather: return allgather;
    case Collective::kReduce:
    case Collective::kBroadcast:
    case Collective::kPushPull:
    case Collective::kCustom: return none;
  }
  return none;
}

}  // namespace

bool has_symbolic_rounds(Collective kind, Algorithm algorithm) { return symbolic_forms(kind).count(algorithm) > 0; }

CollectiveRounds collective_rounds(Collective kind, Algorithm algorithm, int ranks, int64_t elements,
                                   int64_t element_bytes, const CollectiveOptions& options) {
  const auto& forms = symbolic_forms(kind);
  const auto it = forms.find(algorithm);
  if (it == forms.end()) return rounds_of(make_collective(kind, algorithm, ranks, elements, element_bytes, options));
  if (ranks < 1) throw InputError("", "--ranks", fmt::format("a positive rank count (got {})", ranks));
  if (elements < 0) throw InputError("", "--bytes", "a non-negative size");
  return it->second(ranks, elements, element_bytes, options);
}

std::vector<Collective> all_collectives() {
  return {Collective::kAllReduce, Collective::kReduceScatter, Collective::kAllGather, Collective::kReduce,
          Collective::kBroadcast, Collective::kPushPull,      Collective::kCustom};
}

std::vector<Algorithm> collective_algorithms(Collective kind) {
  std::vector<Algorithm> algorithms;
  for (const auto& [algorithm, gen] : generators(kind)) algorithms.push_back(algorithm);
  return algorithms;
}

Collective collective_from_name(const std::string& name, const std::string& option) {
  std::vector<std::string> known;
  for (Collective c : all_collectives()) {
    if (name == collective_name(c)) return c;
    known.emplace_back(collective_name(c));
  }
  throw InputError("", option, fmt::format("one of {} (got \"{}\")", fmt::join(known, ", "), name));
}

Schedule make_collective(Collective kind, Algorithm algorithm, int ranks, int64_t elements, int64_t element_bytes,
                         const CollectiveOptions& options) {
  const auto& table = generators(kind);
  const auto it = table.find(algorithm);
  if (it == table.end())
    throw InputError(
        "", "--algo",
        fmt::format("an algorithm for {}: one of {} (got \"{}\")", collective_name(kind),
                    fmt::join(algorithm_names(collective_algorithms(kind)), ", "), algorithm_name(algorithm)));
  if (ranks < 1) throw InputError("", "--ranks", fmt::format("a positive rank count (got {})", ranks));
  if (elements < 0) throw InputError("", "--bytes", "a non-negative size");
  if (element_bytes < 1) throw InputError("", "--element-bytes", "a positive element size");
  if (options.servers < 1) throw InputError("", "servers", fmt::format("at least 1 server (got {})", options.servers));
  if (options.chunks < 0 || options.chunks > kMaxChunks)
    throw InputError("", "--chunks",
                     fmt::format("a chunk count in [0, {}] (0: automatic; got {})", kMaxChunks, options.chunks));
  if (options.root < 0 || options.root >= ranks)
    throw InputError("", "root", fmt::format("a root rank in 0..{} (got {})", ranks - 1, options.root));
  Schedule s = it->second(ranks, elements, element_bytes, options);
  s.name =
      kind == Collective::kAllReduce ? s.name : fmt::format("{} {}", algorithm_name(algorithm), collective_name(kind));
  return s;
}

}  // namespace scaletwin::plan
