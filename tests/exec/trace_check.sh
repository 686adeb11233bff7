#!/bin/sh
# Usage: trace_check.sh SCALETWIN SCENARIO WORK_DIR [GPUS]
# run --trace on GPUS workers (default 2; plus the scheme's parameter servers) of a small scenario (lenet5, synthetic
# data, a few iterations) against predict --trace on the same scenario and GPU count: run's file is valid JSON, its
# set of (name, category) pairs of X events equals predict's, every event has dur >= 0 and ts >= 0, and every rank
# (workers and servers) has compute (tid 0) and communication (tid 1) events and its process name, and run's
# backward_weight spans name layers that predict's events name.
set -u
bin=$1 scenario=$2 dir=$3 gpus=${4:-2}
rm -rf "$dir" && mkdir -p "$dir" || exit 1
"$bin" run "$scenario" --np "$gpus" --iterations 8 --threads 1 --quiet --json "$dir/run.json" --trace "$dir/run-trace.json" \
  >"$dir/run.log" 2>&1 || { cat "$dir/run.log"; echo "FAIL: scaletwin run exited with $?"; exit 1; }
"$bin" predict "$scenario" --gpus "$gpus" --quiet --json "$dir/predict.json" --trace "$dir/predict-trace.json" \
  >"$dir/predict.log" 2>&1 || { cat "$dir/predict.log"; echo "FAIL: scaletwin predict exited with $?"; exit 1; }
fail() { echo "FAIL: $*"; exit 1; }
jq -e '.traceEvents | type == "array"' "$dir/run-trace.json" >/dev/null || fail "run's trace is not JSON with traceEvents"
# sets NAME FILTER: the sorted set of what the jq FILTER lists, from each trace into $dir/run-NAME.txt, predict-NAME.txt.
sets() { for side in run predict; do jq -r "$2" "$dir/$side-trace.json" | sort -u >"$dir/$side-$1.txt"; done; }
# within A B NAME WHAT: fails with WHAT when $dir/A-NAME.txt has a line that $dir/B-NAME.txt lacks.
within() { extra=$(comm -23 "$dir/$1-$3.txt" "$dir/$2-$3.txt"); [ -z "$extra" ] || fail "$4: $extra"; }
sets pairs '.traceEvents[] | select(.ph == "X") | "\(.name)\t\(.cat)"'
[ -s "$dir/run-pairs.txt" ] || fail "run's trace has no X events"
within run predict pairs "(name, category) in run's trace but not in predict's"
within predict run pairs "(name, category) in predict's trace but not in run's"
jq -e '[.traceEvents[] | select(.ph == "X") | .dur >= 0 and .ts >= 0] | all' "$dir/run-trace.json" >/dev/null ||
  fail "an event has a negative dur or ts"
ranks=$(jq '[.traceEvents[] | select(.ph == "M" and .name == "process_name")] | length' "$dir/run-trace.json")
[ "$ranks" -ge 2 ] || fail "$ranks processes in run's trace, expected every rank"
pid=0
while [ "$pid" -lt "$ranks" ]; do
  for tid in 0 1; do
    n=$(jq "[.traceEvents[] | select(.ph == \"X\" and .pid == $pid and .tid == $tid)] | length" "$dir/run-trace.json")
    [ "$n" -gt 0 ] || fail "no events of rank $pid on track $tid"
  done
  jq -e ".traceEvents | any(.ph == \"M\" and .name == \"process_name\" and .pid == $pid and .args.name == \"rank $pid\")" \
    "$dir/run-trace.json" >/dev/null || fail "no process_name \"rank $pid\""
  pid=$((pid + 1))
done
# A backward_weight span names the layer whose gradient is ready at its end, by the name predict's events give it.
sets layers '.traceEvents[] | select(.ph == "X" and .name == "backward_weight") | .args.layer // empty'
[ -s "$dir/run-layers.txt" ] || fail "run's backward_weight spans name no layer"
within run predict layers "layers in run's trace that predict's does not name"
echo "run's (name, category) pairs: $(tr '\t\n' ' ;' <"$dir/run-pairs.txt")"
echo "predict's: $(wc -l <"$dir/predict-pairs.txt") pairs; run's: $(wc -l <"$dir/run-pairs.txt")"
echo "PASS"
