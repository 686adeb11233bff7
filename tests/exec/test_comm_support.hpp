// Helpers of the MPI tests of the schedule interpreter: world rank and size, sums across ranks (so every rank
// asserts on the same number and takes the same path), integer-valued test data, and the generic checker that runs
// a schedule and compares every rank's buffer with what the schedule's data model promises.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "exec/comm/comm.hpp"
#include "exec/comm/mpi_check.hpp"
#include "plan/compose.hpp"
#include "plan/schedule.hpp"

namespace scaletwin::test {

inline int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

inline int world_size() {
  int p = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  return p;
}

inline int64_t sum_over_ranks(int64_t local) {
  int64_t total = 0;
  ST_MPI_CHECK(MPI_Allreduce(&local, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD));
  return total;
}

// Rank r's contribution to element i: an integer in [-50, 50], so sums over up to 8 ranks are exact in any type.
template <class T>
T contribution(int rank, int64_t i) {
  return static_cast<T>(((rank + 1) * 37 + i * 11) % 101 - 50);
}

// This rank's buffer before the collective, following the schedule's data model (elements outside every region
// start at zero).
template <class T>
std::vector<T> initial_buffer(const plan::Schedule& s, int rank) {
  std::vector<T> buffer(static_cast<size_t>(s.elements), T{0});
  if (rank >= s.ranks) return buffer;
  for (const auto& region : plan::data_regions(s)) {
    const auto r = static_cast<size_t>(rank);
    for (int64_t i = region.offset; i < region.offset + region.length; ++i) {
      const bool own = region.initial[r] == plan::InitialData::kOwn ||
                       (region.initial[r] == plan::InitialData::kOwnSlice && i >= region.slice_offset[r] &&
                        i < region.slice_offset[r] + region.slice_length[r]);
      buffer[static_cast<size_t>(i)] = own ? contribution<T>(rank, i) : T{0};
    }
  }
  return buffer;
}

// The number of elements of this rank's final buffer that break the schedule's goal: the sum of every rank's
// initial value of the element (each contributes exactly once), on the elements the goal constrains.
template <class T>
int64_t goal_mismatches(const plan::Schedule& s, int rank, const std::vector<T>& result) {
  if (rank >= s.ranks) return 0;
  std::vector<std::vector<T>> initial;
  for (int q = 0; q < s.ranks; ++q) initial.push_back(initial_buffer<T>(s, q));
  int64_t bad = 0;
  const auto r = static_cast<size_t>(rank);
  for (const auto& region : plan::data_regions(s)) {
    const plan::Goal goal = region.goal[r];
    if (goal == plan::Goal::kAny) continue;
    int64_t begin = region.offset;
    int64_t end = region.offset + region.length;
    if (goal == plan::Goal::kReducedSlice) {
      begin = region.slice_offset[r];
      end = begin + region.slice_length[r];
    }
    for (int64_t i = begin; i < end; ++i) {
      T expected{0};
      for (const auto& b : initial) expected = static_cast<T>(expected + b[static_cast<size_t>(i)]);
      if (result[static_cast<size_t>(i)] != expected) ++bad;
    }
  }
  return bad;
}

// Runs s on every rank of the world (ranks beyond s.ranks idle) and returns the mismatches summed over ranks.
template <class T>
int64_t run_and_check(exec::ScheduleRunner& runner, const plan::Schedule& s) {
  std::vector<T> buffer = initial_buffer<T>(s, runner.schedule_rank());
  runner.run(s, std::span<T>(buffer));
  return sum_over_ranks(goal_mismatches<T>(s, runner.schedule_rank(), buffer));
}

// For an all-reduce: our result and MPI_Allreduce's on the same input, compared bit for bit; the number of
// differing elements summed over ranks.
template <class T>
int64_t differences_from_mpi_allreduce(exec::ScheduleRunner& runner, const plan::Schedule& s) {
  std::vector<T> ours = initial_buffer<T>(s, runner.schedule_rank());
  std::vector<T> theirs = ours;
  runner.run(s, std::span<T>(ours));
  exec::mpi_allreduce_baseline(std::span<T>(theirs), MPI_COMM_WORLD);
  int64_t differ = 0;
  for (size_t i = 0; i < ours.size(); ++i)
    if (std::memcmp(&ours[i], &theirs[i], sizeof(T)) != 0) ++differ;
  return sum_over_ranks(differ);
}

}  // namespace scaletwin::test
