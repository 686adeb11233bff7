#!/bin/sh
# Usage: cuda_run_check.sh SCALETWIN WORK_DIR
# run --device cuda end to end, where a GPU is: lenet5 on synthetic data, 20 iterations, on one GPU as an MPI
# singleton (ring, then a synchronous parameter server: 1 GPU worker + 1 server on the host under mpirun); with
# two GPUs or more also the ring on 2 workers, its buckets over NCCL. Each run record must name the CUDA backend
# and report images/s > 0 and a finite training loss. Without a usable GPU scaletwin exits 3 with "no CUDA device
# was found": the test is then skipped (exit 77).
bin=$1
dir=$2
mkdir -p "$dir"
write() {  # NAME SCHEME GPUS
  cat > "$dir/$1.json" <<JSON
{"name": "$1", "model": "lenet5", "cluster": "dgx-h200", "nodes": 1, "gpus_per_node": $3, "batch_per_gpu": 64,
 "scheme": $2,
 "training": {"data": "synthetic", "iterations": 20, "warmup_iterations": 2, "learning_rate": 0.05,
              "lr_reference_batch": 64, "momentum": 0.9, "seed": 3}}
JSON
}
check() {  # NAME
  backend=$(jq -r '.runs[0].backend' "$dir/$1-run.json")
  ok=$(jq '.runs[0].images_per_sec > 0 and (.runs[0].train_loss | isinfinite or isnan | not)' "$dir/$1-run.json")
  echo "$1: $(jq '.runs[0].images_per_sec' "$dir/$1-run.json") images/s, train loss $(jq '.runs[0].train_loss' "$dir/$1-run.json"), $backend"
  case $backend in cuda*) ;; *) echo "FAIL: $1 ran on '$backend', not a CUDA backend"; exit 1 ;; esac
  [ "$ok" = true ] || { echo "FAIL: $1: no images/s or a non-finite loss"; exit 1; }
}
write ring1 '{"name": "allreduce", "algorithm": "ring"}' 1
out=$("$bin" run "$dir/ring1.json" --device cuda --json "$dir/ring1-run.json" --quiet 2>&1)
rc=$?
echo "$out"
if [ $rc -eq 3 ] && echo "$out" | grep -q "no CUDA device was found"; then echo "SKIPPED: no CUDA device"; exit 77; fi
[ $rc -eq 0 ] || { echo "FAIL: run --device cuda exited with $rc"; exit 1; }
check ring1
write ps1 '{"name": "ps", "mode": "sync", "servers": 1}' 1
"$bin" run "$dir/ps1.json" --np 1 --device cuda --json "$dir/ps1-run.json" --quiet || { echo "FAIL: ps exited with $?"; exit 1; }
check ps1
gpus=$(nvidia-smi --list-gpus 2>/dev/null | wc -l)
if [ "$gpus" -ge 2 ]; then
  write ring2 '{"name": "allreduce", "algorithm": "ring", "bucket_bytes": 40000}' 2
  "$bin" run "$dir/ring2.json" --np 2 --device cuda --json "$dir/ring2-run.json" --quiet || { echo "FAIL: ring on 2 GPUs exited with $?"; exit 1; }
  check ring2
fi
echo "PASS"
