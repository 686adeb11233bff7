#!/bin/sh
# Usage: signal_outputs_check.sh SCALETWIN SCENARIO WORK_DIR
# A signal that arrives while a command writes its outputs (issue 54, F14): `predict --json FILE --report DIR` with
# SIGTERM sent while its first output is being written (SCALETWIN_TEST_OUTPUT_PAUSE_S holds each write for 1 s)
# still writes every output whole, leaves no temporary or staging file, and then ends as SIGTERM ends it (143). A
# signal during the simulation, before any output, ends it at once with nothing written.
set -u
bin=$1 scenario=$2 dir=$3
fail() { echo "FAIL: $*"; ls -la "$dir"; exit 1; }
rm -rf "$dir" && mkdir -p "$dir" || exit 1
SCALETWIN_TEST_OUTPUT_PAUSE_S=1 "$bin" predict "$scenario" --gpus 1,2 --fidelity fast -q --json "$dir/p.json" \
  --report "$dir/report" > "$dir/out.txt" 2> "$dir/err.txt" &
pid=$!
# The first output is being written once its temporary file exists.
i=0
while [ -z "$(find "$dir" -name '.*.tmp.*' 2>/dev/null)" ]; do
  i=$((i + 1))
  [ $i -gt 300 ] && fail "no output was being written within 30 s"
  kill -0 $pid 2>/dev/null || fail "predict ended before it wrote"
  sleep 0.1
done
kill -TERM $pid
wait $pid
rc=$?
[ $rc -eq 143 ] || fail "predict exited $rc after SIGTERM while writing, not 143"
/usr/bin/python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$dir/p.json" || fail "p.json is not whole"
for f in report.json report.txt report.html; do [ -s "$dir/report/$f" ] || fail "report/$f is missing"; done
left=$(find "$dir" -name '.*.tmp.*' | head -3)
[ -z "$left" ] || fail "temporary files left: $left"
echo "ok: SIGTERM while writing: every output whole, nothing temporary left, exit 143"

# A signal during the simulation, before any output: the command ends at once, nothing written, nothing left.
rm -rf "$dir/early" && mkdir -p "$dir/early"
"$bin" predict "$scenario" --gpus 8,16,32,64 --fidelity message -q --json "$dir/early/p.json" --report "$dir/early/report" \
  > /dev/null 2>&1 &
pid=$!
sleep 1
kill -0 $pid 2>/dev/null || fail "the simulation ended within 1 s: the check needs a longer one"
kill -TERM $pid
wait $pid
rc=$?
[ $rc -eq 143 ] || fail "predict exited $rc after SIGTERM during the simulation, not 143"
[ -z "$(ls -A "$dir/early")" ] || fail "a signal during the simulation left: $(ls -A "$dir/early")"
echo "ok: SIGTERM during the simulation: exit 143, nothing written or left"
