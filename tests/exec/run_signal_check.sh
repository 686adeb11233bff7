#!/bin/sh
# Usage: run_signal_check.sh SCALETWIN SCENARIO WORK_DIR
# SIGTERM sent to the `scaletwin run --np 2` launcher alone (not to its process group, as a batch system or `kill PID`
# sends it) stops mpirun and its ranks: the launcher waits for them and exits 143, no process of the job is left,
# and the job's output file is not written (issue 54, F5).
set -u
bin=$1 scenario=$2 dir=$3
fail() { echo "FAIL: $*"; cat "$dir/run.log" 2>/dev/null; pkill -KILL -f -- "$dir/run.json" 2>/dev/null; exit 1; }
rm -rf "$dir" && mkdir -p "$dir" || exit 1
. "$(dirname "$0")/long_job.sh"
start_long_job
sleep 2
kill -TERM $launcher
wait $launcher
rc=$?
[ $rc -eq 143 ] || fail "the launcher exited $rc after SIGTERM, not 143"
check_job_gone
grep -q "stopped by signal 15" "$dir/run.log" || fail "the launcher did not say it was stopped"
echo "ok: SIGTERM to the launcher stopped mpirun and its ranks (exit 143), nothing left, no output"
