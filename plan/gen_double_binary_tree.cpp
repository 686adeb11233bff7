// Double binary tree all-reduce (NCCL 2.4: Sanders, Speck and Träff's two complementary trees, as NCCL builds
// them in ncclGetBtree / ncclGetDtree).
//
//   tree 0: the bit tree on ranks 0..p-1 (root 0; a rank's parent clears its lowest set bit and sets the next:
//           p = 8:  0 ← 4 ← {2 ← {1,3}, 6 ← {5,7}})
//   tree 1: the mirror (p even: r ↔ p−1−r) or the shift by one (p odd) of tree 0, so that most ranks that are
//           inner nodes in one tree are leaves in the other.
//   Tree t carries half t of the buffer (channel t), cut into C chunks and pipelined:
//     reduce, chunk c:    RecvReduce c from each child; then Send c to the parent (after chunk c−1 went up)
//     broadcast, chunk c: Recv c from the parent (after this rank sent its partial of c up);
//                         then Send c to each child (after chunk c−1 went to that child)
//   The "after chunk c−1" deps serialize each link, which is what makes the pipeline a pipeline under the
//   contention-free cost model.
//
// Steps (rounds): about 2·depth + 2(C − 1), depth = ⌈log2 p⌉ (the longest dependency chain, measured by verify).
// Bytes sent per rank: Σ_t (n/2)·(children_t(r) + [r is not root_t]); at most 3n/2 + n/2 = 2n, about 2n for
// inner-in-one-tree ranks.
// Preconditions: p ≥ 1, n ≥ 0, C ≥ 1 (C = 0 picks ⌈half bytes / 256 KiB⌉ capped to 1..16).
#include <algorithm>
#include <vector>

#include "plan/collectives.hpp"
#include "plan/compose.hpp"

namespace scaletwin::plan {

int btree_parent(int p, int rank) {
  if (rank == 0) return -1;
  int bit = 1;
  while ((rank & bit) == 0) bit <<= 1;
  const int up = (rank ^ bit) | (bit << 1);
  return up < p ? up : (rank ^ bit);
}

int dtree_parent(int p, int rank) {
  if (p % 2 == 1) {
    const int u = btree_parent(p, (rank - 1 + p) % p);
    return u < 0 ? -1 : (u + 1) % p;
  }
  const int u = btree_parent(p, p - 1 - rank);
  return u < 0 ? -1 : p - 1 - u;
}

namespace {

Step make_step(OpKind op, int peer, int channel, int64_t offset, int64_t length, std::vector<int> deps) {
  return Step{op, peer, channel, offset, length, 0, std::move(deps)};
}

// Adds tree `t` (channel t) over elements [begin, end) cut into `chunks` pieces.
void add_tree(ScheduleBuilder& b, int p, int t, int64_t begin, int64_t end, int chunks) {
  std::vector<int> parent(static_cast<size_t>(p));
  std::vector<std::vector<int>> children(static_cast<size_t>(p));
  for (int r = 0; r < p; ++r) {
    parent[static_cast<size_t>(r)] = t == 0 ? btree_parent(p, r) : dtree_parent(p, r);
    if (parent[static_cast<size_t>(r)] >= 0) children[static_cast<size_t>(parent[static_cast<size_t>(r)])].push_back(r);
  }
  const int64_t len = end - begin;
  for (int r = 0; r < p; ++r) {
    const int up = parent[static_cast<size_t>(r)];
    const auto& kids = children[static_cast<size_t>(r)];
    std::vector<std::vector<int>> reduced(static_cast<size_t>(chunks));
    std::vector<int> sent_up(static_cast<size_t>(chunks), -1);
    int prev_up = -1;
    for (int c = 0; c < chunks; ++c) {  // reduce phase
      const int64_t off = begin + part_offset(len, chunks, c), n = begin + part_offset(len, chunks, c + 1) - off;
      if (n == 0) continue;
      for (int kid : kids)
        reduced[static_cast<size_t>(c)].push_back(b.add(r, make_step(OpKind::kRecvReduce, kid, t, off, n, {})));
      if (up < 0) continue;
      std::vector<int> deps = reduced[static_cast<size_t>(c)];
      if (prev_up >= 0) deps.push_back(prev_up);
      prev_up = sent_up[static_cast<size_t>(c)] = b.add(r, make_step(OpKind::kSend, up, t, off, n, deps));
    }
    std::vector<int> prev_down(kids.size(), -1);
    for (int c = 0; c < chunks; ++c) {  // broadcast phase
      const int64_t off = begin + part_offset(len, chunks, c), n = begin + part_offset(len, chunks, c + 1) - off;
      if (n == 0) continue;
      std::vector<int> final_deps = reduced[static_cast<size_t>(c)];
      if (up >= 0) final_deps = {b.add(r, make_step(OpKind::kRecv, up, t, off, n, {sent_up[static_cast<size_t>(c)]}))};
      for (size_t i = 0; i < kids.size(); ++i) {
        std::vector<int> deps = final_deps;
        if (prev_down[i] >= 0) deps.push_back(prev_down[i]);
        prev_down[i] = b.add(r, make_step(OpKind::kSend, kids[i], t, off, n, deps));
      }
    }
  }
}

int automatic_chunks(int64_t half_bytes) {
  const int64_t chunk_bytes = 256 * 1024;
  return static_cast<int>(std::clamp<int64_t>((half_bytes + chunk_bytes - 1) / chunk_bytes, 1, 16));
}

}  // namespace

Schedule double_binary_tree_allreduce(int p, int64_t n, int64_t element_bytes, int chunks) {
  ScheduleBuilder b("double_binary_tree", p, n, element_bytes);
  const int64_t mid = n / 2;
  if (chunks <= 0) chunks = automatic_chunks((n - mid) * element_bytes);
  if (p > 1) {
    add_tree(b, p, 0, 0, mid, chunks);
    add_tree(b, p, 1, mid, n, chunks);
  }
  b.set_channels(2);
  Schedule s = b.finish();
  set_data_model(s, Collective::kAllReduce, InitialData::kOwn, Goal::kReducedAll);
  return s;
}

}  // namespace scaletwin::plan
