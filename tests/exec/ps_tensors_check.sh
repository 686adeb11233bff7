#!/bin/sh
# Usage: ps_tensors_check.sh SCALETWIN WORKDIR
# A synchronous parameter server whose tensors are spread four ways (scheme "tensors": sliced, whole, kvstore,
# largest_first; plan::TensorPlacement): 2 workers and 2 server ranks train lenet5 on synthetic data for 20
# iterations each way.
# Each element is summed on one server in the same worker order whichever server holds it, so the four runs must
# end with exactly (cmp) the same weights; the whole placement gives the two servers unequal slices (lenet5's fc1
# holds most of its parameters) and the run record states the placement.
# Single-threaded ranks (--threads 1): the deterministic CPU mode.
st=$1; work=$2
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work" || fail "cannot create $work"
for t in sliced whole kvstore largest_first; do
  cat > "$work/ps-$t.json" <<EOF
{"name": "ps-$t", "model": "lenet5", "cluster": "local-cpu", "nodes": 1, "gpus_per_node": 2, "batch_per_gpu": 16,
 "scheme": {"name": "ps", "mode": "sync", "servers": 2, "tensors": "$t"},
 "training": {"data": "synthetic", "iterations": 20, "learning_rate": 0.05, "lr_reference_batch": 16, "seed": 3}}
EOF
  timeout 120 "$st" run "$work/ps-$t.json" --np 2 --threads 1 --json "$work/$t.json" --weights-out "$work/$t.bin" \
    > "$work/$t.log" 2>&1 || { cat "$work/$t.log"; fail "the run with $t tensors failed"; }
  [ -s "$work/$t.bin" ] || fail "no weights from the run with $t tensors"
  grep -q "\"tensors\": \"$t\"" "$work/$t.json" || fail "the run record does not state \"tensors\": \"$t\""
done
cmp "$work/sliced.bin" "$work/whole.bin" || fail "whole tensors trained other weights than sliced ones"
cmp "$work/sliced.bin" "$work/kvstore.bin" || fail "kvstore tensors trained other weights than sliced ones"
cmp "$work/sliced.bin" "$work/largest_first.bin" || fail "largest_first tensors trained other weights than sliced ones"
echo "the four placements trained the same weights"
