// ScheduleBuilder and the compositions of schedules (see compose.hpp).
#include "plan/compose.hpp"

#include <algorithm>
#include <utility>

#include "core/error.hpp"

namespace scaletwin::plan {

ScheduleBuilder::ScheduleBuilder(std::string name, int ranks, int64_t elements, int64_t element_bytes) {
  ST_ASSERT(ranks >= 1 && elements >= 0 && element_bytes >= 1, "bad schedule shape");
  schedule_ = empty_schedule(name, ranks, elements, element_bytes);
  previous_.resize(static_cast<size_t>(ranks));
  current_.resize(static_cast<size_t>(ranks));
}

int ScheduleBuilder::add(int rank, Step step) {
  if (step.length == 0) return -1;
  auto& steps = schedule_.programs.at(static_cast<size_t>(rank)).steps;
  steps.push_back(std::move(step));
  return static_cast<int>(steps.size()) - 1;
}

int ScheduleBuilder::add_in_round(int rank, Step step) {
  if (step.length == 0) return -1;
  step.deps = previous_.at(static_cast<size_t>(rank));
  const int index = add(rank, std::move(step));
  current_[static_cast<size_t>(rank)].push_back(index);
  return index;
}

int ScheduleBuilder::send(int rank, int peer, int64_t offset, int64_t length, int channel) {
  return add_in_round(rank, Step{OpKind::kSend, peer, channel, offset, length, 0, {}});
}
int ScheduleBuilder::recv(int rank, int peer, int64_t offset, int64_t length, int channel) {
  return add_in_round(rank, Step{OpKind::kRecv, peer, channel, offset, length, 0, {}});
}
int ScheduleBuilder::recv_reduce(int rank, int peer, int64_t offset, int64_t length, int channel) {
  return add_in_round(rank, Step{OpKind::kRecvReduce, peer, channel, offset, length, 0, {}});
}
int ScheduleBuilder::copy(int rank, int64_t src_offset, int64_t offset, int64_t length) {
  return add_in_round(rank, Step{OpKind::kCopy, -1, 0, offset, length, src_offset, {}});
}

void ScheduleBuilder::end_round(int rank) {
  auto& cur = current_.at(static_cast<size_t>(rank));
  if (cur.empty()) return;
  previous_[static_cast<size_t>(rank)] = std::move(cur);
  cur.clear();
}

void ScheduleBuilder::end_round() {
  for (int r = 0; r < schedule_.ranks; ++r) end_round(r);
}

Schedule ScheduleBuilder::finish() { return std::move(schedule_); }

Schedule empty_schedule(const std::string& name, int ranks, int64_t elements, int64_t element_bytes) {
  Schedule s;
  s.name = name;
  s.collective = Collective::kCustom;
  s.ranks = ranks;
  s.elements = elements;
  s.element_bytes = element_bytes;
  s.programs.resize(static_cast<size_t>(ranks));
  s.initial.assign(static_cast<size_t>(ranks), InitialData::kNone);
  s.goal.assign(static_cast<size_t>(ranks), Goal::kAny);
  return s;
}

void set_balanced_slices(Schedule& s) {
  s.slice_offset.resize(static_cast<size_t>(s.ranks));
  s.slice_length.resize(static_cast<size_t>(s.ranks));
  for (int r = 0; r < s.ranks; ++r) {
    s.slice_offset[static_cast<size_t>(r)] = part_offset(s.elements, s.ranks, r);
    s.slice_length[static_cast<size_t>(r)] = part_offset(s.elements, s.ranks, r + 1) - part_offset(s.elements, s.ranks, r);
  }
}

void set_data_model(Schedule& s, Collective collective, InitialData initial, Goal goal) {
  s.collective = collective;
  s.initial.assign(static_cast<size_t>(s.ranks), initial);
  s.goal.assign(static_cast<size_t>(s.ranks), goal);
  if (s.slice_offset.size() != static_cast<size_t>(s.ranks)) set_balanced_slices(s);
}

std::vector<Schedule::DataRegion> data_regions(const Schedule& s) {
  if (!s.regions.empty()) return s.regions;
  Schedule::DataRegion region;
  region.offset = 0;
  region.length = s.elements;
  region.initial = s.initial;
  region.goal = s.goal;
  region.slice_offset = s.slice_offset;
  region.slice_length = s.slice_length;
  return {region};
}

Schedule remap(Schedule s, const std::vector<int>& group, int ranks) {
  ST_ASSERT(group.size() == static_cast<size_t>(s.ranks), "remap: group size differs from the schedule's ranks");
  Schedule out = empty_schedule(s.name, ranks, s.elements, s.element_bytes);
  out.channels = s.channels;
  out.scratch_elements = s.scratch_elements;
  for (int i = 0; i < s.ranks; ++i) {
    const int target = group[static_cast<size_t>(i)];
    ST_ASSERT(target >= 0 && target < ranks, "remap: rank out of range");
    auto& program = out.programs[static_cast<size_t>(target)];
    ST_ASSERT(program.steps.empty(), "remap: a rank appears twice in the group");
    program = std::move(s.programs[static_cast<size_t>(i)]);
    for (Step& step : program.steps)
      if (step.peer >= 0) step.peer = group.at(static_cast<size_t>(step.peer));
  }
  return out;
}

Schedule shift(Schedule s, int64_t offset, int64_t elements) {
  ST_ASSERT(offset >= 0 && offset + s.elements <= elements, "shift: slice outside the buffer");
  Schedule out = std::move(s);
  const int64_t old_elements = out.elements;
  out.elements = elements;
  out.collective = Collective::kCustom;
  out.initial.assign(static_cast<size_t>(out.ranks), InitialData::kNone);
  out.goal.assign(static_cast<size_t>(out.ranks), Goal::kAny);
  out.slice_offset.clear();
  out.slice_length.clear();
  out.regions.clear();
  // Buffer elements move by `offset`; scratch elements stay right after the (bigger) buffer.
  auto move = [&](int64_t at, int64_t length) {
    ST_ASSERT(at + length <= old_elements || at >= old_elements, "shift: a range straddles buffer and scratch");
    return at >= old_elements ? at - old_elements + elements : at + offset;
  };
  for (auto& program : out.programs)
    for (Step& step : program.steps) {
      if (step.op == OpKind::kCopy) step.src_offset = move(step.src_offset, step.length);
      step.offset = move(step.offset, step.length);
    }
  return out;
}

namespace {

void check_same_shape(const std::vector<Schedule>& parts) {
  ST_ASSERT(!parts.empty(), "composition of no schedules");
  for (const Schedule& p : parts)
    ST_ASSERT(p.ranks == parts[0].ranks && p.elements == parts[0].elements &&
                  p.element_bytes == parts[0].element_bytes,
              "composed schedules differ in ranks, elements or element size");
}

// Appends `steps` to `program`, shifting deps by the program's size and channels by `channel_base`; steps without
// deps get `entry_deps`.
void append(RankProgram& program, std::vector<Step>& steps, int channel_base, const std::vector<int>& entry_deps) {
  const int base = static_cast<int>(program.steps.size());
  if (program.steps.empty() && channel_base == 0 && entry_deps.empty()) {
    program.steps = std::move(steps);
    return;
  }
  program.steps.reserve(program.steps.size() + steps.size());
  for (Step& step : steps) {
    Step copy = std::move(step);
    copy.channel += channel_base;
    if (copy.deps.empty()) {
      copy.deps = entry_deps;
    } else {
      for (int& d : copy.deps) d += base;
    }
    program.steps.push_back(std::move(copy));
  }
}

std::vector<int> terminal_steps(const RankProgram& program) {
  std::vector<char> used(program.steps.size(), 0);
  for (const Step& step : program.steps)
    for (int d : step.deps) used[static_cast<size_t>(d)] = 1;
  std::vector<int> out;
  for (size_t i = 0; i < used.size(); ++i)
    if (!used[i]) out.push_back(static_cast<int>(i));
  return out;
}

}  // namespace

Schedule parallel(std::vector<Schedule> parts, const std::string& name) {
  check_same_shape(parts);
  Schedule out = empty_schedule(name, parts[0].ranks, parts[0].elements, parts[0].element_bytes);
  int channel_base = 0;
  for (Schedule& p : parts) {
    for (int r = 0; r < out.ranks; ++r)
      append(out.programs[static_cast<size_t>(r)], p.programs[static_cast<size_t>(r)].steps, channel_base, {});
    channel_base += p.channels;
    out.scratch_elements = std::max(out.scratch_elements, p.scratch_elements);
  }
  out.channels = std::max(1, channel_base);
  return out;
}

Schedule sequence(std::vector<Schedule> parts, const std::string& name) {
  check_same_shape(parts);
  Schedule out = empty_schedule(name, parts[0].ranks, parts[0].elements, parts[0].element_bytes);
  for (Schedule& p : parts) {
    for (int r = 0; r < out.ranks; ++r) {
      RankProgram& program = out.programs[static_cast<size_t>(r)];
      append(program, p.programs[static_cast<size_t>(r)].steps, 0, terminal_steps(program));
    }
    out.channels = std::max(out.channels, p.channels);
    out.scratch_elements = std::max(out.scratch_elements, p.scratch_elements);
  }
  return out;
}

}  // namespace scaletwin::plan
