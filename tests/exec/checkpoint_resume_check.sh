#!/bin/sh
# Usage: checkpoint_resume_check.sh SCALETWIN SCENARIO WORKDIR GPUS
# Kills a rank for real and resumes from the last checkpoint (scaletwin run --checkpoint-every, --resume):
#   1. an uninterrupted run of 80 iterations writes its final weights (--weights-out);
#   2. the same run with checkpoints every 25 iterations, where rank 1 raises SIGKILL after iteration 60
#      (SCALETWIN_TEST_KILL=1:60), must end with exit code 3 within 10 s of the kill, naming rank 1;
#   3. the checkpoint left is the one after iteration 50; --resume from it must end with exactly (cmp) the
#      uninterrupted run's weights, and its run record says it resumed from iteration 50;
#   4. resuming with another run length or another GPU count (another plan) is refused: exit 2 naming the manifest.
# Single-threaded ranks (--threads 1): the deterministic CPU mode.
st=$1; scenario=$2; work=$3; gpus=$4
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work" || fail "cannot create $work"
common="run $scenario --np $gpus --threads 1 --iterations 80"

"$st" $common --json "$work/full.json" --weights-out "$work/full.bin" > "$work/full.log" 2>&1 ||
  { cat "$work/full.log"; fail "the uninterrupted run failed"; }
[ -s "$work/full.bin" ] || fail "no weights from the uninterrupted run"

SCALETWIN_TEST_KILL=1:60 timeout 120 "$st" $common --checkpoint-every 25 --checkpoint-dir "$work/ckpt" \
  --json "$work/killed.json" > "$work/killed.log" 2>&1
rc=$?
end=$(date +%s.%N)
tail -15 "$work/killed.log"
[ "$rc" -eq 3 ] || fail "the killed job exited with $rc, expected 3"
killed_at=$(sed -n 's/.*SCALETWIN_TEST_KILL: rank 1 kills itself after iteration 60 at unix time \([0-9.]*\).*/\1/p' "$work/killed.log")
[ -n "$killed_at" ] || fail "rank 1 did not kill itself after iteration 60"
after=$(echo "$end - $killed_at" | bc)
echo "the job ended $after s after the kill"
[ "$(echo "$after < 10" | bc)" -eq 1 ] || fail "the job took $after s to end after the kill (more than 10 s)"
grep -q "rank 1" "$work/killed.log" || fail "no message naming rank 1"
[ ! -e "$work/killed.json" ] || fail "the killed job wrote a measurements file"
grep -q '"iteration": 50' "$work/ckpt/checkpoint.json" || { cat "$work/ckpt/checkpoint.json"; fail "the last checkpoint is not the one after iteration 50"; }
[ "$(ls "$work/ckpt" | grep -c '^iteration-')" -eq 1 ] || fail "older checkpoints were not removed: $(ls "$work/ckpt")"

"$st" $common --resume "$work/ckpt" --json "$work/resumed.json" --weights-out "$work/resumed.bin" > "$work/resumed.log" 2>&1 ||
  { cat "$work/resumed.log"; fail "the resumed run failed"; }
cmp "$work/full.bin" "$work/resumed.bin" || fail "the resumed run's weights differ from the uninterrupted run's"
grep -q '"resumed_from_iteration": 50' "$work/resumed.json" || fail "the run record does not say it resumed from 50"

"$st" run "$scenario" --np "$gpus" --threads 1 --iterations 90 --resume "$work/ckpt" --json "$work/x.json" > "$work/length.log" 2>&1
rc=$?
tail -3 "$work/length.log"
[ "$rc" -eq 2 ] || fail "resuming a run of another length exited with $rc, expected 2"
grep -q "ckpt/checkpoint.json.*iterations" "$work/length.log" || fail "the message does not name the manifest and its field"

other=$((gpus == 1 ? 2 : 1))
"$st" run "$scenario" --np "$other" --threads 1 --iterations 80 --resume "$work/ckpt" --json "$work/x.json" > "$work/plan.log" 2>&1
rc=$?
tail -3 "$work/plan.log"
[ "$rc" -eq 2 ] || fail "resuming with another GPU count exited with $rc, expected 2"
grep -q "ckpt/checkpoint.json.*plan_hash" "$work/plan.log" || fail "the message does not name the manifest's plan hash"
echo "PASS ($(wc -c < "$work/full.bin") bytes of weights identical after kill and resume)"
