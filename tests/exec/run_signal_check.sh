#!/bin/sh
# Usage: run_signal_check.sh SCALETWIN SCENARIO WORK_DIR
# SIGTERM sent to the `scaletwin run --np 2` launcher alone (not to its process group, as a batch system or `kill PID`
# sends it) stops mpirun and its ranks: the launcher waits for them and exits 143, no process of the job is left,
# and the job's output file is not written (issue 54, F5).
set -u
bin=$1 scenario=$2 dir=$3
fail() { echo "FAIL: $*"; cat "$dir/run.log" 2>/dev/null; pkill -KILL -f -- "$dir/run.json" 2>/dev/null; exit 1; }
rm -rf "$dir" && mkdir -p "$dir" || exit 1
"$bin" run "$scenario" --np 2 --iterations 1000000 --threads 1 --json "$dir/run.json" >"$dir/run.log" 2>&1 &
launcher=$!
# The job is running once its ranks are (the launcher, mpirun and 2 ranks name the output file).
i=0
while [ "$(pgrep -f -- "$dir/run.json" | wc -l)" -lt 4 ]; do
  i=$((i + 1))
  [ $i -gt 120 ] && fail "the job did not start within 60 s"
  kill -0 $launcher 2>/dev/null || fail "the launcher ended before the signal"
  sleep 0.5
done
sleep 2
kill -TERM $launcher
wait $launcher
rc=$?
[ $rc -eq 143 ] || fail "the launcher exited $rc after SIGTERM, not 143"
i=0
while [ "$(pgrep -f -- "$dir/run.json" | wc -l)" -gt 0 ]; do  # mpirun's ranks may take a moment to be reaped
  i=$((i + 1))
  [ $i -gt 20 ] && fail "processes of the job are left 10 s after the launcher: $(pgrep -af -- "$dir/run.json")"
  sleep 0.5
done
[ -e "$dir/run.json" ] && fail "the stopped job wrote its output file"
grep -q "stopped by signal 15" "$dir/run.log" || fail "the launcher did not say it was stopped"
echo "ok: SIGTERM to the launcher stopped mpirun and its ranks (exit 143), nothing left, no output"
