// Building and composing schedules.
//
// ScheduleBuilder is how generators write programs: steps are added per rank in rounds, and every step of a round
// depends on the steps of the rank's previous non-empty round (so a round's sends and receives run together, and
// nothing of round k+1 touches the buffer before round k is done). Zero-length steps are dropped on both sides
// (lengths are computed identically by sender and receiver, so FIFO matching stays aligned). add() takes
// explicit deps for generators that pipeline (double binary tree).
//
// Compositions build bigger schedules from smaller ones, never by special-casing an algorithm:
//   remap(s, group, ranks)      rank i of s becomes rank group[i] of a schedule on `ranks` ranks
//   shift(s, offset, elements)  s runs on [offset, offset + s.elements) of a buffer of `elements` elements
//   parallel(parts)             all parts at once (same ranks and elements); each part gets its own channels
//   sequence(parts)             one after the other: on each rank, the first steps (no deps) of part k+1 depend
//                               on the last steps (nothing depends on them) of everything before
// The result of a composition carries steps only (collective kCustom, initial kNone, goal kAny): the generator
// that composes states the data model of the whole with set_data_model().
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "plan/schedule.hpp"

namespace scaletwin::plan {

class ScheduleBuilder {
 public:
  ScheduleBuilder(std::string name, int ranks, int64_t elements, int64_t element_bytes);

  // Each returns the new step's index in the rank's program, or -1 when length == 0 (nothing added).
  int send(int rank, int peer, int64_t offset, int64_t length, int channel = 0);
  int recv(int rank, int peer, int64_t offset, int64_t length, int channel = 0);
  int recv_reduce(int rank, int peer, int64_t offset, int64_t length, int channel = 0);
  int copy(int rank, int64_t src_offset, int64_t offset, int64_t length);
  // A step with explicit deps only (the round structure is ignored for it); -1 when step.length == 0.
  int add(int rank, Step step);

  void end_round(int rank);
  void end_round();  // every rank

  void set_channels(int channels) { schedule_.channels = channels; }
  void set_scratch(int64_t scratch_elements) { schedule_.scratch_elements = scratch_elements; }
  Schedule finish();

 private:
  int add_in_round(int rank, Step step);
  Schedule schedule_;
  std::vector<std::vector<int>> previous_;  // per rank: steps of the last non-empty round
  std::vector<std::vector<int>> current_;   // per rank: steps of the round being built
};

// Sets collective, initial and goal for every rank; slices (for kOwnSlice / kReducedSlice) by part_offset over
// the ranks unless given.
void set_data_model(Schedule& s, Collective collective, InitialData initial, Goal goal);
void set_balanced_slices(Schedule& s);

// The data regions of s as the verifier sees them (s.regions, or one region from the top-level fields).
std::vector<Schedule::DataRegion> data_regions(const Schedule& s);

// Parts are taken by value: pass temporaries (or std::move) to avoid copying big programs.
Schedule remap(Schedule s, const std::vector<int>& group, int ranks);
Schedule shift(Schedule s, int64_t offset, int64_t elements);
Schedule parallel(std::vector<Schedule> parts, const std::string& name);
Schedule sequence(std::vector<Schedule> parts, const std::string& name);

// Moves its arguments into a vector (an initializer list would copy them): sequence(schedules(a(), b()), name).
template <typename... Parts>
std::vector<Schedule> schedules(Parts&&... parts) {
  std::vector<Schedule> out;
  out.reserve(sizeof...(parts));
  (out.push_back(std::forward<Parts>(parts)), ...);
  return out;
}

// An empty schedule (no steps) on `ranks` ranks.
Schedule empty_schedule(const std::string& name, int ranks, int64_t elements, int64_t element_bytes);

}  // namespace scaletwin::plan
