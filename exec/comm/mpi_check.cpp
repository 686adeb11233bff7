// MPI error checks and abort-on-failure (see mpi_check.hpp).
#include "exec/comm/mpi_check.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>

#include "core/error.hpp"

namespace scaletwin::exec {

namespace {

bool mpi_is_running() {
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized != 0 && finalized == 0;
}

}  // namespace

std::string rank_and_host() {
  std::array<char, 256> host{};
  if (gethostname(host.data(), host.size() - 1) != 0) host[0] = '\0';
  if (!mpi_is_running()) return fmt::format("rank ?@{}", host.data());
  int rank = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return fmt::format("rank {}@{}", rank, host.data());
}

void fail_mpi(int error_code, const char* expr, const char* file, int line) {
  std::array<char, MPI_MAX_ERROR_STRING> text{};
  int length = 0;
  if (MPI_Error_string(error_code, text.data(), &length) != MPI_SUCCESS) length = 0;
  throw SystemError(fmt::format("[{}] MPI error in {} at {}:{}: {}", rank_and_host(), expr, file, line,
                                std::string(text.data(), static_cast<size_t>(length))));
}

void set_errors_return(MPI_Comm comm) { ST_MPI_CHECK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN)); }

int exit_code_for(const std::exception& e) {
  if (dynamic_cast<const InputError*>(&e) != nullptr) return kExitBadInput;
  if (dynamic_cast<const SystemError*>(&e) != nullptr) return kExitSystem;
  if (dynamic_cast<const InternalError*>(&e) != nullptr) return kExitInternal;
  return 1;
}

int run_or_abort(MPI_Comm comm, const std::function<int()>& body) {
  int code = 1;
  try {
    return body();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "[%s] error: %s\n", rank_and_host().c_str(), e.what());
    code = exit_code_for(e);
  } catch (...) {
    std::fprintf(stderr, "[%s] error: unknown exception\n", rank_and_host().c_str());
  }
  std::fflush(stderr);
  if (mpi_is_running()) MPI_Abort(comm, code);
  std::_Exit(code);
}

}  // namespace scaletwin::exec
