// The collective registry: every algorithm is one generator that returns a Schedule (plan/gen_*.cpp, each opening
// with its step diagram, step count, bytes-per-rank formula, preconditions and reference).
//
// make_collective(kind, algorithm, ranks, elements, element_bytes, options) is the one entry point for the rest of
// scaletwin; a (kind, algorithm) pair without a generator throws InputError listing the known ones. Conventions shared
// by every generator: n = elements, p = ranks, the buffer is split into p balanced chunks (part_offset), chunk r is
// rank r's slice for reduce-scatter and all-gather; zero-length transfers are omitted (elements < p is fine).
//
// Parameter-server schedules have ranks + servers ranks: workers 0..ranks-1, then shards ranks..ranks+servers-1;
// shard j owns slice part(n, servers, j), or the j-th of CollectiveOptions::shard_sizes. The placement of the spec (host_cpu, device, colocated, dedicated) is
// which endpoint plays each shard rank: the lowering's business, not the schedule's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plan/algorithm.hpp"
#include "plan/rounds.hpp"
#include "plan/schedule.hpp"

namespace scaletwin::plan {

// The most pipeline chunks a tree may be cut into: NCCL pipelines a tree in tens of chunks, and every chunk adds
// steps on every rank (--chunks 10^9 would build billions of them).
inline constexpr int kMaxChunks = 1024;

struct CollectiveOptions {
  int ranks_per_node = 0;       // hierarchical: ranks per node (ranks must be a multiple); 0 = ranks
  Algorithm intra = Algorithm::kRing;  // hierarchical: reduce-scatter / all-gather inside a node; hybrid: its algorithm
  Algorithm inter = Algorithm::kRing;  // hierarchical: all-reduce between nodes
  int chunks = 0;               // double_binary_tree: pipeline chunks per tree (0 = automatic), at most kMaxChunks
  int servers = 1;              // parameter server: k shards ("ps_async" / "async" use one worker, whatever ranks)
  // parameter server: the elements each shard owns, in shard order (k entries summing to the elements; shards of 0
  // take no part); empty: equal parts, part(n, k, j)
  std::vector<int64_t> shard_sizes;
  int root = 0;                 // reduce / broadcast
};

Schedule make_collective(Collective kind, Algorithm algorithm, int ranks, int64_t elements, int64_t element_bytes,
                         const CollectiveOptions& options = {});
std::vector<Algorithm> collective_algorithms(Collective kind);
// The rounds (plan/rounds.hpp) of make_collective(kind, algorithm, ...): the generator's symbolic form where it
// registers one (has_symbolic_rounds), else extracted from the generated schedule (rounds_of).
CollectiveRounds collective_rounds(Collective kind, Algorithm algorithm, int ranks, int64_t elements,
                                   int64_t element_bytes, const CollectiveOptions& options = {});
bool has_symbolic_rounds(Collective kind, Algorithm algorithm);
std::vector<Collective> all_collectives();
// "allreduce", "reduce_scatter", ... (collective_name); InputError listing the known names otherwise.
Collective collective_from_name(const std::string& name, const std::string& option = "--collective");

// Generators (one file each; see the diagrams there).
Schedule ring_reduce_scatter(int p, int64_t n, int64_t element_bytes);
Schedule ring_allgather(int p, int64_t n, int64_t element_bytes);
Schedule ring_allreduce(int p, int64_t n, int64_t element_bytes);
// Symbolic rounds of the three ring collectives (see gen_ring.cpp).
CollectiveRounds ring_rounds(Collective collective, int p, int64_t n, int64_t element_bytes);

Schedule interval_pairing_reduce_scatter(int p, int64_t n, int64_t element_bytes);
Schedule interval_pairing_allgather(int p, int64_t n, int64_t element_bytes);
Schedule interval_pairing_allreduce(int p, int64_t n, int64_t element_bytes);
// Symbolic rounds of the three interval-pairing collectives (see gen_interval_pairing.cpp).
CollectiveRounds interval_pairing_rounds(Collective collective, int p, int64_t n, int64_t element_bytes);

Schedule halving_doubling_reduce_scatter(int p, int64_t n, int64_t element_bytes);
Schedule halving_doubling_allgather(int p, int64_t n, int64_t element_bytes);
Schedule halving_doubling_allreduce(int p, int64_t n, int64_t element_bytes);

Schedule double_binary_tree_allreduce(int p, int64_t n, int64_t element_bytes, int chunks);
// Symbolic rounds of the double binary tree (see gen_double_binary_tree.cpp).
CollectiveRounds double_binary_tree_rounds(int p, int64_t n, int64_t element_bytes, int chunks);
// Parent of `rank` in the first tree (-1 for the root) and in the second one; exposed for tests.
int btree_parent(int p, int rank);
int dtree_parent(int p, int rank);

Schedule direct_allreduce(int p, int64_t n, int64_t element_bytes);
CollectiveRounds direct_allreduce_rounds(int p, int64_t n, int64_t element_bytes);  // see gen_direct.cpp
Schedule direct_reduce_scatter(int p, int64_t n, int64_t element_bytes);
Schedule direct_allgather(int p, int64_t n, int64_t element_bytes);

Schedule binomial_reduce(int p, int64_t n, int64_t element_bytes, int root);
Schedule binomial_broadcast(int p, int64_t n, int64_t element_bytes, int root);

// Shard j's slice of a parameter-server schedule is [bounds[j], bounds[j + 1]): equal parts of n over `servers`, or
// the given shard_sizes (CollectiveOptions::shard_sizes: one per shard, summing to n).
std::vector<int64_t> ps_shard_bounds(int servers, int64_t n, const std::vector<int64_t>& shard_sizes);
// shard_sizes: the elements of each shard (CollectiveOptions::shard_sizes); empty: equal parts.
Schedule ps_push(int workers, int servers, int64_t n, int64_t element_bytes,
                 const std::vector<int64_t>& shard_sizes = {});
Schedule ps_pull(int workers, int servers, int64_t n, int64_t element_bytes,
                 const std::vector<int64_t>& shard_sizes = {});
Schedule ps_push_pull(int workers, int servers, int64_t n, int64_t element_bytes,
                      const std::vector<int64_t>& shard_sizes = {});

Schedule hierarchical_allreduce(int p, int64_t n, int64_t element_bytes, const CollectiveOptions& options);
CollectiveRounds hierarchical_allreduce_rounds(int p, int64_t n, int64_t element_bytes,
                                               const CollectiveOptions& options);  // see gen_hierarchical.cpp
// The hybrid's traffic for one model-parallel layer: an all-gather of activations (elements [0, n)) then a
// reduce-scatter of input gradients (elements [n, 2n)), with options.intra as the algorithm of both.
Schedule hybrid_traffic(int p, int64_t n, int64_t element_bytes, Algorithm algorithm);

}  // namespace scaletwin::plan
