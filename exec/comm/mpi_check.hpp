// Error handling around MPI: check macros and the "any rank fails, the whole job goes down" rule.
//
// ST_MPI_CHECK(MPI_Isend(...)) throws SystemError (exit 3) naming the rank, the host, file:line, the expression
// and MPI's error string. For the check to see errors at all, the communicator must return them instead of
// aborting on its own: set_errors_return(comm) (ScheduleRunner does it on its private communicator).
//
// run_or_abort(comm, body) runs body; if it throws on any rank, that rank prints "[rank R@HOST] error: ..." to
// stderr and calls MPI_Abort with the exception's exit code (InputError 2, SystemError 3, InternalError 70,
// anything else 1), which takes down every rank of the job: nothing waits forever for a dead peer. The executor's
// main loop and the MPI test programs run inside it.
#pragma once

#include "exec/comm/mpi.hpp"

#include <exception>
#include <functional>
#include <string>

namespace scaletwin::exec {

// "rank R@HOST" for messages (world rank; "rank ?" before MPI_Init or after MPI_Finalize).
std::string rank_and_host();

// Throws SystemError: "[rank R@HOST] MPI error in EXPR at FILE:LINE: MPI_ERROR_STRING".
[[noreturn]] void fail_mpi(int error_code, const char* expr, const char* file, int line);

// Makes MPI calls on comm return error codes (checked by ST_MPI_CHECK) instead of aborting without a message.
void set_errors_return(MPI_Comm comm);

// The process exit code for an exception: scaletwin's typed errors map to ExitCode, anything else to 1.
int exit_code_for(const std::exception& e);

// Runs body and returns its result; on any exception prints the message with the rank and host to stderr and
// calls MPI_Abort(comm, exit_code_for(e)). Never returns after an exception.
int run_or_abort(MPI_Comm comm, const std::function<int()>& body);

}  // namespace scaletwin::exec

#define ST_MPI_CHECK(expr)                                                                        \
  do {                                                                                           \
    const int st_mpi_rc_ = (expr);                                                               \
    if (st_mpi_rc_ != MPI_SUCCESS) ::scaletwin::exec::fail_mpi(st_mpi_rc_, #expr, __FILE__, __LINE__); \
  } while (0)
