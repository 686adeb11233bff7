// The NCCL communicator of exec/cuda_backend.hpp bootstrapped over MPI: rank 0 of `comm` creates the NCCL unique
// id (ncclGetUniqueId) and MPI_Bcast gives it to every rank; NCCL rank = MPI rank. Built only when MPI is found;
// a single process with one GPU needs none of this (make_nccl_communicator(backend, 0, 1, {})).
#pragma once

#include "exec/comm/mpi_check.hpp"  // mpi.h without the C++ bindings

#include <memory>

#include "exec/cuda_backend.hpp"

namespace scaletwin::exec {

std::unique_ptr<DeviceCommunicator> make_nccl_communicator_mpi(Backend& backend, MPI_Comm comm);

}  // namespace scaletwin::exec
