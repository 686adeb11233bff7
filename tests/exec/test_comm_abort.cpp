// A tiny MPI program for the abort test: every rank starts a ring all-reduce, and the last rank throws before
// taking part, so the others wait for data that never comes. run_or_abort must print the error and bring the whole
// job down (MPI_Abort with exit code 3 for a SystemError) instead of leaving it hanging; comm_abort_check.sh runs
// it under a timeout and checks the exit code and the message.
#include <vector>

#include "core/error.hpp"
#include "exec/comm/comm.hpp"
#include "exec/comm/mpi_check.hpp"
#include "plan/collectives.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  return scaletwin::exec::run_or_abort(MPI_COMM_WORLD, [] {
    scaletwin::exec::ScheduleRunner runner(MPI_COMM_WORLD);
    const int p = runner.comm_size();
    const auto schedule = scaletwin::plan::ring_allreduce(p, 1 << 16, 4);
    std::vector<float> buffer(1 << 16, 1.0f);
    if (runner.comm_rank() == p - 1) throw scaletwin::SystemError("injected failure on the last rank");
    runner.run(schedule, std::span<float>(buffer));
    MPI_Finalize();
    return 0;
  });
}
