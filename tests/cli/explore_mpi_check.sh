#!/bin/sh
# Usage: explore_mpi_check.sh SCALETWIN SPACE WORKDIR
# explore on MPI, for real (issue 52):
#   1. one rank (no MPI) and --np 2 give the same frontier and the same best;
#   2. --np 2 --checkpoint, with rank 1 killed (SIGKILL) once a few candidates are in the checkpoint, ends with
#      exit 3 within 10 s of the kill, naming rank 1, and the checkpoint keeps what was evaluated;
#   3. the same command resumed finishes the rest without evaluating again what the checkpoint holds, and gives
#      the frontier of an uninterrupted run;
#   4. a damaged checkpoint (a changed record) and another space's checkpoint are refused with exit 2 naming it.
st=$1; space=$2; work=$3
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work" || fail "cannot create $work"
field() { /usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps(eval(sys.argv[2])))" "$@"; }

"$st" explore "$space" -q --exhaustive --json "$work/one.json" > "$work/one.log" 2>&1 || { cat "$work/one.log"; fail "one rank failed"; }
timeout 300 "$st" explore "$space" -q --exhaustive --np 2 --json "$work/two.json" > "$work/two.log" 2>&1 ||
  { cat "$work/two.log"; fail "two ranks failed"; }
[ "$(field "$work/one.json" "d['frontier']")" = "$(field "$work/two.json" "d['frontier']")" ] || fail "1 and 2 ranks differ in the frontier"
[ "$(field "$work/one.json" "d['best']")" = "$(field "$work/two.json" "d['best']")" ] || fail "1 and 2 ranks differ in the best"
[ "$(field "$work/two.json" "d['counts']['ranks']")" = "2" ] || fail "the 2-rank run does not say it ran on 2 ranks"
[ "$(field "$work/one.json" "[c for c in d['candidates'] if c.get('frontier')]")" = \
  "$(field "$work/two.json" "[c for c in d['candidates'] if c.get('frontier')]")" ] || fail "the frontier's figures differ"
echo "1 rank and 2 ranks: the same frontier $(field "$work/one.json" "d['frontier']") and best"

# 2. Kill rank 1 once 4 results are in the checkpoint (its header and 4 lines).
timeout 300 "$st" explore "$space" -q --exhaustive --np 2 --checkpoint "$work/ck.jsonl" --json "$work/killed.json" \
  > "$work/killed.log" 2>&1 &
launcher=$!
killed_at=""
for _ in $(seq 1 600); do
  if [ -f "$work/ck.jsonl" ] && [ "$(wc -l < "$work/ck.jsonl")" -ge 5 ]; then
    for p in $(pgrep -f "scaletwin explore $space"); do
      if tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=1"; then
        kill -KILL "$p" && killed_at=$(date +%s.%N)
      fi
    done
    break
  fi
  sleep 0.1
done
[ -n "$killed_at" ] || { kill "$launcher"; fail "rank 1 was never found to kill"; }
wait "$launcher"
rc=$?
end=$(date +%s.%N)
tail -6 "$work/killed.log"
[ "$rc" -eq 3 ] || fail "the job with a killed rank exited with $rc, expected 3"
after=$(echo "$end - $killed_at" | bc)
echo "the job ended $after s after the kill"
[ "$(echo "$after < 10" | bc)" -eq 1 ] || fail "the job took $after s to end after the kill (more than 10 s)"
grep -q "rank 1" "$work/killed.log" || fail "no message naming rank 1"
[ ! -e "$work/killed.json" ] || fail "the killed job wrote its results"
kept=$(($(wc -l < "$work/ck.jsonl") - 1))
[ "$kept" -ge 4 ] || fail "the checkpoint kept $kept results, expected at least 4"

# 3. Resume on one rank: what the checkpoint holds is not evaluated again.
"$st" explore "$space" -q --exhaustive --checkpoint "$work/ck.jsonl" --json "$work/resumed.json" > "$work/resumed.log" 2>&1 ||
  { cat "$work/resumed.log"; fail "the resumed run failed"; }
total=$(field "$work/one.json" "d['counts']['simulated']")
[ "$(field "$work/resumed.json" "d['counts']['from_checkpoint']")" = "$kept" ] || fail "the resumed run did not take the $kept results of the checkpoint"
[ "$(field "$work/resumed.json" "d['counts']['simulated']")" = "$total" ] || fail "the resumed run did not finish every candidate"
[ "$(($(wc -l < "$work/ck.jsonl") - 1))" = "$total" ] || fail "the checkpoint holds a candidate twice or misses one"
[ "$(field "$work/one.json" "[c for c in d['candidates'] if c.get('frontier')]")" = \
  "$(field "$work/resumed.json" "[{k: v for k, v in c.items() if k != 'from_checkpoint'} for c in d['candidates'] if c.get('frontier')]")" ] ||
  fail "the resumed run's frontier differs from an uninterrupted run's"
echo "resumed: $kept results from the checkpoint, $((total - kept)) evaluated, the same frontier"

# 4. A damaged record and another space's checkpoint.
sed '3s/"images_per_sec":[0-9.e+-]*/"images_per_sec":1.5/' "$work/ck.jsonl" > "$work/damaged.jsonl"
cmp -s "$work/ck.jsonl" "$work/damaged.jsonl" && fail "the damage did not change the file"
"$st" explore "$space" -q --checkpoint "$work/damaged.jsonl" > "$work/damaged.log" 2>&1
rc=$?
[ "$rc" -eq 2 ] || fail "a damaged checkpoint exited with $rc, expected 2"
grep -q "damaged.jsonl at line 3" "$work/damaged.log" || { cat "$work/damaged.log"; fail "the message does not name the file and line"; }
sed 's/"space_hash":"[0-9a-f]*"/"space_hash":"0000000000000000"/' "$work/ck.jsonl" > "$work/other.jsonl"
"$st" explore "$space" -q --checkpoint "$work/other.jsonl" > "$work/other.log" 2>&1
rc=$?
[ "$rc" -eq 2 ] || fail "another space's checkpoint exited with $rc, expected 2"
grep -q "other.jsonl at line 1.*space" "$work/other.log" || { cat "$work/other.log"; fail "the message does not name the space"; }
echo "PASS"
