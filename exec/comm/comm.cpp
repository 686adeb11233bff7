// The schedule interpreter over MPI (see comm.hpp for what it does and the rules a caller follows).
//
// Per collective in flight ("flight") the runner keeps, per step: the deps still pending, whether it is posted
// and done, its MPI peer and tag, its staging buffer, and the next step of the same queue (direction, peer,
// channel), which may be posted only after it (FIFO matching). The flight's vectors are reused by later
// collectives in the same slot, so a warm runner allocates nothing per step.
#include "exec/comm/comm.hpp"

#include <fmt/core.h>

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstring>
#include <thread>

#include "core/error.hpp"
#include "exec/comm/mpi_check.hpp"

namespace scaletwin::exec {

using plan::OpKind;

namespace {

struct StepState {
  int mpi_peer = -1;
  int tag = 0;
  int pending_deps = 0;
  int next_in_queue = -1;
  int prev_in_queue = -1;
  int staging = -1;
  int segments_left = 0;
  bool posted = false;
  bool done = false;
};

// The range lies in the buffer [0, elements) or in the scratch [elements, elements + scratch_elements).
bool inside_one_area(const plan::Schedule& s, int64_t offset, int64_t length) {
  if (offset + length <= s.elements) return true;
  return offset >= s.elements && offset + length <= s.elements + s.scratch_elements;
}

}  // namespace

struct ScheduleRunner::Flight {
  const plan::Schedule* schedule = nullptr;
  const std::vector<plan::Step>* steps = nullptr;
  std::byte* buffer = nullptr;
  std::byte* scratch_area = nullptr;  // schedule.scratch_elements elements (a staging buffer), zeroed at start
  int scratch_staging = -1;
  ElementType type = ElementType::kFloat32;
  int64_t element_bytes = 4;
  uint64_t sequence = 0;
  int slot = -1;
  bool active = false;
  int steps_left = 0;
  std::vector<StepState> state;
  std::vector<int> dependents_begin;  // CSR: dependents of step i are dependents[begin[i] .. begin[i+1])
  std::vector<int> dependents;
  std::vector<int> scratch;  // compile: last step per queue, then fill cursors

  int64_t elements() const { return schedule->elements; }
  std::byte* at(int64_t offset) const {
    return offset < elements() ? buffer + offset * element_bytes : scratch_area + (offset - elements()) * element_bytes;
  }
};

int message_tag(uint64_t sequence, int channel) {
  return channel * kSequenceSlots + static_cast<int>(sequence % kSequenceSlots);
}

ScheduleRunner::ScheduleRunner(MPI_Comm comm, std::vector<int> rank_map, int64_t segment_bytes)
    : rank_map_(std::move(rank_map)), segment_bytes_(segment_bytes) {
  ST_ASSERT(segment_bytes_ >= 1 && segment_bytes_ <= INT_MAX, "segment_bytes outside [1, 2 GiB)");
  ST_MPI_CHECK(MPI_Comm_dup(comm, &comm_));
  set_errors_return(comm_);
  ST_MPI_CHECK(MPI_Comm_rank(comm_, &comm_rank_));
  ST_MPI_CHECK(MPI_Comm_size(comm_, &comm_size_));
  if (rank_map_.empty())
    for (int r = 0; r < comm_size_; ++r) rank_map_.push_back(r);
  std::vector<bool> seen(static_cast<size_t>(comm_size_), false);
  for (size_t s = 0; s < rank_map_.size(); ++s) {
    const int r = rank_map_[s];
    ST_ASSERT(r >= 0 && r < comm_size_ && !seen[static_cast<size_t>(r)],
              fmt::format("rank map: schedule rank {} → {} is outside the communicator or repeated", s, r));
    seen[static_cast<size_t>(r)] = true;
    if (r == comm_rank_) schedule_rank_ = static_cast<int>(s);
  }
  int* tag_ub = nullptr;
  int flag = 0;
  ST_MPI_CHECK(MPI_Comm_get_attr(comm_, MPI_TAG_UB, &tag_ub, &flag));
  const int64_t tags = (flag != 0 && tag_ub != nullptr) ? int64_t{*tag_ub} + 1 : 32768;
  max_channels_ = static_cast<int>(std::min<int64_t>(tags / kSequenceSlots, INT_MAX));
}

ScheduleRunner::~ScheduleRunner() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  // With requests still outstanding (unwinding after an error) the communicator is left alone: the job is going
  // down through run_or_abort anyway, and freeing it under pending requests would be erroneous.
  if (finalized == 0 && requests_.empty() && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

void ScheduleRunner::check_span_size(const plan::Schedule& schedule, int64_t size) const {
  ST_ASSERT(size == schedule.elements,
            fmt::format("schedule '{}' covers {} elements but the buffer holds {}", schedule.name,
                        schedule.elements, size));
}

int ScheduleRunner::take_slot() {
  for (size_t i = 0; i < flights_.size(); ++i)
    if (!flights_[i]->active) return static_cast<int>(i);
  flights_.push_back(std::make_unique<Flight>());
  return static_cast<int>(flights_.size()) - 1;
}

int ScheduleRunner::in_flight() const {
  return static_cast<int>(std::count_if(flights_.begin(), flights_.end(), [](const auto& f) { return f->active; }));
}

CollectiveHandle ScheduleRunner::start(const plan::Schedule& schedule, void* buffer, ElementType type) {
  const uint64_t sequence = sequence_++;
  ++stats_.collectives;
  ST_ASSERT(schedule.ranks >= 1 && static_cast<size_t>(schedule.ranks) <= rank_map_.size(),
            fmt::format("schedule '{}' has {} ranks, the runner maps {}", schedule.name, schedule.ranks,
                        rank_map_.size()));
  ST_ASSERT(schedule.programs.size() == static_cast<size_t>(schedule.ranks),
            fmt::format("schedule '{}': {} programs for {} ranks", schedule.name, schedule.programs.size(),
                        schedule.ranks));
  if (schedule_rank_ < 0 || schedule_rank_ >= schedule.ranks) return {};
  const auto& steps = schedule.programs[static_cast<size_t>(schedule_rank_)].steps;
  if (steps.empty()) return {};
  for (const auto& f : flights_)
    ST_ASSERT(!f->active || f->sequence % kSequenceSlots != sequence % kSequenceSlots,
              fmt::format("more than {} collectives in flight (the MPI tag space)", kSequenceSlots));
  const int slot = take_slot();
  Flight& flight = *flights_[static_cast<size_t>(slot)];
  flight.schedule = &schedule;
  flight.steps = &steps;
  flight.buffer = static_cast<std::byte*>(buffer);
  flight.type = type;
  flight.element_bytes = static_cast<int64_t>(element_size(type));
  flight.sequence = sequence;
  flight.slot = slot;
  flight.active = true;
  flight.steps_left = static_cast<int>(steps.size());
  flight.scratch_area = nullptr;
  flight.scratch_staging = -1;
  if (schedule.scratch_elements > 0) {
    const int64_t scratch_bytes = schedule.scratch_elements * flight.element_bytes;
    flight.scratch_staging = staging_.acquire(scratch_bytes);
    flight.scratch_area = staging_.data(flight.scratch_staging);
    std::memset(flight.scratch_area, 0, static_cast<size_t>(scratch_bytes));
  }
  compile(flight);
  for (int i = 0; i < static_cast<int>(steps.size()) && flight.active; ++i) post_ready(flight, i);
  return {slot, sequence};
}

void ScheduleRunner::compile(Flight& flight) const {
  const plan::Schedule& s = *flight.schedule;
  const auto& steps = *flight.steps;
  const int n = static_cast<int>(steps.size());
  const int channels = std::max(s.channels, 1);
  ST_ASSERT(channels <= max_channels_, fmt::format("schedule '{}': {} channels, MPI tags allow {}", s.name,
                                                   channels, max_channels_));
  flight.state.assign(static_cast<size_t>(n), StepState{});
  flight.dependents_begin.assign(static_cast<size_t>(n) + 1, 0);
  flight.scratch.assign(2 * static_cast<size_t>(s.ranks) * static_cast<size_t>(channels), -1);
  for (int i = 0; i < n; ++i) {
    const plan::Step& step = steps[static_cast<size_t>(i)];
    StepState& st = flight.state[static_cast<size_t>(i)];
    const auto where = [&] { return fmt::format("schedule '{}' rank {} step {}", s.name, schedule_rank_, i); };
    ST_ASSERT(step.length > 0 && step.offset >= 0 && inside_one_area(s, step.offset, step.length),
              where() + ": range outside the buffer and its scratch, or across both");
    ST_ASSERT(step.length * flight.element_bytes <= INT_MAX, where() + ": message over 2 GiB");
    for (int d : step.deps) {
      ST_ASSERT(d >= 0 && d < i, where() + ": a dep that is not an earlier step");
      ++flight.dependents_begin[static_cast<size_t>(d) + 1];
    }
    st.pending_deps = static_cast<int>(step.deps.size());
    if (step.op == OpKind::kCopy) {
      ST_ASSERT(step.src_offset >= 0 && step.src_offset + step.length <= s.elements,
                where() + ": copy source outside the buffer");
      continue;
    }
    ST_ASSERT(step.peer >= 0 && step.peer < s.ranks, where() + ": peer outside the schedule");
    ST_ASSERT(step.channel >= 0 && step.channel < channels, where() + ": channel outside [0, channels)");
    st.mpi_peer = rank_map_[static_cast<size_t>(step.peer)];
    st.tag = message_tag(flight.sequence, step.channel);
    const int direction = step.op == OpKind::kSend ? 0 : 1;
    int& last = flight.scratch[(static_cast<size_t>(direction) * static_cast<size_t>(s.ranks) +
                                static_cast<size_t>(step.peer)) * static_cast<size_t>(channels) +
                               static_cast<size_t>(step.channel)];
    st.prev_in_queue = last;
    if (last >= 0) flight.state[static_cast<size_t>(last)].next_in_queue = i;
    last = i;
  }
  for (int i = 0; i < n; ++i) flight.dependents_begin[static_cast<size_t>(i) + 1] += flight.dependents_begin[static_cast<size_t>(i)];
  flight.dependents.resize(static_cast<size_t>(flight.dependents_begin[static_cast<size_t>(n)]));
  flight.scratch.assign(flight.dependents_begin.begin(), flight.dependents_begin.end() - 1);
  for (int i = 0; i < n; ++i)
    for (int d : steps[static_cast<size_t>(i)].deps) flight.dependents[static_cast<size_t>(flight.scratch[static_cast<size_t>(d)]++)] = i;
}

// Posts `first_step` if it is ready, then everything its posting or completion makes ready.
void ScheduleRunner::post_ready(Flight& flight, int first_step) {
  worklist_.clear();
  worklist_.push_back(first_step);
  while (!worklist_.empty()) {
    const int step = worklist_.back();
    worklist_.pop_back();
    try_post(flight, step);
  }
}

bool ScheduleRunner::try_post(Flight& flight, int index) {
  StepState& st = flight.state[static_cast<size_t>(index)];
  if (st.posted || st.pending_deps > 0) return false;
  if (st.prev_in_queue >= 0 && !flight.state[static_cast<size_t>(st.prev_in_queue)].posted) return false;
  st.posted = true;
  const plan::Step& step = (*flight.steps)[static_cast<size_t>(index)];
  const int64_t eb = flight.element_bytes;
  std::byte* range = flight.at(step.offset);
  if (step.op == OpKind::kCopy) {
    std::memmove(range, flight.at(step.src_offset), static_cast<size_t>(step.length * eb));
    complete_step(flight, index);
    return true;
  }
  std::byte* target = range;
  if (step.op == OpKind::kRecvReduce) {
    st.staging = staging_.acquire(step.length * eb);
    stats_.staging_bytes = staging_.capacity_bytes();
    target = staging_.data(st.staging);
  }
  // Segments: the same split on both sides (it depends on the length alone), posted in order on one tag.
  const int64_t segment_elements = std::max<int64_t>(1, segment_bytes_ / eb);
  st.segments_left = static_cast<int>((step.length + segment_elements - 1) / segment_elements);
  for (int k = 0; k < st.segments_left; ++k) {
    const int64_t first = k * segment_elements;
    const int bytes = static_cast<int>(std::min(segment_elements, step.length - first) * eb);
    MPI_Request request = MPI_REQUEST_NULL;
    if (step.op == OpKind::kSend) {
      ST_MPI_CHECK(MPI_Isend(target + first * eb, bytes, MPI_BYTE, st.mpi_peer, st.tag, comm_, &request));
      ++stats_.messages_sent;
      stats_.bytes_sent += bytes;
    } else {
      ST_MPI_CHECK(MPI_Irecv(target + first * eb, bytes, MPI_BYTE, st.mpi_peer, st.tag, comm_, &request));
    }
    requests_.push_back(request);
    request_owner_.push_back({flight.slot, index, k});
  }
  if (st.next_in_queue >= 0) worklist_.push_back(st.next_in_queue);
  return true;
}

// A segment of a step has arrived or left: reduce it if it was a RecvReduce; the step completes with its last one.
void ScheduleRunner::complete_segment(Flight& flight, int index, int segment) {
  StepState& st = flight.state[static_cast<size_t>(index)];
  const plan::Step& step = (*flight.steps)[static_cast<size_t>(index)];
  if (step.op == OpKind::kRecvReduce) {
    const int64_t segment_elements = std::max<int64_t>(1, segment_bytes_ / flight.element_bytes);
    const int64_t first = segment * segment_elements;
    const int64_t count = std::min(segment_elements, step.length - first);
    reduce_add(flight.at(step.offset + first), staging_.data(st.staging) + first * flight.element_bytes, count,
               flight.type);
    stats_.elements_reduced += count;
  }
  if (--st.segments_left == 0) complete_step(flight, index);
}

void ScheduleRunner::complete_step(Flight& flight, int index) {
  StepState& st = flight.state[static_cast<size_t>(index)];
  if (st.staging >= 0) {
    staging_.release(st.staging);
    st.staging = -1;
  }
  st.done = true;
  const int begin = flight.dependents_begin[static_cast<size_t>(index)];
  const int end = flight.dependents_begin[static_cast<size_t>(index) + 1];
  for (int k = begin; k < end; ++k) {
    const int dependent = flight.dependents[static_cast<size_t>(k)];
    if (--flight.state[static_cast<size_t>(dependent)].pending_deps == 0) worklist_.push_back(dependent);
  }
  if (--flight.steps_left == 0) {
    flight.active = false;
    if (flight.scratch_staging >= 0) staging_.release(flight.scratch_staging);
    flight.scratch_staging = -1;
  }
}

void ScheduleRunner::handle_completions(int count) {
  for (int k = 0; k < count; ++k) {
    const RequestOwner owner = request_owner_[static_cast<size_t>(completed_[static_cast<size_t>(k)])];
    Flight& flight = *flights_[static_cast<size_t>(owner.slot)];
    worklist_.clear();
    complete_segment(flight, owner.step, owner.segment);
    while (!worklist_.empty()) {
      const int next = worklist_.back();
      worklist_.pop_back();
      try_post(flight, next);
    }
  }
  size_t kept = 0;
  for (size_t i = 0; i < requests_.size(); ++i) {
    if (requests_[i] == MPI_REQUEST_NULL) continue;
    requests_[kept] = requests_[i];
    request_owner_[kept] = request_owner_[i];
    ++kept;
  }
  requests_.resize(kept);
  request_owner_.resize(kept);
}

bool ScheduleRunner::progress() {
  // As far as it goes without blocking: completions post new steps, which may complete at once in turn.
  while (!requests_.empty()) {
    completed_.resize(requests_.size());
    int count = 0;
    ST_MPI_CHECK(MPI_Testsome(static_cast<int>(requests_.size()), requests_.data(), &count, completed_.data(),
                              MPI_STATUSES_IGNORE));
    if (count == MPI_UNDEFINED || count == 0) break;
    handle_completions(count);
  }
  return in_flight() == 0;
}

bool ScheduleRunner::flight_done(CollectiveHandle handle) const {
  if (handle.slot < 0) return true;
  const Flight& flight = *flights_.at(static_cast<size_t>(handle.slot));
  return !flight.active || flight.sequence != handle.sequence;
}

bool ScheduleRunner::test(CollectiveHandle handle) {
  progress();
  return flight_done(handle);
}

void ScheduleRunner::wait(CollectiveHandle handle) {
  IdleBackoff backoff;
  while (!flight_done(handle)) {
    ST_ASSERT(!requests_.empty(), "schedule stuck: steps left but nothing in flight (deps that never complete)");
    completed_.resize(requests_.size());
    int count = 0;
    ST_MPI_CHECK(MPI_Testsome(static_cast<int>(requests_.size()), requests_.data(), &count, completed_.data(),
                              MPI_STATUSES_IGNORE));
    if (count != MPI_UNDEFINED && count > 0) {
      handle_completions(count);
      backoff.reset();
    } else {
      backoff.pause();
    }
  }
}

namespace {
std::atomic<bool> idle_naps{true};
}  // namespace

void set_idle_naps(bool naps) { idle_naps.store(naps, std::memory_order_relaxed); }

NodePlace place_on_node(MPI_Comm comm) {
  MPI_Comm node = MPI_COMM_NULL;
  ST_MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  NodePlace place;
  ST_MPI_CHECK(MPI_Comm_rank(node, &place.rank));
  ST_MPI_CHECK(MPI_Comm_size(node, &place.ranks));
  MPI_Comm_free(&node);
  return place;
}

int ranks_on_node(MPI_Comm comm) { return place_on_node(comm).ranks; }

int node_cores() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

void configure_idle_naps(int on_node, int threads_per_rank) {
  set_idle_naps(static_cast<int64_t>(std::max(1, on_node)) * std::max(1, threads_per_rank) > node_cores());
}

void IdleBackoff::pause() {
  const double now_s = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  if (idle_since_s_ < 0.0) idle_since_s_ = now_s;
  if (!idle_naps.load(std::memory_order_relaxed) || now_s - idle_since_s_ < kSpinSeconds)
    sched_yield();
  else
    std::this_thread::sleep_for(std::chrono::duration<double>(kNapSeconds));
}

void recv_with_backoff(void* buffer, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                       MPI_Status* status) {
  MPI_Request request = MPI_REQUEST_NULL;
  ST_MPI_CHECK(MPI_Irecv(buffer, count, type, source, tag, comm, &request));
  IdleBackoff backoff;
  for (int done = 0;;) {
    ST_MPI_CHECK(MPI_Test(&request, &done, status));
    if (done != 0) return;
    backoff.pause();
  }
}

void ScheduleRunner::wait_all() {
  for (size_t i = 0; i < flights_.size(); ++i)
    if (flights_[i]->active) wait({static_cast<int>(i), flights_[i]->sequence});
}

void mpi_allreduce_baseline(void* buffer, int64_t count, ElementType type, MPI_Comm comm) {
  ST_ASSERT(count <= INT_MAX, "MPI_Allreduce baseline: more than INT_MAX elements");
  ST_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, buffer, static_cast<int>(count), mpi_datatype(type), MPI_SUM, comm));
}

}  // namespace scaletwin::exec
