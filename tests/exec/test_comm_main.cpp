// The Catch2 main of the MPI tests: every rank runs every test case (they call collectives, so in the same order),
// and the job's exit code combines every rank's result (the maximum number of failed assertions), so a failure on
// any rank fails the CTest entry. An exception escaping a test case on one rank would leave the others waiting in
// a collective: the whole session runs inside run_or_abort, and the tests count mismatches across ranks
// (MPI_Allreduce) before asserting, so every rank takes the same path.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include "exec/comm/mpi_check.hpp"

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  return scaletwin::exec::run_or_abort(MPI_COMM_WORLD, [&] {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    Catch::Session session;
    const int failed = session.run(argc, argv);
    int worst = 0;
    ST_MPI_CHECK(MPI_Allreduce(&failed, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    if (rank == 0 && worst != 0) std::fprintf(stderr, "MPI tests: a rank failed (%d failed assertions at most)\n", worst);
    MPI_Finalize();
    return worst == 0 ? 0 : 1;
  });
}
