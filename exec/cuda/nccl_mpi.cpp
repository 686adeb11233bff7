// NCCL bootstrap over MPI (see nccl_mpi.hpp).
#include "exec/cuda/nccl_mpi.hpp"

#include "exec/comm/mpi_check.hpp"

namespace scaletwin::exec {

std::unique_ptr<DeviceCommunicator> make_nccl_communicator_mpi(Backend& backend, MPI_Comm comm) {
  int rank = 0, ranks = 1;
  ST_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  ST_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  return make_nccl_communicator(backend, rank, ranks, [comm](void* bytes, size_t size) {
    ST_MPI_CHECK(MPI_Bcast(bytes, static_cast<int>(size), MPI_BYTE, 0, comm));
  });
}

}  // namespace scaletwin::exec
