// The NCCL schedule interpreter (see nccl_runner.hpp) and the DeviceCommunicator of exec/cuda_backend.hpp.
#include "exec/cuda/nccl_runner.hpp"

#include <fmt/format.h>

#include <exception>
#include <utility>

#include "core/error.hpp"
#include "exec/cuda/cuda_check.hpp"
#include "exec/cuda/kernels.hpp"

namespace scaletwin::exec::cuda {

using plan::OpKind;

namespace {

constexpr int64_t kFloat = sizeof(float);

void grow(DeviceBytes& area, int64_t floats, cudaStream_t stream) {
  if (floats * kFloat <= area.bytes()) return;
  ST_CUDA_CHECK(cudaStreamSynchronize(stream));
  area = DeviceBytes();
  area = DeviceBytes(floats * kFloat);
}

}  // namespace

NcclRunner::NcclRunner(std::vector<Member> members) {
  ST_ASSERT(!members.empty(), "an NCCL runner drives at least one rank");
  for (const Member& m : members) {
    State s;
    s.backend = m.backend;
    s.comm = m.comm;
    s.backend->context().activate();
    ST_NCCL_CHECK(ncclCommUserRank(m.comm, &s.rank));
    int count = 0;
    ST_NCCL_CHECK(ncclCommCount(m.comm, &count));
    ST_ASSERT(ranks_ == 0 || ranks_ == count, "NCCL members of different communicators");
    ranks_ = count;
    ST_CUDA_CHECK(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking));
    members_.push_back(std::move(s));
  }
}

NcclRunner::~NcclRunner() {
  // Destroyed while an exception unwinds (this rank failed): a collective on the stream may wait for a peer that
  // will never post its half, so the communicators are aborted first (their kernels stop) rather than the streams
  // waited for, and the failure reaches MPI_Abort instead of hanging here.
  const bool unwinding = std::uncaught_exceptions() > 0;
  for (State& s : members_) {
    cudaSetDevice(s.backend->device());
    if (unwinding && s.comm != nullptr) {
      ncclCommAbort(s.comm);
      s.comm = nullptr;
    }
  }
  for (State& s : members_) {
    cudaSetDevice(s.backend->device());
    cudaStreamSynchronize(s.stream);
  }
  for (auto& [handle, p] : pending_) {
    for (cudaEvent_t e : p.done) cudaEventDestroy(e);
    if (p.begin != nullptr) cudaEventDestroy(p.begin);
  }
  if (begin_ != nullptr) cudaEventDestroy(begin_);
  for (State& s : members_) {
    cudaSetDevice(s.backend->device());
    s.staging = DeviceBytes();
    s.scratch = DeviceBytes();
    if (s.comm != nullptr) ncclCommDestroy(s.comm);
    cudaStreamDestroy(s.stream);
  }
}

const NcclLowering& NcclRunner::lowering(const plan::Schedule& schedule) {
  Cached& c = cache_[&schedule];
  if (c.name != schedule.name || c.elements != schedule.elements || c.steps != schedule.total_steps() ||
      c.lowering.ranks.size() != static_cast<size_t>(schedule.ranks)) {
    c.name = schedule.name;
    c.elements = schedule.elements;
    c.steps = schedule.total_steps();
    c.lowering = lower_for_nccl(schedule);
  }
  return c.lowering;
}

// Each communication stream starts after the work queued so far on its backend's stream.
void NcclRunner::begin_on_streams() {
  for (State& s : members_) {
    s.backend->context().activate();
    cudaEvent_t ready = nullptr;
    ST_CUDA_CHECK(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
    ST_CUDA_CHECK(cudaEventRecord(ready, s.backend->stream()));
    ST_CUDA_CHECK(cudaStreamWaitEvent(s.stream, ready, 0));
    ST_CUDA_CHECK(cudaEventDestroy(ready));
  }
  members_[0].backend->context().activate();
  if (begin_ != nullptr) ST_CUDA_CHECK(cudaEventDestroy(begin_));  // left by a start that threw
  ST_CUDA_CHECK(cudaEventCreate(&begin_));  // timing: where the collective starts on the device
  ST_CUDA_CHECK(cudaEventRecord(begin_, members_[0].stream));
}

uint64_t NcclRunner::finish_on_streams() {
  Pending p;
  p.begin = std::exchange(begin_, nullptr);
  for (State& s : members_) {
    s.backend->context().activate();
    cudaEvent_t e = nullptr;
    ST_CUDA_CHECK(cudaEventCreateWithFlags(&e, p.done.empty() ? cudaEventDefault : cudaEventDisableTiming));
    ST_CUDA_CHECK(cudaEventRecord(e, s.stream));
    p.done.push_back(e);
  }
  const uint64_t handle = next_handle_++;
  pending_[handle] = std::move(p);
  return handle;
}

uint64_t NcclRunner::start(const plan::Schedule& schedule, const std::vector<float*>& buffers) {
  ST_ASSERT(buffers.size() == members_.size(), "one buffer per driven rank");
  ST_ASSERT(schedule.ranks <= ranks_, fmt::format("schedule '{}' has {} ranks, the NCCL communicator {}",
                                                  schedule.name, schedule.ranks, ranks_));
  const NcclLowering& low = lowering(schedule);
  begin_on_streams();
  for (size_t m = 0; m < members_.size(); ++m) {
    State& s = members_[m];
    if (s.rank >= schedule.ranks) continue;
    s.backend->context().activate();
    grow(s.staging, low.staging_elements[static_cast<size_t>(s.rank)], s.stream);
    if (schedule.scratch_elements > 0) {
      grow(s.scratch, schedule.scratch_elements, s.stream);
      ST_CUDA_CHECK(cudaMemsetAsync(s.scratch.data(), 0, static_cast<size_t>(schedule.scratch_elements * kFloat),
                                    s.stream));
    }
  }
  for (int k = 0; k < low.rounds; ++k) run_round(schedule, low, k, buffers);
  return finish_on_streams();
}

void NcclRunner::run_round(const plan::Schedule& s, const NcclLowering& low, int round,
                           const std::vector<float*>& buffers) {
  const auto at = [&](size_t m, int64_t offset) {
    return offset < s.elements ? buffers[m] + offset : members_[m].scratch.floats() + (offset - s.elements);
  };
  bool any_p2p = false;
  for (size_t m = 0; m < members_.size(); ++m) {  // 1. copies
    State& st = members_[m];
    if (st.rank >= s.ranks) continue;
    const RankRound& r = low.ranks[static_cast<size_t>(st.rank)][static_cast<size_t>(round)];
    any_p2p = any_p2p || !r.p2p.empty();
    if (r.copies.empty()) continue;
    st.backend->context().activate();
    for (int i : r.copies) {
      const plan::Step& step = s.programs[static_cast<size_t>(st.rank)].steps[static_cast<size_t>(i)];
      ST_ASSERT(step.src_offset + step.length <= step.offset || step.offset + step.length <= step.src_offset,
                fmt::format("schedule '{}': a copy between overlapping ranges", s.name));
      ST_CUDA_CHECK(cudaMemcpyAsync(at(m, step.offset), at(m, step.src_offset),
                                    static_cast<size_t>(step.length * kFloat), cudaMemcpyDeviceToDevice, st.stream));
    }
  }
  if (!any_p2p) return;
  ST_NCCL_CHECK(ncclGroupStart());  // 2. one group for every driven rank
  for (size_t m = 0; m < members_.size(); ++m) {
    State& st = members_[m];
    if (st.rank >= s.ranks) continue;
    for (const P2pOp& op : low.ranks[static_cast<size_t>(st.rank)][static_cast<size_t>(round)].p2p) {
      const auto count = static_cast<size_t>(op.length);
      if (op.op == OpKind::kSend)
        ST_NCCL_CHECK(ncclSend(at(m, op.offset), count, ncclFloat32, op.peer, st.comm, st.stream));
      else if (op.op == OpKind::kRecv)
        ST_NCCL_CHECK(ncclRecv(at(m, op.offset), count, ncclFloat32, op.peer, st.comm, st.stream));
      else
        ST_NCCL_CHECK(ncclRecv(st.staging.floats() + op.staging_offset, count, ncclFloat32, op.peer, st.comm,
                               st.stream));
    }
  }
  ST_NCCL_CHECK(ncclGroupEnd());
  for (size_t m = 0; m < members_.size(); ++m) {  // 3. reductions from staging
    State& st = members_[m];
    if (st.rank >= s.ranks) continue;
    st.backend->context().activate();
    for (const P2pOp& op : low.ranks[static_cast<size_t>(st.rank)][static_cast<size_t>(round)].p2p)
      if (op.op == OpKind::kRecvReduce)
        launch_add(at(m, op.offset), st.staging.floats() + op.staging_offset, op.length, st.stream);
  }
}

uint64_t NcclRunner::start_allreduce(const std::vector<float*>& buffers, int64_t count) {
  ST_ASSERT(buffers.size() == members_.size(), "one buffer per driven rank");
  begin_on_streams();
  ST_NCCL_CHECK(ncclGroupStart());
  for (size_t m = 0; m < members_.size(); ++m)
    ST_NCCL_CHECK(ncclAllReduce(buffers[m], buffers[m], static_cast<size_t>(count), ncclFloat32, ncclSum,
                                members_[m].comm, members_[m].stream));
  ST_NCCL_CHECK(ncclGroupEnd());
  return finish_on_streams();
}

bool NcclRunner::done(uint64_t handle) {
  const auto it = pending_.find(handle);
  if (it == pending_.end()) return true;  // waited for already
  for (size_t m = 0; m < members_.size(); ++m) {
    const cudaError_t status = cudaEventQuery(it->second.done[m]);
    if (status == cudaErrorNotReady) {
      // Not done yet: unless NCCL has failed in the background (a peer or the network gone), which would leave
      // the caller polling forever.
      ncclResult_t async = ncclSuccess;
      ST_NCCL_CHECK(ncclCommGetAsyncError(members_[m].comm, &async));
      if (async != ncclSuccess && async != ncclInProgress)
        fail_call("NCCL", nccl_message(static_cast<int>(async)), "ncclCommGetAsyncError", __FILE__, __LINE__);
      return false;
    }
    ST_CUDA_CHECK(status);
  }
  return true;
}

void NcclRunner::wait(uint64_t handle) {
  const auto it = pending_.find(handle);
  if (it == pending_.end()) return;  // already waited for
  for (size_t m = 0; m < members_.size(); ++m) {
    members_[m].backend->context().activate();
    ST_CUDA_CHECK(cudaStreamWaitEvent(members_[m].backend->stream(), it->second.done[m], 0));
    ST_CUDA_CHECK(cudaEventDestroy(it->second.done[m]));
  }
  if (it->second.begin != nullptr) ST_CUDA_CHECK(cudaEventDestroy(it->second.begin));
  pending_.erase(it);
}

void NcclRunner::span_s(uint64_t handle, double* start_s, double* end_s) {
  const auto it = pending_.find(handle);
  ST_ASSERT(it != pending_.end() && it->second.begin != nullptr, "the span of a collective waited for already");
  members_[0].backend->context().activate();
  *start_s = members_[0].backend->event_time_s(it->second.begin);
  *end_s = members_[0].backend->event_time_s(it->second.done.at(0));
}

void NcclRunner::wait_all() {
  while (!pending_.empty()) wait(pending_.begin()->first);
}

std::unique_ptr<NcclRunner> make_single_process_runner(const std::vector<CudaBackend*>& backends) {
  std::vector<int> devices;
  for (const CudaBackend* b : backends) devices.push_back(b->device());
  std::vector<ncclComm_t> comms(backends.size());
  ST_NCCL_CHECK(ncclCommInitAll(comms.data(), static_cast<int>(comms.size()), devices.data()));
  std::vector<NcclRunner::Member> members;
  for (size_t i = 0; i < backends.size(); ++i) members.push_back({backends[i], comms[i]});
  return std::make_unique<NcclRunner>(std::move(members));
}

namespace {

class NcclCommunicator : public DeviceCommunicator {
 public:
  explicit NcclCommunicator(std::unique_ptr<NcclRunner> runner) : runner_(std::move(runner)) {}
  int rank() const override { return runner_->rank(0); }
  int ranks() const override { return runner_->ranks(); }
  uint64_t start(const plan::Schedule& schedule, float* buffer) override { return runner_->start(schedule, {buffer}); }
  uint64_t start_nccl_allreduce(float* buffer, int64_t count) override {
    return runner_->start_allreduce({buffer}, count);
  }
  bool done(uint64_t handle) override { return runner_->done(handle); }
  bool span_s(uint64_t handle, double* start_s, double* end_s) override {
    runner_->span_s(handle, start_s, end_s);
    return true;
  }
  void wait(uint64_t handle) override { runner_->wait(handle); }
  void wait_all() override { runner_->wait_all(); }

 private:
  std::unique_ptr<NcclRunner> runner_;
};

}  // namespace
}  // namespace scaletwin::exec::cuda

namespace scaletwin::exec {

std::unique_ptr<DeviceCommunicator> make_nccl_communicator(Backend& backend, int rank, int ranks,
                                                           const BroadcastFromRoot& broadcast_from_root) {
  auto* cuda_backend = dynamic_cast<cuda::CudaBackend*>(&backend);
  if (cuda_backend == nullptr) throw SystemError("NCCL needs a CUDA backend, not " + backend.name());
  ST_ASSERT(ranks >= 1 && rank >= 0 && rank < ranks, "NCCL rank outside [0, ranks)");
  ncclUniqueId id{};
  if (rank == 0) ST_NCCL_CHECK(ncclGetUniqueId(&id));
  if (ranks > 1) broadcast_from_root(&id, sizeof(id));
  cuda_backend->context().activate();
  ncclComm_t comm = nullptr;
  ST_NCCL_CHECK(ncclCommInitRank(&comm, ranks, id, rank));
  std::vector<cuda::NcclRunner::Member> members{{cuda_backend, comm}};
  return std::make_unique<cuda::NcclCommunicator>(std::make_unique<cuda::NcclRunner>(std::move(members)));
}

}  // namespace scaletwin::exec
