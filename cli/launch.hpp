// Launching a subcommand under mpirun from the command itself (`scaletwin run --np P`, `scaletwin explore --np N`).
//
// launch_under_mpirun runs `mpirun [--allow-run-as-root] --oversubscribe -np RANKS THIS_PROGRAM ARGS...` and waits
// for it. SIGINT, SIGTERM and SIGHUP sent to the launcher alone are passed on to mpirun, which stops its ranks, and
// the launcher waits for it (issue 54, F5). The result is the job's exit code: the ranks' own (0, 2, 3 or 70) when
// they ended with one; 128 + the signal when the launcher was stopped by one; 3 when a rank was killed or mpirun
// failed (mpirun names the rank on standard error; the launcher says that the job failed).
//
// supervise_rank makes a rank that a bare `mpirun -np P scaletwin run|explore ...` starts end the job with exit 3
// when it is killed (issue 54, F19): mpirun's own exit code for a rank killed by a signal is 128 + the signal, and no
// process can change how it itself died. So the process mpirun starts forks: the child is the rank (it runs the
// command, holds the MPI connection, and dies with its parent: PR_SET_PDEATHSIG); the parent re-executes itself as
// `scaletwin-supervisor PID RANK` without the MPI environment (so `pgrep -f 'scaletwin run'` and the
// OMPI_COMM_WORLD_RANK a tool looks for find the rank, not it) and waits. A rank killed by a signal: the supervisor
// says so and exits 3, which mpirun reports as the job's exit code. SIGINT, SIGTERM and SIGHUP sent to the
// supervisor go on to the rank (with SIGCONT, for a stopped one); the rank's own exit code passes through. SIGKILL
// to the supervisor itself kills the rank too and leaves mpirun's 137.
#pragma once

#include <string>
#include <vector>

namespace scaletwin::cli {

int launch_under_mpirun(const std::string& command, int ranks, const std::vector<std::string>& args);

// Called first in main: -1 to go on with the command (this process is the rank, or not under mpirun at all), else
// the supervisor's exit code. Only `run` and `explore` under Open MPI's mpirun (OMPI_COMM_WORLD_RANK set) fork.
int supervise_rank(int argc, char** argv);

}  // namespace scaletwin::cli
