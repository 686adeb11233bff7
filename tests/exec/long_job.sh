# Sourced by the signal and watchdog checks: starts `scaletwin run SCENARIO --np 2` for a run that does not end on
# its own, writing DIR/run.json and DIR/run.log, and waits until its ranks run. Needs bin, scenario, dir and fail().
# Sets launcher (the launcher's pid).
start_long_job() {
  "$bin" run "$scenario" --np 2 --iterations 1000000 --threads 1 --json "$dir/run.json" >"$dir/run.log" 2>&1 &
  launcher=$!
  # The job is running once its ranks are (the launcher, mpirun and 2 ranks name the output file).
  i=0
  while [ "$(pgrep -f -- "$dir/run.json" | wc -l)" -lt 4 ]; do
    i=$((i + 1))
    [ $i -gt 120 ] && fail "the job did not start within 60 s"
    kill -0 $launcher 2>/dev/null || fail "the launcher ended before its ranks ran"
    sleep 0.5
  done
}
