#!/bin/sh
# Usage: trace_check.sh SCALETWIN SCENARIO WORK_DIR
# run --trace on 2 ranks (lenet5, synthetic data, a few iterations) against predict --trace on the same scenario and
# 2 GPUs: run's file is valid JSON, every (name, category) of its X events is one predict's trace has too, every
# event has dur >= 0, and both ranks have compute (tid 0) and communication (tid 1) events.
set -u
bin=$1 scenario=$2 dir=$3
rm -rf "$dir" && mkdir -p "$dir" || exit 1
"$bin" run "$scenario" --np 2 --iterations 8 --threads 1 --quiet --json "$dir/run.json" --trace "$dir/run-trace.json" \
  >"$dir/run.log" 2>&1 || { cat "$dir/run.log"; echo "FAIL: scaletwin run exited with $?"; exit 1; }
"$bin" predict "$scenario" --gpus 2 --quiet --json "$dir/predict.json" --trace "$dir/predict-trace.json" \
  >"$dir/predict.log" 2>&1 || { cat "$dir/predict.log"; echo "FAIL: scaletwin predict exited with $?"; exit 1; }
fail() { echo "FAIL: $*"; exit 1; }
jq -e '.traceEvents | type == "array"' "$dir/run-trace.json" >/dev/null || fail "run's trace is not JSON with traceEvents"
pairs() { jq -r '.traceEvents[] | select(.ph == "X") | "\(.name)\t\(.cat)"' "$1" | sort -u; }
pairs "$dir/run-trace.json" >"$dir/run-pairs.txt"
pairs "$dir/predict-trace.json" >"$dir/predict-pairs.txt"
[ -s "$dir/run-pairs.txt" ] || fail "run's trace has no X events"
extra=$(comm -23 "$dir/run-pairs.txt" "$dir/predict-pairs.txt")
[ -z "$extra" ] || fail "(name, category) in run's trace but not in predict's: $extra"
jq -e '[.traceEvents[] | select(.ph == "X") | .dur >= 0 and .ts >= 0] | all' "$dir/run-trace.json" >/dev/null ||
  fail "an event has a negative dur or ts"
for pid in 0 1; do
  for tid in 0 1; do
    n=$(jq "[.traceEvents[] | select(.ph == \"X\" and .pid == $pid and .tid == $tid)] | length" "$dir/run-trace.json")
    [ "$n" -gt 0 ] || fail "no events of rank $pid on track $tid"
  done
  jq -e ".traceEvents | any(.ph == \"M\" and .name == \"process_name\" and .pid == $pid and .args.name == \"rank $pid\")" \
    "$dir/run-trace.json" >/dev/null || fail "no process_name \"rank $pid\""
done
echo "run's (name, category) pairs: $(tr '\t\n' ' ;' <"$dir/run-pairs.txt")"
echo "predict's: $(wc -l <"$dir/predict-pairs.txt") pairs; run's: $(wc -l <"$dir/run-pairs.txt")"
echo "PASS"
