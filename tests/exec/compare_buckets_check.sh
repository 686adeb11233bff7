#!/bin/sh
# Usage: compare_buckets_check.sh SCALETWIN SCENARIO WORK_DIR GPUS
# The run record's per-bucket collective times against predict, through the binary: scaletwin run (GPUS workers, a
# few iterations, synthetic data) writes "collectives": [{"label", "seconds"}] with every seconds > 0, and
# `scaletwin compare` of predict --json (same scenario, GPUS) against it joins every collective label of the
# prediction with a measured figure > 0 (no predicted label left unmatched). The run record's compute_jitter is the
# mean of its workers' compute_cv, its cpu_steal (Linux) the mean of theirs.
set -u
bin=$1 scenario=$2 dir=$3 gpus=$4
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$dir" && mkdir -p "$dir" || exit 1
"$bin" run "$scenario" --np "$gpus" --iterations 8 --threads 1 --quiet --json "$dir/run.json" >"$dir/run.log" 2>&1 ||
  { cat "$dir/run.log"; fail "scaletwin run exited with $?"; }
"$bin" predict "$scenario" --gpus "$gpus" --quiet --json "$dir/predict.json" >"$dir/predict.log" 2>&1 ||
  { cat "$dir/predict.log"; fail "scaletwin predict exited with $?"; }
"$bin" compare "$dir/predict.json" "$dir/run.json" --json "$dir/compare.json" >"$dir/compare.log" 2>&1 ||
  { cat "$dir/compare.log"; fail "scaletwin compare exited with $?"; }
cat "$dir/compare.log"

jq -e '.runs[0].collectives | type == "array" and length > 0' "$dir/run.json" >/dev/null ||
  fail "the run record has no collectives list"
jq -e '[.runs[0].collectives[] | (.label | type == "string") and .seconds > 0] | all' "$dir/run.json" >/dev/null ||
  fail "a collective of the run record has no label or seconds <= 0: $(jq -c '.runs[0].collectives' "$dir/run.json")"
# The compute jitter: every worker's coefficient of variation over the 8 - 3 measured iterations, and their mean.
jq -e '.runs[0] | (.compute_jitter | type == "number" and . >= 0 and . < 10) and
       ([.ranks[] | select(.kind == "worker") | .compute_cv | type == "number" and . >= 0] | length > 0 and all) and
       (.compute_jitter - ([.ranks[] | select(.kind == "worker") | .compute_cv] | add / length) | fabs < 1e-9)' \
  "$dir/run.json" >/dev/null ||
  fail "the run record's compute_jitter is not the mean of its workers' compute_cv: $(jq -c '.runs[0] | [.compute_jitter, [.ranks[].compute_cv]]' "$dir/run.json")"
# The CPU steal (Linux): a worker's share of the host's CPU time stolen over its measured iterations, in [0, 1], and
# the run record's is the mean of the workers that have one (a window shorter than the kernel's clock tick, 5
# iterations here, may have none: then no worker's and no run's).
jq -e '.runs[0] | [.ranks[] | select(.kind == "worker") | .cpu_steal | select(. != null)] as $w |
       ($w | map(type == "number" and . >= 0 and . <= 1) | all) and
       (if ($w | length) > 0 then (.cpu_steal - ($w | add / length) | fabs < 1e-9) else .cpu_steal == null end)' \
  "$dir/run.json" >/dev/null ||
  fail "the run record's cpu_steal is out of [0, 1] or not the mean of its workers': $(jq -c '.runs[0] | [.cpu_steal, [.ranks[].cpu_steal]]' "$dir/run.json")"
jq -r ".predictions[] | select(.gpus == $gpus) | .collectives[].label" "$dir/predict.json" | sort -u >"$dir/predicted.txt"
[ -s "$dir/predicted.txt" ] || fail "the prediction at $gpus GPUs has no collectives"
jq -r '.rows[] | select(.figure | startswith("bucket:")) | select(.measured > 0 and .predicted > 0) | .figure[7:]' \
  "$dir/compare.json" | sort -u >"$dir/matched.txt"
missing=$(comm -23 "$dir/predicted.txt" "$dir/matched.txt")
[ -z "$missing" ] || fail "predicted collectives without a measured figure > 0 in compare: $missing"
echo "matched $(wc -l <"$dir/matched.txt") collective labels: $(tr '\n' ';' <"$dir/matched.txt")"
echo "PASS"
