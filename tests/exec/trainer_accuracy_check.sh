#!/bin/sh
# Usage: trainer_accuracy_check.sh SCALETWIN SCENARIO OUTPUT_JSON MIN_ACCURACY
# Trains SCENARIO for 2 epochs on 2 workers (scaletwin run --np 2) and checks the final test accuracy.
"$1" run "$2" --np 2 --epochs 2 --threads 1 --json "$3" || { echo "FAIL: scaletwin run exited with $?"; exit 1; }
acc=$(jq '.runs[0].test_accuracy' "$3")
wall=$(jq '.runs[0].wall_s' "$3")
echo "$(basename "$2"): test accuracy $acc after 2 epochs, $wall s"
if [ "$(echo "$acc >= $4" | bc)" -ne 1 ]; then echo "FAIL: test accuracy $acc < $4"; exit 1; fi
echo "PASS"
