// On GPUs: our schedules interpreted over NCCL (grouped ncclSend / ncclRecv per round, the add kernel for
// RecvReduce) equal ncclAllReduce bit for bit on integer-valued data, for every all-reduce generator, with every
// local GPU as one rank of a single-process communicator. With one GPU, the single-process bootstrap without MPI
// (make_nccl_communicator with one rank) still runs; the multi-rank test is skipped visibly.
#include <catch2/catch.hpp>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <random>

#include "exec/cuda/nccl_runner.hpp"
#include "exec/cuda_backend.hpp"
#include "plan/collectives.hpp"
#include "test_cuda_support.hpp"

using namespace scaletwin;
using namespace scaletwin::exec;
using namespace scaletwin::exec::cuda_testing;

namespace {

std::vector<float> integer_data(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = static_cast<float>(static_cast<int>(rng() % 17) - 8);
  return v;
}

std::vector<float> download(Backend& b, const float* p, int64_t n) {
  std::vector<float> host(static_cast<size_t>(n));
  b.download(host.data(), p, n);
  return host;
}

}  // namespace

TEST_CASE("GPU: one process, one GPU, no MPI: a one-rank NCCL communicator runs a schedule and ncclAllReduce") {
  skip_without_gpu();
  auto backend = make_cuda_backend(0);
  auto comm = make_nccl_communicator(*backend, 0, 1, {});
  REQUIRE((comm->rank() == 0 && comm->ranks() == 1));
  const int64_t n = 4099;
  const std::vector<float> data = integer_data(n, 1);
  Buffer buffer = backend->alloc(n);
  backend->upload(buffer.data(), data.data(), n);
  const plan::Schedule ring = plan::ring_allreduce(1, n, 4);
  comm->wait(comm->start(ring, buffer.data()));
  comm->wait(comm->start_nccl_allreduce(buffer.data(), n));
  REQUIRE(download(*backend, buffer.data(), n) == data);
}

TEST_CASE("GPU: every all-reduce schedule over NCCL equals ncclAllReduce on all local GPUs") {
  skip_without_gpu();
  int devices = 0;
  REQUIRE(cudaGetDeviceCount(&devices) == cudaSuccess);
  if (devices < 2) {
    std::printf("SKIPPED: NCCL schedules need at least 2 GPUs in this process, found %d\n", devices);
    std::fflush(stdout);
    std::exit(kSkipReturnCode);
  }
  std::vector<std::unique_ptr<Backend>> backends;
  std::vector<cuda::CudaBackend*> raw;
  for (int d = 0; d < devices; ++d) {
    backends.push_back(make_cuda_backend(d));
    raw.push_back(dynamic_cast<cuda::CudaBackend*>(backends.back().get()));
  }
  auto runner = cuda::make_single_process_runner(raw);
  const int p = devices;
  const int64_t n = 1000003;
  std::vector<Buffer> ours, theirs;
  std::vector<std::vector<float>> inputs;
  for (int r = 0; r < p; ++r) {
    inputs.push_back(integer_data(n, 100 + static_cast<uint64_t>(r)));
    ours.push_back(backends[r]->alloc(n));
    theirs.push_back(backends[r]->alloc(n));
  }
  const auto pointers = [&](std::vector<Buffer>& bufs) {
    std::vector<float*> v;
    for (Buffer& b : bufs) v.push_back(b.data());
    return v;
  };
  for (int r = 0; r < p; ++r) backends[r]->upload(theirs[r].data(), inputs[r].data(), n);
  runner->wait(runner->start_allreduce(pointers(theirs), n));
  for (auto& b : backends) b->synchronize();
  const std::vector<float> expected = download(*backends[0], theirs[0].data(), n);
  for (const plan::Algorithm algo : plan::collective_algorithms(plan::Collective::kAllReduce)) {
    if (algo == plan::Algorithm::kPs || algo == plan::Algorithm::kPsAsync) continue;  // more ranks than GPUs (servers)
    plan::CollectiveOptions options;
    if (algo == plan::Algorithm::kHierarchical) {
      if (p % 2 != 0) continue;
      options.ranks_per_node = 2;
    }
    const plan::Schedule s = plan::make_collective(plan::Collective::kAllReduce, algo, p, n, 4, options);
    for (int r = 0; r < p; ++r) backends[r]->upload(ours[r].data(), inputs[r].data(), n);
    for (int repeat = 0; repeat < 2; ++repeat) {  // the second run reuses the cached lowering and staging
      if (repeat == 1)
        for (int r = 0; r < p; ++r) backends[r]->upload(ours[r].data(), inputs[r].data(), n);
      runner->wait(runner->start(s, pointers(ours)));
      for (int r = 0; r < p; ++r) {
        INFO(plan::algorithm_name(algo) << " rank " << r << " run " << repeat);
        REQUIRE(download(*backends[r], ours[r].data(), n) == expected);
      }
    }
  }
}
