#!/bin/sh
# Usage: rank_signal_check.sh SCALETWIN SCENARIO WORK_DIR TARGET SIGNAL [bare]
# A signal to one process of a running `scaletwin run --np 2` job (with `bare`: `mpirun -np 2 scaletwin run`, the
# spec's form) ends the whole job (issue 54: a fault test per signal path). TARGET is a rank number (its process found
# by OMPI_COMM_WORLD_RANK: a worker, or the parameter server, the last rank of a parameter-server job) or "mpirun";
# SIGNAL is KILL, TERM, INT or HUP. The job must end within 10 s of the signal with a non-zero exit code (3 when a rank
# dies, under either launcher: the message names the rank), leave no process behind and write no output file.
set -u
bin=$1 scenario=$2 dir=$3 target=$4 signal=$5 launch=${6:-np}
fail() { echo "FAIL: $*"; cat "$dir/run.log" 2>/dev/null; pkill -KILL -f -- "$dir/run.json" 2>/dev/null; exit 1; }
rm -rf "$dir" && mkdir -p "$dir" || exit 1
. "$(dirname "$0")/long_job.sh"
start_long_job
sleep 2
victim=""
for p in $(pgrep -f -- "$dir/run.json"); do
  if [ "$target" = mpirun ]; then
    case "$(cat "/proc/$p/comm" 2>/dev/null)" in mpirun | orterun | mpiexec) victim=$p ;; esac
  elif tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$target"; then
    victim=$p
  fi
done
[ -n "$victim" ] || fail "no process for $target"
kill -"$signal" "$victim" || fail "could not signal $target (pid $victim)"
start=$(date +%s)
wait_job_end "SIG$signal to $target"
[ $rc -ne 0 ] || fail "the job exited 0 after SIG$signal to $target"
[ $took -le 10 ] || fail "the job took $took s to end after SIG$signal to $target (more than 10 s)"
if [ "$target" != mpirun ] && [ "$signal" = KILL ]; then
  [ $rc -eq 3 ] || fail "the job exited $rc after rank $target was killed, not 3"
  grep -q "rank $target" "$dir/run.log" || fail "the message does not name rank $target"
fi
check_job_gone
echo "ok: SIG$signal to $target (pid $victim) ended the job with exit $rc in $took s: $(grep -m1 -E "rank $target|failed" "$dir/run.log")"
