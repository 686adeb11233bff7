#!/usr/bin/env bash
# scripts/gpu-check's own logic where no GPU is, on the executor-only build that gpu_check_build.sh made: run as
# on this machine (every GPU case skipped, exit 0), with a stand-in nvidia-smi that reports a GPU the CUDA runtime
# cannot use (every GPU case and benchmark fails, exit 1: a no-device skip on a machine with a GPU is a failure), and
# with no time left (every step after the host tests reported as not run for time). A device call runs this script
# once; a slip in its bash must fail here. On a machine with a GPU the script's own run is the check: skipped (77).
# Usage: gpu_check_script.sh SOURCE_ROOT BUILD_DIR WORK_DIR
set -uo pipefail
root=$1
build=$2
work=$3
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  echo "SKIPPED: this machine has a GPU: scripts/gpu-check itself is the check"
  exit 77
fi
mkdir -p "$work/bin"
cat > "$work/bin/nvidia-smi" <<'SMI'
#!/bin/sh
case "$*" in
  *compute_cap*) echo "7.5" ;;
  *name,memory*) echo "Stand-in GPU, 1 MiB, 0.0" ;;
  *name*) echo "Stand-in GPU" ;;
esac
SMI
chmod +x "$work/bin/nvidia-smi"
cases=$("$build/test_exec_cuda_gpu" --list-test-names-only | grep -c .)
fail() { echo "FAIL: $1"; echo "$out"; exit 1; }
expect() {  # RUN-NAME EXPECTED-STATUS TEXT...: the exit status, and a summary line that starts with each TEXT
  local what=$1 want=$2 text summary
  shift 2
  [ "$status" = "$want" ] || fail "$what: exit status $status, expected $want"
  summary=$(sed -n '/^== gpu-check summary/,$p' <<<"$out")
  for text in "$@"; do
    awk -v t="  $text" 'index($0, t) == 1 { found = 1 } END { exit !found }' <<<"$summary" ||
      fail "$what: no summary line starting \"$text\""
  done
  echo "ok: $what"
}

out=$("$root/scripts/gpu-check" /usr/include "$build" 2>&1)
status=$?
expect "no GPU" 0 "host tests: passed" "GPU tests: 0 passed, $cases skipped, 0 failed (" \
  "scaletwin ResNet-50 fp32 batch 64: skipped (no GPU)" "scaletwin ResNet-50 bf16 batch 64: skipped (no GPU)" \
  "run --device cuda: skipped (needs a GPU, PREBUILT and FASHION_MNIST)"

out=$(PATH="$work/bin:$PATH" "$root/scripts/gpu-check" /usr/include "$build" 2>&1)
status=$?
expect "a GPU the runtime cannot use" 1 \
  "GPU tests: 0 passed, 0 skipped, $cases failed (" \
  "scaletwin ResNet-50 fp32 batch 64 with cuDNN's timed algorithm search: FAILED" \
  "scaletwin ResNet-50 fp32 batch 64: FAILED" "PyTorch ResNet-50: skipped (no scaletwin figure to compare)"

out=$(PATH="$work/bin:$PATH" BUDGET=0 "$root/scripts/gpu-check" /usr/include "$build" 2>&1)
status=$?
expect "no time left" 0 \
  "GPU tests: 0 passed, 0 skipped, 0 failed, $cases not run (time budget) (" \
  "scaletwin ResNet-50 fp32 batch 64: skipped (time budget)" "scaletwin ResNet-50 bf16 batch 64: skipped (time budget)"
