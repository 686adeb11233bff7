// The item engine of the training driver: starts an endpoint's communication items when their deps are met, in a
// consistent order per runner, and advances them between compute steps (see trainer_engine.hpp).
#include "exec/train/trainer_engine.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "core/error.hpp"

namespace scaletwin::exec::detail {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

RunnerSet::RunnerSet(const plan::IterationPlan& plan, MPI_Comm comm) {
  std::map<std::pair<std::vector<int>, int>, int> index;
  for (const auto& c : plan.collectives) {
    auto key = std::make_pair(c.participants, c.schedule);
    auto it = index.find(key);
    if (it == index.end()) {
      runners_.push_back(std::make_unique<ScheduleRunner>(comm, c.participants));
      it = index.emplace(key, static_cast<int>(runners_.size()) - 1).first;
    }
    runner_index_.push_back(it->second);
  }
  ST_MPI_CHECK(MPI_Comm_dup(comm, &request_comm_));
  set_errors_return(request_comm_);
}

RunnerSet::~RunnerSet() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && request_comm_ != MPI_COMM_NULL) MPI_Comm_free(&request_comm_);
}

ItemEngine::ItemEngine(const plan::IterationPlan& plan, int endpoint, RunnerSet& runners)
    : plan_(plan), program_(&plan.program(endpoint)), endpoint_(endpoint), runners_(runners) {
  const auto& items = program_->items;
  state_.assign(items.size(), State::kPending);
  handle_.assign(items.size(), CollectiveHandle{});
  for (size_t i = 0; i < items.size(); ++i)
    if (items[i].kind == plan::Item::Kind::kComm) comm_items_.push_back(static_cast<int>(i));
  build_order();
}

int ItemEngine::order_key(int item) const {
  if (!on_device_.empty() && on_device_[static_cast<size_t>(item)]) return kDeviceOrder;
  return runners_.index_of_collective(program_->items[static_cast<size_t>(item)].collective);
}

void ItemEngine::build_order() {
  const auto& items = program_->items;
  runner_items_.clear();
  runner_next_.clear();
  for (int i : comm_items_) runner_items_[order_key(i)].push_back(i);
  for (auto& [runner, list] : runner_items_)
    std::stable_sort(list.begin(), list.end(),
                     [&](int a, int b) { return items[static_cast<size_t>(a)].collective < items[static_cast<size_t>(b)].collective; });
}

void ItemEngine::set_device(Backend* backend, DeviceCommunicator* device, const std::function<bool(int)>& on_device) {
  device_backend_ = backend;
  device_ = device;
  const size_t n = program_->items.size();
  on_device_.assign(n, false);
  device_handle_.assign(n, 0);
  device_buffer_.assign(n, nullptr);
  host_copy_.assign(n, {});
  for (int i : comm_items_)
    on_device_[static_cast<size_t>(i)] = device != nullptr && on_device(program_->items[static_cast<size_t>(i)].collective);
  build_order();
}

int ItemEngine::compute_item(plan::Phase phase, int layer) const {
  const auto& items = program_->items;
  for (size_t i = 0; i < items.size(); ++i)
    if (items[i].kind == plan::Item::Kind::kCompute && items[i].compute.phase == phase && items[i].compute.layer == layer)
      return static_cast<int>(i);
  return -1;
}

int ItemEngine::comm_item(int collective) const {
  for (int i : comm_items_)
    if (program_->items[static_cast<size_t>(i)].collective == collective) return i;
  return -1;
}

int ItemEngine::last_compute_item() const {
  const auto& items = program_->items;
  for (size_t i = items.size(); i-- > 0;)
    if (items[i].kind == plan::Item::Kind::kCompute) return static_cast<int>(i);
  return -1;
}

void ItemEngine::begin_iteration() {
  for (size_t i = 0; i < state_.size(); ++i)
    ST_ASSERT(state_[i] != State::kStarted, "an iteration began with a collective still in flight");
  std::fill(state_.begin(), state_.end(), State::kPending);
  for (auto& [runner, next] : runner_next_) next = 0;
}

void ItemEngine::complete_compute_through(int item) {
  const auto& items = program_->items;
  for (int i = 0; i <= item && i < static_cast<int>(items.size()); ++i)
    if (items[static_cast<size_t>(i)].kind == plan::Item::Kind::kCompute) state_[static_cast<size_t>(i)] = State::kDone;
}

void ItemEngine::complete(int item) { state_.at(static_cast<size_t>(item)) = State::kDone; }

bool ItemEngine::deps_done(int item) const {
  for (int d : program_->items[static_cast<size_t>(item)].deps)
    if (state_[static_cast<size_t>(d)] != State::kDone) return false;
  return true;
}

void ItemEngine::start(int item) {
  const plan::Item& it = program_->items[static_cast<size_t>(item)];
  const plan::CollectiveInstance& c = plan_.collectives.at(static_cast<size_t>(it.collective));
  if (c.on_demand && c.participants.at(0) == endpoint_) {
    // Announce the request to every server participant; they serve requests in arrival order.
    int payload = it.collective;
    for (size_t p = 1; p < c.participants.size(); ++p)
      ST_MPI_CHECK(MPI_Send(&payload, 1, MPI_INT, c.participants[p], kRequestTag, runners_.request_comm()));
  }
  if (before_start_) before_start_(item);
  float* buffer = buffer_of_(item);
  ST_ASSERT(buffer != nullptr, fmt::format("no buffer for collective '{}'", c.label));
  const plan::Schedule& schedule = plan_.schedules.at(static_cast<size_t>(c.schedule));
  const auto at = static_cast<size_t>(item);
  if (device_backend_ != nullptr && on_device_[at]) {
    device_handle_[at] = device_->start(schedule, buffer);
  } else {
    if (device_backend_ != nullptr) {  // staged: the MPI runner works on a host copy of the device slice
      device_buffer_[at] = buffer;
      host_copy_[at].resize(static_cast<size_t>(schedule.elements));
      device_backend_->download(host_copy_[at].data(), buffer, schedule.elements);
      buffer = host_copy_[at].data();
    }
    handle_[at] = runners_.of_collective(it.collective).start(schedule, buffer, ElementType::kFloat32);
  }
  state_[at] = State::kStarted;
  if (trace_) {
    trace_started_s_[at] = now_s();
    trace_ended_s_[at] = -1.0;
  }
}

bool ItemEngine::try_start(int item) {
  if (state_[static_cast<size_t>(item)] != State::kPending || !deps_done(item)) return false;
  const int runner = order_key(item);
  const auto& order = runner_items_[runner];
  size_t& next = runner_next_[runner];
  if (next >= order.size() || order[next] != item) return false;  // an earlier collective of its runner first
  start(item);
  ++next;
  return true;
}

bool ItemEngine::test(int item) {
  const auto at = static_cast<size_t>(item);
  if (device_backend_ != nullptr && on_device_[at]) {
    if (!device_->done(device_handle_[at])) return false;
    // The device's own start and end where the communicator can tell them: the host enqueued the collective
    // before the compute it follows had run.
    double start_s = 0.0, end_s = 0.0;
    if (trace_ && device_->span_s(device_handle_[at], &start_s, &end_s)) {
      trace_started_s_[at] = start_s;
      trace_ended_s_[at] = end_s;
    }
    device_->wait(device_handle_[at]);  // releases the handle (the backend's stream is past it already)
    return true;
  }
  ScheduleRunner& runner = runners_.of_collective(program_->items[at].collective);
  if (!runner.test(handle_[at])) return false;
  if (device_backend_ != nullptr)
    device_backend_->upload(device_buffer_[at], host_copy_[at].data(), static_cast<int64_t>(host_copy_[at].size()));
  return true;
}

bool ItemEngine::pump() {
  bool any = false;
  for (bool changed = true; changed;) {
    changed = false;
    for (int i : comm_items_) changed = try_start(i) || changed;
    for (int i : comm_items_) {
      if (state_[static_cast<size_t>(i)] != State::kStarted) continue;
      if (test(i)) {
        state_[static_cast<size_t>(i)] = State::kDone;
        const auto at = static_cast<size_t>(i);
        if (trace_)
          trace_->collective(plan_.collectives.at(static_cast<size_t>(program_->items[at].collective)),
                             trace_started_s_[at], trace_ended_s_[at] >= 0.0 ? trace_ended_s_[at] : now_s());
        changed = true;
      }
    }
    any = any || changed;
  }
  return any;
}

void ItemEngine::wait_for(int item) {
  const double t0 = now_s();
  IdleBackoff backoff;
  while (!done(item)) {
    if (pump()) {
      backoff.reset();
      continue;
    }
    bool in_flight = false;
    for (int i : comm_items_) in_flight = in_flight || state_[static_cast<size_t>(i)] == State::kStarted;
    ST_ASSERT(in_flight, fmt::format("endpoint {}: item {} can never complete (its deps are not met)", endpoint_, item));
    backoff.pause();
  }
  wait_s_ += now_s() - t0;
}

void ItemEngine::wait_all_comm() {
  for (int i : comm_items_) wait_for(i);
}

void ItemEngine::run_now(int item) {
  for (int d : program_->items[static_cast<size_t>(item)].deps)
    if (program_->items[static_cast<size_t>(d)].kind == plan::Item::Kind::kCompute) complete(d);
  wait_for(item);
}

void ItemEngine::send_stop_requests() {
  std::vector<int> servers;
  for (const auto& c : plan_.collectives)
    if (c.on_demand && c.participants.at(0) == endpoint_)
      for (size_t p = 1; p < c.participants.size(); ++p)
        if (std::find(servers.begin(), servers.end(), c.participants[p]) == servers.end())
          servers.push_back(c.participants[p]);
  int payload = kStopRequest;
  for (int s : servers) ST_MPI_CHECK(MPI_Send(&payload, 1, MPI_INT, s, kRequestTag, runners_.request_comm()));
}

}  // namespace scaletwin::exec::detail
