// Internal to exec/cuda: the schedule interpreter over NCCL, for the ranks this process drives (one under MPI;
// every local GPU in a single-process group, as the GPU tests use it).
//
// start() enqueues a whole collective without blocking the host: each driven rank's communication stream first
// waits for the work already queued on its backend's stream (an event), then, round by round of the lowering
// (nccl_lowering.hpp), runs the round's Copy steps (cudaMemcpyAsync), one ncclGroupStart/ncclGroupEnd holding
// every driven rank's ncclSend/ncclRecv of the round, and the add kernel for each RecvReduce from staging. So a
// bucket's all-reduce overlaps whatever the backend's stream does next (the rest of the backward pass); wait()
// makes each backend's stream wait for the collective's end (an event), without blocking the host.
// The lowering is computed once per schedule and cached. Rank map: identity (schedule rank r = NCCL rank r;
// ranks at or past schedule.ranks take no part).
#pragma once

#include <nccl.h>

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "exec/cuda/cuda_backend_impl.hpp"
#include "exec/cuda/nccl_lowering.hpp"

namespace scaletwin::exec::cuda {

class NcclRunner {
 public:
  struct Member {
    CudaBackend* backend = nullptr;
    ncclComm_t comm = nullptr;  // owned by the runner from here on
  };
  explicit NcclRunner(std::vector<Member> members);
  ~NcclRunner();
  NcclRunner(const NcclRunner&) = delete;
  NcclRunner& operator=(const NcclRunner&) = delete;

  size_t members() const { return members_.size(); }
  int rank(size_t member) const { return members_[member].rank; }
  int ranks() const { return ranks_; }

  // buffers[m]: member m's buffer of schedule.elements floats (device memory of its backend).
  uint64_t start(const plan::Schedule& schedule, const std::vector<float*>& buffers);
  uint64_t start_allreduce(const std::vector<float*>& buffers, int64_t count);
  bool done(uint64_t handle);  // every member's end event has fired (cudaEventQuery; never blocks)
  // After done(handle): member 0's start (its communication stream past the wait for the backend's work) and end
  // on the host's clock (CudaBackend::event_time_s).
  void span_s(uint64_t handle, double* start_s, double* end_s);
  void wait(uint64_t handle);
  void wait_all();

  const NcclLowering& lowering(const plan::Schedule& schedule);

 private:
  struct State {
    CudaBackend* backend = nullptr;
    ncclComm_t comm = nullptr;
    int rank = 0;
    cudaStream_t stream = nullptr;  // communication
    DeviceBytes staging, scratch;
  };
  struct Cached {
    std::string name;
    int64_t elements = 0;
    size_t steps = 0;
    NcclLowering lowering;
  };
  void begin_on_streams();
  uint64_t finish_on_streams();
  void run_round(const plan::Schedule& s, const NcclLowering& low, int round, const std::vector<float*>& buffers);

  std::vector<State> members_;
  int ranks_ = 0;
  std::map<const plan::Schedule*, Cached> cache_;
  struct Pending {
    cudaEvent_t begin = nullptr;     // member 0's start (timing)
    std::vector<cudaEvent_t> done;   // each member's end (member 0's with timing)
  };
  std::map<uint64_t, Pending> pending_;
  cudaEvent_t begin_ = nullptr;  // recorded by begin_on_streams, taken by finish_on_streams
  uint64_t next_handle_ = 1;
};

// Every given backend (distinct devices) as one rank of a communicator made by ncclCommInitAll, in order.
std::unique_ptr<NcclRunner> make_single_process_runner(const std::vector<CudaBackend*>& backends);

}  // namespace scaletwin::exec::cuda
