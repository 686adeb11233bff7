// Launching a subcommand under mpirun from the command itself (`scaletwin run --np P`, `scaletwin explore --np N`).
//
// launch_under_mpirun runs `mpirun [--allow-run-as-root] --oversubscribe -np RANKS THIS_PROGRAM ARGS...` and waits
// for it. SIGINT, SIGTERM and SIGHUP sent to the launcher alone are passed on to mpirun, which stops its ranks, and
// the launcher waits for it (issue 54, F5). The result is the job's exit code: the ranks' own (0, 2, 3 or 70) when
// they ended with one; 128 + the signal when the launcher was stopped by one; 3 when a rank was killed or mpirun
// failed (mpirun names the rank on standard error; the launcher says that the job failed).
#pragma once

#include <string>
#include <vector>

namespace scaletwin::cli {

int launch_under_mpirun(const std::string& command, int ranks, const std::vector<std::string>& args);

}  // namespace scaletwin::cli
