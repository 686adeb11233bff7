# Sourced by the signal and watchdog checks: starts `scaletwin run SCENARIO --np 2` (or, with launch=bare, the
# spec's form `mpirun -np 2 scaletwin run SCENARIO`, 2 ranks of a ring) for a run that does not end on its own,
# writing DIR/run.json and DIR/run.log, and waits until its ranks run. Needs bin, scenario, dir and fail(). Sets
# launcher (the launcher's pid, or mpirun's). wait_job_end and check_job_gone: what every check asks of the job's end.
start_long_job() {
  if [ "${launch:-np}" = bare ]; then
    mpirun --allow-run-as-root --oversubscribe -np 2 "$bin" run "$scenario" --iterations 1000000 --threads 1 \
      --json "$dir/run.json" >"$dir/run.log" 2>&1 &
    processes=3  # mpirun and 2 ranks name the output file
  else
    "$bin" run "$scenario" --np 2 --iterations 1000000 --threads 1 --json "$dir/run.json" >"$dir/run.log" 2>&1 &
    processes=4  # the launcher, mpirun and 2 ranks
  fi
  launcher=$!
  # The job is running once its ranks are.
  i=0
  while [ "$(pgrep -f -- "$dir/run.json" | wc -l)" -lt $processes ]; do
    i=$((i + 1))
    [ $i -gt 120 ] && fail "the job did not start within 60 s"
    kill -0 $launcher 2>/dev/null || fail "the launcher ended before its ranks ran"
    sleep 0.5
  done
}

# Waits until the launcher ends, at most 30 s after the event `$1` (start: its time, date +%s); sets rc (the launcher's
# exit code) and took (seconds since start).
wait_job_end() {
  i=0
  while kill -0 $launcher 2>/dev/null; do
    i=$((i + 1))
    [ $i -gt 60 ] && fail "the job is still there 30 s after $1"
    sleep 0.5
  done
  wait $launcher
  rc=$?
  took=$(($(date +%s) - start))
}

# No process of the job is left (mpirun's ranks may take a moment to be reaped) and no output file was written.
check_job_gone() {
  i=0
  while [ "$(pgrep -f -- "$dir/run.json" | wc -l)" -gt 0 ]; do
    i=$((i + 1))
    [ $i -gt 20 ] && fail "processes of the job are left 10 s after the launcher: $(pgrep -af -- "$dir/run.json")"
    sleep 0.5
  done
  [ -e "$dir/run.json" ] && fail "the job wrote its output file"
  return 0
}
