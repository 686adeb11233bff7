#!/bin/sh
# Usage: watchdog_check.sh SCALETWIN SCENARIO WORK_DIR
# A stopped rank ends the job instead of hanging it (issue 54, F10): `run --np 2` on a long run, rank 1 stopped with
# SIGSTOP; with the watchdog's floor at 3 s (SCALETWIN_WATCHDOG_S=3) the job ends with exit 3 within 15 s of the
# stop, the message names rank 1 as stopped, no process of the job is left, and no output file is written.
set -u
bin=$1 scenario=$2 dir=$3
fail() { echo "FAIL: $*"; cat "$dir/run.log" 2>/dev/null; pkill -CONT -f -- "$dir/run.json"; pkill -KILL -f -- "$dir/run.json" 2>/dev/null; exit 1; }
rm -rf "$dir" && mkdir -p "$dir" || exit 1
export SCALETWIN_WATCHDOG_S=3
. "$(dirname "$0")/long_job.sh"
start_long_job
sleep 3
stopped=""
for p in $(pgrep -f -- "$dir/run.json"); do
  if tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=1"; then
    kill -STOP "$p" && stopped=$p
  fi
done
[ -n "$stopped" ] || fail "rank 1 was not found"
start=$(date +%s)
wait_job_end "rank 1 was stopped"
[ $rc -eq 3 ] || fail "the job exited $rc after a rank was stopped, not 3"
[ $took -le 15 ] || fail "the job took $took s to end after the stop (more than 15 s)"
grep -q "no progress for" "$dir/run.log" || fail "no watchdog message"
grep -q "rank 1 (pid $stopped) is stopped" "$dir/run.log" || fail "the message does not name rank 1 as stopped"
check_job_gone
echo "ok: the stopped rank 1 ended the job with exit 3 in $took s: $(grep "no progress for" "$dir/run.log" | head -1)"
