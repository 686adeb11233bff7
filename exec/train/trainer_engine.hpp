// Internal to exec/trainer*.cpp: the item engine, which walks one endpoint's program of the IterationPlan.
//
// The trainer does the compute items itself (a Network's forward and backward cover many of them at once) and
// tells the engine how far the compute chain has got (complete_compute_through); the engine starts each
// communication item as soon as every item in its deps has completed, advances the collectives in flight
// (pump, called between layers), and blocks only where the trainer must wait (wait_for, whose time is the exposed
// communication).
//
// Runners: one ScheduleRunner per distinct (participants, schedule) pair of the plan, created in collective order
// on every rank (each duplicates the communicator). ScheduleRunner matches messages by the order in which the
// participants start their collectives, so every endpoint starts the collectives of one runner in the order of
// their index in plan.collectives: that is the bucket order for every scheme, whatever order the deps of
// different buckets are met in. On-demand collectives (async) are announced to each server participant by a
// request message (tag kRequestTag on the request communicator, payload the collective index) before the
// initiator starts them; servers serve them in arrival order (trainer_server.cpp).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "exec/backend.hpp"
#include "exec/comm/comm.hpp"
#include "exec/cuda_backend.hpp"
#include "exec/comm/mpi_check.hpp"
#include "exec/train/trace_recorder.hpp"
#include "plan/iteration_plan.hpp"

namespace scaletwin::exec::detail {

inline constexpr int kRequestTag = 7;
inline constexpr int kStopRequest = -1;  // payload of the request that says an initiator has finished

class RunnerSet {
 public:
  // Collective over comm: creates every runner of the plan.
  RunnerSet(const plan::IterationPlan& plan, MPI_Comm comm);
  ScheduleRunner& of_collective(int collective) { return *runners_.at(runner_index_.at(static_cast<size_t>(collective))); }
  int index_of_collective(int collective) const { return runner_index_.at(static_cast<size_t>(collective)); }
  int count() const { return static_cast<int>(runners_.size()); }
  ScheduleRunner& at(int index) { return *runners_.at(static_cast<size_t>(index)); }
  MPI_Comm request_comm() const { return request_comm_; }
  ~RunnerSet();
  RunnerSet(const RunnerSet&) = delete;
  RunnerSet& operator=(const RunnerSet&) = delete;

 private:
  std::vector<std::unique_ptr<ScheduleRunner>> runners_;
  std::vector<int> runner_index_;  // per collective
  MPI_Comm request_comm_ = MPI_COMM_NULL;
};

// Where an endpoint's part of a collective lives: the buffer the schedule runs on (schedule.elements floats).
using BufferOf = std::function<float*(int item)>;

class ItemEngine {
 public:
  ItemEngine(const plan::IterationPlan& plan, int endpoint, RunnerSet& runners);

  void set_buffers(BufferOf buffer_of) { buffer_of_ = std::move(buffer_of); }
  // Called just before an item of a collective is started (zeroing a server's receive buffer, say).
  void set_before_start(std::function<void(int item)> f) { before_start_ = std::move(f); }
  // run --trace: each communication item's span (start to the pump that sees it complete, or the device's own
  // start and end where DeviceCommunicator::span_s gives them) goes to `trace`.
  void set_trace(TraceRecorder* trace) {
    trace_ = trace;
    trace_started_s_.assign(state_.size(), 0.0);
    trace_ended_s_.assign(state_.size(), -1.0);
  }

  // A worker on a device backend (run --device cuda): buffer_of gives device memory. A collective for which
  // on_device(collective) is true runs on `device` (NCCL, straight on device memory, enqueued after the work
  // already on the backend's stream); such collectives are started in collective order (one NCCL stream, so every
  // rank must enqueue them in the same order), and complete when device->done() says so at a pump. Every other
  // collective is staged through host memory: the slice is downloaded when it starts, the MPI runner runs on the
  // host copy, and the result is uploaded at the pump that sees it complete. Call before the first iteration.
  void set_device(Backend* backend, DeviceCommunicator* device, const std::function<bool(int collective)>& on_device);
  const plan::EndpointProgram& program() const { return *program_; }
  int endpoint() const { return endpoint_; }
  // The compute item of (phase, layer) in this endpoint's program, -1 if none.
  int compute_item(plan::Phase phase, int layer) const;
  // This endpoint's item of collective c, -1 if it has none.
  int comm_item(int collective) const;
  int last_compute_item() const;

  void begin_iteration();
  // Every compute item up to and including `item` has completed (the trainer did its work).
  void complete_compute_through(int item);
  void complete(int item);  // one item (a compute item the trainer just did out of chain order)
  bool done(int item) const { return state_[static_cast<size_t>(item)] == State::kDone; }
  // Starts what is ready and advances what is in flight, without blocking; true when something changed.
  bool pump();
  // Blocks until `item` has completed (its time counts as exposed communication).
  void wait_for(int item);
  // Blocks until every communication item of the program has completed.
  void wait_all_comm();
  // Starts a communication item now and waits for it (the hybrid's all-gathers and reduce-scatters, which the
  // next compute step needs at once); its compute deps are taken as done.
  void run_now(int item);
  double wait_s() const { return wait_s_; }
  // An initiator of on-demand collectives tells each of its servers that it has finished (kStopRequest).
  void send_stop_requests();

 private:
  enum class State { kPending, kStarted, kDone };
  bool deps_done(int item) const;
  bool try_start(int item);
  void start(int item);
  bool test(int item);   // the started item has completed (and is restaged, for a staged device collective)
  int order_key(int item) const;  // its runner's index, or kDeviceOrder for a device collective
  void build_order();
  static constexpr int kDeviceOrder = -1;

  const plan::IterationPlan& plan_;
  const plan::EndpointProgram* program_;
  int endpoint_;
  RunnerSet& runners_;
  BufferOf buffer_of_;
  std::function<void(int)> before_start_;
  std::vector<State> state_;
  std::vector<CollectiveHandle> handle_;
  std::vector<int> comm_items_;                 // in program order
  std::map<int, std::vector<int>> runner_items_;  // runner → this endpoint's items on it, in collective order
  std::map<int, size_t> runner_next_;            // runner → position of the next item to start this iteration
  double wait_s_ = 0.0;
  // set_device: the device backend, the NCCL communicator, per item whether it runs there, its device buffer and
  // (staged) host copy.
  Backend* device_backend_ = nullptr;
  DeviceCommunicator* device_ = nullptr;
  std::vector<bool> on_device_;
  std::vector<uint64_t> device_handle_;
  std::vector<float*> device_buffer_;
  std::vector<std::vector<float>> host_copy_;
  TraceRecorder* trace_ = nullptr;
  std::vector<double> trace_started_s_;  // per item, with a trace
  std::vector<double> trace_ended_s_;    // per item: the device's end where its communicator tells it, else -1
};

double now_s();

}  // namespace scaletwin::exec::detail
