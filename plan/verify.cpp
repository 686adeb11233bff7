// The symbolic verifier (see verify.hpp): shape checks, FIFO matching, event-driven execution over run-length
// encoded contribution counts, post-conditions.
#include "plan/verify.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <memory>
#include <stdexcept>

#include "plan/compose.hpp"

namespace scaletwin::plan {

namespace {

// ---- contribution counts: sorted, disjoint, maximal runs of ranks with the same count --------------------------

struct Run {
  int first, last, count;
};
using Counts = std::vector<Run>;
using CountsPtr = std::shared_ptr<const Counts>;  // nullptr = no contribution

void push_run(Counts& out, int first, int last, int count) {
  if (count == 0 || first > last) return;
  if (!out.empty() && out.back().last + 1 == first && out.back().count == count) {
    out.back().last = last;
  } else {
    out.push_back({first, last, count});
  }
}

CountsPtr add(const CountsPtr& a, const CountsPtr& b) {
  if (!a || a->empty()) return b;
  if (!b || b->empty()) return a;
  auto out = std::make_shared<Counts>();
  size_t i = 0, j = 0;
  Run x = (*a)[0], y = (*b)[0];
  bool hx = true, hy = true;
  auto next_x = [&] { hx = ++i < a->size(); if (hx) x = (*a)[i]; };
  auto next_y = [&] { hy = ++j < b->size(); if (hy) y = (*b)[j]; };
  while (hx || hy) {
    if (hx && (!hy || x.last < y.first)) {
      push_run(*out, x.first, x.last, x.count);
      next_x();
    } else if (hy && (!hx || y.last < x.first)) {
      push_run(*out, y.first, y.last, y.count);
      next_y();
    } else if (x.first < y.first) {
      push_run(*out, x.first, y.first - 1, x.count);
      x.first = y.first;
    } else if (y.first < x.first) {
      push_run(*out, y.first, x.first - 1, y.count);
      y.first = x.first;
    } else {
      const int end = std::min(x.last, y.last);
      push_run(*out, x.first, end, x.count + y.count);
      if (x.last == end) next_x(); else x.first = end + 1;
      if (y.last == end) next_y(); else y.first = end + 1;
    }
  }
  return out;
}

bool same(const CountsPtr& a, const CountsPtr& b) {
  if (a == b) return true;
  const bool ea = !a || a->empty(), eb = !b || b->empty();
  if (ea || eb) return ea && eb;
  if (a->size() != b->size()) return false;
  for (size_t i = 0; i < a->size(); ++i)
    if ((*a)[i].first != (*b)[i].first || (*a)[i].last != (*b)[i].last || (*a)[i].count != (*b)[i].count) return false;
  return true;
}

std::string describe(const CountsPtr& c) {
  if (!c || c->empty()) return "nothing";
  std::string out = "{";
  for (size_t i = 0; i < c->size() && i < 8; ++i) {
    const Run& r = (*c)[i];
    out += (i ? ", " : "") + (r.first == r.last ? fmt::format("{}", r.first) : fmt::format("{}-{}", r.first, r.last)) +
           fmt::format("×{}", r.count);
  }
  return out + (c->size() > 8 ? ", …}" : "}");
}

// ---- a rank's buffer: element ranges → counts ----------------------------------------------------------------

struct Piece {
  int64_t begin, end;  // relative to the start of the range read
  CountsPtr value;
};

// Sorted segment starts in one vector (binary search over contiguous memory), values beside them.
class Buffer {
 public:
  explicit Buffer(int64_t size) : size_(size), starts_{0}, values_{nullptr} {}

  std::vector<Piece> read(int64_t off, int64_t len) const {
    std::vector<Piece> out;
    for (size_t i = find(off); i < starts_.size() && starts_[i] < off + len; ++i) {
      const int64_t b = std::max(starts_[i], off), e = std::min(end(i), off + len);
      out.push_back({b - off, e - off, values_[i]});
    }
    return out;
  }

  void write(int64_t off, const std::vector<Piece>& pieces) {
    const int64_t stop = off + pieces.back().end;
    split(off);
    split(stop);
    const size_t first = find(off), last = stop >= size_ ? starts_.size() : find(stop);
    if (last - first == pieces.size()) {
      for (size_t k = 0; k < pieces.size(); ++k) {
        starts_[first + k] = off + pieces[k].begin;
        values_[first + k] = pieces[k].value;
      }
    } else {
      starts_.erase(starts_.begin() + static_cast<std::ptrdiff_t>(first), starts_.begin() + static_cast<std::ptrdiff_t>(last));
      values_.erase(values_.begin() + static_cast<std::ptrdiff_t>(first), values_.begin() + static_cast<std::ptrdiff_t>(last));
      std::vector<int64_t> starts;
      std::vector<CountsPtr> values;
      for (const Piece& p : pieces) {
        starts.push_back(off + p.begin);
        values.push_back(p.value);
      }
      starts_.insert(starts_.begin() + static_cast<std::ptrdiff_t>(first), starts.begin(), starts.end());
      values_.insert(values_.begin() + static_cast<std::ptrdiff_t>(first), values.begin(), values.end());
    }
    // Coalesce equal neighbours (all-gathers fill the buffer with equal counts): keeps the buffers small.
    merge_at(stop);
    for (size_t k = pieces.size(); k-- > 0;) merge_at(off + pieces[k].begin);
  }

  void reduce(int64_t off, const std::vector<Piece>& pieces) {
    for (const Piece& p : pieces) {
      split(off + p.begin);
      split(off + p.end);
      for (size_t i = find(off + p.begin); i < starts_.size() && starts_[i] < off + p.end; ++i)
        values_[i] = add(values_[i], p.value);
    }
  }

 private:
  size_t find(int64_t x) const {
    return static_cast<size_t>(std::upper_bound(starts_.begin(), starts_.end(), x) - starts_.begin()) - 1;
  }
  int64_t end(size_t i) const { return i + 1 < starts_.size() ? starts_[i + 1] : size_; }
  void split(int64_t x) {
    if (x >= size_) return;
    const size_t i = find(x);
    if (starts_[i] == x) return;
    starts_.insert(starts_.begin() + static_cast<std::ptrdiff_t>(i + 1), x);
    values_.insert(values_.begin() + static_cast<std::ptrdiff_t>(i + 1), values_[i]);
  }
  void merge_at(int64_t x) {
    if (x <= 0 || x >= size_) return;
    const size_t i = find(x);
    if (starts_[i] != x || !same(values_[i - 1], values_[i])) return;
    starts_.erase(starts_.begin() + static_cast<std::ptrdiff_t>(i));
    values_.erase(values_.begin() + static_cast<std::ptrdiff_t>(i));
  }
  int64_t size_;
  std::vector<int64_t> starts_;
  std::vector<CountsPtr> values_;
};

class VerifyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] void fail(const std::string& message) { throw VerifyError(message); }

class Verifier {
 public:
  explicit Verifier(const Schedule& s) : s_(s), regions_(data_regions(s)) {}

  int run() {
    check_shape();
    index_steps();
    match();
    init_buffers();
    execute();
    check_goals();
    return rounds_;
  }

 private:
  const Step& step(int32_t g) const { return *step_of_[static_cast<size_t>(g)]; }
  std::string where(int32_t g) const {
    const Step& st = step(g);
    const int r = rank_of_[static_cast<size_t>(g)];
    return fmt::format("rank {} step {} ({} [{}, {}) {} rank {}, channel {})", r, g - base_[static_cast<size_t>(r)],
                       op_kind_name(st.op), st.offset, st.offset + st.length,
                       st.op == OpKind::kSend ? "to" : "from", st.peer, st.channel);
  }

  void check_shape();
  void check_regions();
  void index_steps();
  void match();
  void init_buffers();
  void execute();
  void transfer(int32_t send, int32_t recv);
  void complete(int32_t g, int level, std::deque<int32_t>& queue);
  void check_goals();
  void check_range(int rank, int64_t begin, int64_t end, const std::vector<Piece>& expected, const char* goal);

  const Schedule& s_;
  std::vector<Schedule::DataRegion> regions_;
  int64_t total_ = 0;
  std::vector<int64_t> base_;
  std::vector<int> rank_of_;
  std::vector<const Step*> step_of_;
  std::vector<int32_t> match_;
  std::vector<Buffer> buffers_;
  int rounds_ = 0;
  // execution state, per global step
  std::vector<int32_t> pending_, first_dependent_, dependents_;
  std::vector<int> level_, base_level_;
  std::vector<char> ready_, done_;
  bool done(size_t g) const { return done_[g] != 0; }
};

void Verifier::check_shape() {
  if (s_.ranks < 1 || static_cast<int>(s_.programs.size()) != s_.ranks)
    fail(fmt::format("{} programs for {} ranks", s_.programs.size(), s_.ranks));
  if (s_.elements < 0 || s_.scratch_elements < 0 || s_.element_bytes < 1 || s_.channels < 1)
    fail("negative elements or scratch, or no channel");
  total_ = s_.elements + s_.scratch_elements;
  for (int r = 0; r < s_.ranks; ++r) {
    const auto& steps = s_.programs[static_cast<size_t>(r)].steps;
    for (size_t i = 0; i < steps.size(); ++i) {
      const Step& st = steps[i];
      const std::string at = fmt::format("rank {} step {}", r, i);
      if (st.length <= 0) fail(at + ": length must be positive");
      if (st.offset < 0 || st.offset + st.length > total_) fail(at + ": range outside the buffer");
      if (st.op == OpKind::kCopy) {
        if (st.src_offset < 0 || st.src_offset + st.length > total_) fail(at + ": copy source outside the buffer");
      } else {
        if (st.peer < 0 || st.peer >= s_.ranks || st.peer == r) fail(at + fmt::format(": bad peer {}", st.peer));
        if (st.channel < 0 || st.channel >= s_.channels) fail(at + fmt::format(": bad channel {}", st.channel));
      }
      for (int d : st.deps)
        if (d < 0 || d >= static_cast<int>(i)) fail(at + fmt::format(": dep {} does not point to an earlier step", d));
    }
  }
  check_regions();
}

void Verifier::check_regions() {
  const auto p = static_cast<size_t>(s_.ranks);
  for (const auto& reg : regions_) {
    if (reg.offset < 0 || reg.length < 0 || reg.offset + reg.length > s_.elements) fail("data region outside the buffer");
    if (reg.initial.size() != p || reg.goal.size() != p) fail("initial/goal not sized to the ranks");
    bool slices = false;
    for (size_t r = 0; r < p; ++r)
      slices |= reg.initial[r] == InitialData::kOwnSlice || reg.goal[r] == Goal::kReducedSlice;
    if (!slices) continue;
    if (reg.slice_offset.size() != p || reg.slice_length.size() != p) fail("slices not sized to the ranks");
    for (size_t r = 0; r < p; ++r)
      if (reg.slice_length[r] < 0 || reg.slice_offset[r] < reg.offset ||
          reg.slice_offset[r] + reg.slice_length[r] > reg.offset + reg.length)
        fail(fmt::format("rank {}'s slice lies outside its data region", r));
  }
}

void Verifier::index_steps() {
  int64_t n = 0;
  for (int r = 0; r < s_.ranks; ++r) {
    base_.push_back(n);
    n += static_cast<int64_t>(s_.programs[static_cast<size_t>(r)].steps.size());
  }
  if (n >= (int64_t{1} << 31)) fail("too many steps");
  rank_of_.reserve(static_cast<size_t>(n));
  step_of_.reserve(static_cast<size_t>(n));
  for (int r = 0; r < s_.ranks; ++r)
    for (const Step& st : s_.programs[static_cast<size_t>(r)].steps) {
      rank_of_.push_back(r);
      step_of_.push_back(&st);
    }
}

void Verifier::match() {
  // (src, dst, channel) key, then program order: a stable sort keeps program order within a key.
  struct Entry {
    uint64_t key;
    int32_t g;
  };
  std::vector<Entry> sends, recvs;
  const auto key = [&](int src, int dst, int ch) {
    return (static_cast<uint64_t>(src) * static_cast<uint64_t>(s_.ranks) + static_cast<uint64_t>(dst)) *
               static_cast<uint64_t>(s_.channels) + static_cast<uint64_t>(ch);
  };
  for (int32_t g = 0; g < static_cast<int32_t>(rank_of_.size()); ++g) {
    const Step& st = step(g);
    const int r = rank_of_[static_cast<size_t>(g)];
    if (st.op == OpKind::kSend) sends.push_back({key(r, st.peer, st.channel), g});
    if (st.op == OpKind::kRecv || st.op == OpKind::kRecvReduce) recvs.push_back({key(st.peer, r, st.channel), g});
  }
  const auto by_key = [](const Entry& a, const Entry& b) { return a.key < b.key; };
  std::stable_sort(sends.begin(), sends.end(), by_key);
  std::stable_sort(recvs.begin(), recvs.end(), by_key);
  match_.assign(rank_of_.size(), -1);
  size_t i = 0, j = 0;
  while (i < sends.size() || j < recvs.size()) {
    if (j == recvs.size() || (i < sends.size() && sends[i].key < recvs[j].key))
      fail(fmt::format("unmatched send: {} has no matching receive", where(sends[i].g)));
    if (i == sends.size() || recvs[j].key < sends[i].key)
      fail(fmt::format("unmatched receive: {} has no matching send", where(recvs[j].g)));
    const int32_t a = sends[i++].g, b = recvs[j++].g;
    if (step(a).length != step(b).length)
      fail(fmt::format("length mismatch: {} meets {}", where(a), where(b)));
    match_[static_cast<size_t>(a)] = b;
    match_[static_cast<size_t>(b)] = a;
  }
}

void Verifier::init_buffers() {
  buffers_.assign(static_cast<size_t>(s_.ranks), Buffer(total_));
  for (const auto& reg : regions_)
    for (int r = 0; r < s_.ranks; ++r) {
      const auto own = std::make_shared<const Counts>(Counts{{r, r, 1}});
      const auto i = static_cast<size_t>(r);
      if (reg.initial[i] == InitialData::kOwn && reg.length > 0)
        buffers_[i].write(reg.offset, {{0, reg.length, own}});
      if (reg.initial[i] == InitialData::kOwnSlice && reg.slice_length[i] > 0)
        buffers_[i].write(reg.slice_offset[i], {{0, reg.slice_length[i], own}});
    }
}

void Verifier::transfer(int32_t send, int32_t recv) {
  const Step& a = step(send);
  const Step& b = step(recv);
  const auto data = buffers_[static_cast<size_t>(rank_of_[static_cast<size_t>(send)])].read(a.offset, a.length);
  Buffer& dst = buffers_[static_cast<size_t>(rank_of_[static_cast<size_t>(recv)])];
  if (b.op == OpKind::kRecv) dst.write(b.offset, data);
  else dst.reduce(b.offset, data);
}

void Verifier::execute() {
  const size_t n = rank_of_.size();
  std::vector<int32_t> pending(n, 0), first_dependent(n + 1, 0), dependents;
  for (size_t g = 0; g < n; ++g)
    for (int d : step(static_cast<int32_t>(g)).deps) {
      ++pending[g];
      ++first_dependent[static_cast<size_t>(base_[static_cast<size_t>(rank_of_[g])] + d) + 1];
    }
  for (size_t g = 0; g < n; ++g) first_dependent[g + 1] += first_dependent[g];
  dependents.resize(static_cast<size_t>(first_dependent[n]));
  std::vector<int32_t> fill(first_dependent.begin(), first_dependent.end() - 1);
  for (size_t g = 0; g < n; ++g)
    for (int d : step(static_cast<int32_t>(g)).deps)
      dependents[static_cast<size_t>(fill[static_cast<size_t>(base_[static_cast<size_t>(rank_of_[g])] + d)]++)] =
          static_cast<int32_t>(g);
  level_.assign(n, 0);
  base_level_.assign(n, 0);
  ready_.assign(n, 0);
  done_.assign(n, 0);
  pending_ = std::move(pending);
  first_dependent_ = std::move(first_dependent);
  dependents_ = std::move(dependents);
  std::deque<int32_t> queue;
  for (size_t g = 0; g < n; ++g)
    if (pending_[g] == 0) queue.push_back(static_cast<int32_t>(g));
  size_t completed = 0;
  while (!queue.empty()) {
    const int32_t g = queue.front();
    queue.pop_front();
    const Step& st = step(g);
    if (st.op == OpKind::kCopy) {
      Buffer& buf = buffers_[static_cast<size_t>(rank_of_[static_cast<size_t>(g)])];
      buf.write(st.offset, buf.read(st.src_offset, st.length));
      complete(g, base_level_[static_cast<size_t>(g)], queue);
      ++completed;
      continue;
    }
    ready_[static_cast<size_t>(g)] = 1;
    const int32_t m = match_[static_cast<size_t>(g)];
    if (!ready_[static_cast<size_t>(m)]) continue;
    const int32_t send = st.op == OpKind::kSend ? g : m, recv = st.op == OpKind::kSend ? m : g;
    transfer(send, recv);
    const int level = std::max(base_level_[static_cast<size_t>(g)], base_level_[static_cast<size_t>(m)]) + 1;
    rounds_ = std::max(rounds_, level);
    complete(send, level, queue);
    complete(recv, level, queue);
    completed += 2;
  }
  if (completed == n) return;
  std::string blocked;
  int shown = 0;
  for (size_t g = 0; g < n && shown < 3; ++g)
    if (ready_[g] && !done(g)) {
      blocked += fmt::format("{}{} waits for {}", shown ? "; " : "", where(static_cast<int32_t>(g)),
                             where(match_[g]));
      ++shown;
    }
  fail(fmt::format("deadlock: {} of {} steps never ran; {}", n - completed, n,
                   blocked.empty() ? "no step is ready" : blocked));
}


void Verifier::complete(int32_t g, int level, std::deque<int32_t>& queue) {
  const auto i = static_cast<size_t>(g);
  done_[i] = 1;
  level_[i] = level;
  for (int32_t k = first_dependent_[i]; k < first_dependent_[i + 1]; ++k) {
    const auto d = static_cast<size_t>(dependents_[static_cast<size_t>(k)]);
    base_level_[d] = std::max(base_level_[d], level);
    if (--pending_[d] == 0) queue.push_back(static_cast<int32_t>(d));
  }
}

void Verifier::check_range(int rank, int64_t begin, int64_t end, const std::vector<Piece>& expected, const char* goal) {
  if (end <= begin) return;
  const auto held = buffers_[static_cast<size_t>(rank)].read(begin, end - begin);
  size_t i = 0, j = 0;
  while (i < held.size() && j < expected.size()) {
    const int64_t b = std::max(held[i].begin, expected[j].begin), e = std::min(held[i].end, expected[j].end);
    if (b < e && !same(held[i].value, expected[j].value))
      fail(fmt::format("rank {}, elements [{}, {}): holds {} but the goal ({}) needs {}", rank, begin + b, begin + e,
                       describe(held[i].value), goal, describe(expected[j].value)));
    if (held[i].end == e) ++i;
    if (expected[j].end == e) ++j;
  }
}

void Verifier::check_goals() {
  for (const auto& reg : regions_) {
    Counts contributors;
    std::vector<std::pair<int64_t, int>> owners;  // (slice offset, rank) of kOwnSlice ranks
    for (int r = 0; r < s_.ranks; ++r) {
      const auto i = static_cast<size_t>(r);
      if (reg.initial[i] == InitialData::kOwn) push_run(contributors, r, r, 1);
      if (reg.initial[i] == InitialData::kOwnSlice && reg.slice_length[i] > 0) owners.push_back({reg.slice_offset[i], r});
    }
    const auto all = std::make_shared<const Counts>(contributors);
    // What kGatheredAll needs over the region: each owner's data on its slice, nothing elsewhere.
    std::sort(owners.begin(), owners.end());
    std::vector<Piece> gathered;
    int64_t at = reg.offset;
    for (const auto& [off, r] : owners) {
      if (off < at) fail(fmt::format("data model: rank {}'s slice overlaps another owner's", r));
      if (off > at) gathered.push_back({at - reg.offset, off - reg.offset, nullptr});
      at = off + reg.slice_length[static_cast<size_t>(r)];
      gathered.push_back({off - reg.offset, at - reg.offset, std::make_shared<const Counts>(Counts{{r, r, 1}})});
    }
    if (at < reg.offset + reg.length) gathered.push_back({at - reg.offset, reg.length, nullptr});
    for (int r = 0; r < s_.ranks; ++r) {
      const auto i = static_cast<size_t>(r);
      switch (reg.goal[i]) {
        case Goal::kReducedAll:
          check_range(r, reg.offset, reg.offset + reg.length, {{0, reg.length, all}}, "reduced_all");
          break;
        case Goal::kReducedSlice:
          check_range(r, reg.slice_offset[i], reg.slice_offset[i] + reg.slice_length[i],
                      {{0, reg.slice_length[i], all}}, "reduced_slice");
          break;
        case Goal::kGatheredAll:
          check_range(r, reg.offset, reg.offset + reg.length, gathered, "gathered_all");
          break;
        case Goal::kAny:
          break;
      }
    }
  }
}

}  // namespace

VerifyResult verify(const Schedule& s) {
  VerifyResult result;
  try {
    result.rounds = Verifier(s).run();
    result.ok = true;
  } catch (const VerifyError& e) {
    result.error = e.what();
  }
  if (static_cast<int>(s.programs.size()) == s.ranks)
    for (int r = 0; r < s.ranks; ++r) result.bytes_sent.push_back(s.bytes_sent_by(r));
  for (int64_t b : result.bytes_sent) result.max_bytes_sent_per_rank = std::max(result.max_bytes_sent_per_rank, b);
  return result;
}

}  // namespace scaletwin::plan
