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
//
// Symbolic rounds (double_binary_tree_rounds; equal to rounds_of the schedule, flow order included, tested): with
// h(r) the height of r in tree t (a leaf 0) and c the index among the non-empty chunks, the levels of the steps above
// are, by induction over the deps,
//   up,   r → parent, chunk c:  U(r, c) = h(r) + c + 1
//   down, parent q → r, chunk c: D(r, c) = 1 + max(U(r, c), F(q, c), D(r, c − 1)),  D(r, −1) = 0,
//                                F(q, c) = D(q, c) for an inner q, h(q) + c for the root (its children's largest U)
// so the rounds come from O(p·C) numbers instead of the schedule's steps and their dependency graph.
#include <algorithm>
#include <tuple>
#include <vector>

#include "plan/rounds.hpp"

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

// A transfer of tree `t` at its level, with what orders it in rounds_of's listing: its source, the tree, the phase
// (up before down: add_tree adds every reduce step first), the chunk and the child's place among its siblings.
struct TreeFlow {
  int level;
  int src, tree, phase, chunk, kid;
  LevelFlow flow;
};

// The transfers of tree `t` over elements [begin, end) in `chunks` pieces, with their levels (see the header).
void tree_flows(int p, int t, int64_t begin, int64_t end, int chunks, int64_t element_bytes, std::vector<TreeFlow>& out) {
  std::vector<int64_t> lengths;  // of the non-empty chunks
  const int64_t len = end - begin;
  for (int c = 0; c < chunks; ++c) {
    const int64_t n = part_offset(len, chunks, c + 1) - part_offset(len, chunks, c);
    if (n > 0) lengths.push_back(n);
  }
  if (lengths.empty() || p < 2) return;
  std::vector<int> parent(static_cast<size_t>(p)), height(static_cast<size_t>(p), 0), depth(static_cast<size_t>(p), 0);
  std::vector<std::vector<int>> children(static_cast<size_t>(p));
  int root = -1;
  for (int r = 0; r < p; ++r) {
    parent[static_cast<size_t>(r)] = t == 0 ? btree_parent(p, r) : dtree_parent(p, r);
    if (parent[static_cast<size_t>(r)] >= 0) children[static_cast<size_t>(parent[static_cast<size_t>(r)])].push_back(r);
    else root = r;
  }
  std::vector<int> order = {root};  // parents before children
  for (size_t i = 0; i < order.size(); ++i)
    for (int kid : children[static_cast<size_t>(order[i])]) {
      depth[static_cast<size_t>(kid)] = depth[static_cast<size_t>(order[i])] + 1;
      order.push_back(kid);
    }
  for (auto it = order.rbegin(); it != order.rend(); ++it)
    if (const int up = parent[static_cast<size_t>(*it)]; up >= 0)
      height[static_cast<size_t>(up)] = std::max(height[static_cast<size_t>(up)], height[static_cast<size_t>(*it)] + 1);
  const int count = static_cast<int>(lengths.size());
  std::vector<int> down(static_cast<size_t>(p) * static_cast<size_t>(count), 0);  // D(r, c)
  const auto d_of = [&](int r, int c) -> int& { return down[static_cast<size_t>(r) * static_cast<size_t>(count) + static_cast<size_t>(c)]; };
  for (int r : order) {
    const int q = parent[static_cast<size_t>(r)];
    if (q < 0) continue;
    const auto& siblings = children[static_cast<size_t>(q)];
    const int kid = static_cast<int>(std::find(siblings.begin(), siblings.end(), r) - siblings.begin());
    for (int c = 0; c < count; ++c) {
      const int64_t bytes = lengths[static_cast<size_t>(c)] * element_bytes;
      const int u = height[static_cast<size_t>(r)] + c + 1;
      out.push_back({u, r, t, 0, c, 0, {r, q, bytes, true}});
      const int f = parent[static_cast<size_t>(q)] >= 0 ? d_of(q, c) : height[static_cast<size_t>(q)] + c;
      const int d = 1 + std::max({u, f, c > 0 ? d_of(r, c - 1) : 0});
      d_of(r, c) = d;
      out.push_back({d, q, t, 1, c, kid, {q, r, bytes, false}});
    }
  }
}

}  // namespace

CollectiveRounds double_binary_tree_rounds(int p, int64_t n, int64_t element_bytes, int chunks) {
  const int64_t mid = n / 2;
  if (chunks <= 0) chunks = automatic_chunks((n - mid) * element_bytes);
  std::vector<TreeFlow> flows;
  tree_flows(p, 0, 0, mid, chunks, element_bytes, flows);
  tree_flows(p, 1, mid, n, chunks, element_bytes, flows);
  std::sort(flows.begin(), flows.end(), [](const TreeFlow& a, const TreeFlow& b) {
    return std::tie(a.level, a.src, a.tree, a.phase, a.chunk, a.kid) < std::tie(b.level, b.src, b.tree, b.phase, b.chunk, b.kid);
  });
  std::vector<std::vector<LevelFlow>> levels(flows.empty() ? 0 : static_cast<size_t>(flows.back().level));
  for (const TreeFlow& f : flows) levels[static_cast<size_t>(f.level) - 1].push_back(f.flow);
  return rounds_of_levels(p, std::move(levels));
}

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
