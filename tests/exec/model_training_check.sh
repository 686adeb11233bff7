#!/bin/sh
# Usage: model_training_check.sh SCALETWIN SCENARIO OUTPUT_JSON ITERATIONS MAX_LOSS MIN_ACCURACY
# Trains SCENARIO for ITERATIONS steps on 2 workers (scaletwin run --np 2) from fresh weights, and checks that the
# mean training loss fell below MAX_LOSS (a 10-class network starts near ln 10 = 2.30) and the test accuracy rose
# above MIN_ACCURACY (chance: 0.1).
"$1" run "$2" --np 2 --iterations "$4" --threads 1 --json "$3" || { echo "FAIL: scaletwin run exited with $?"; exit 1; }
loss=$(jq '.runs[0].train_loss' "$3")
acc=$(jq '.runs[0].test_accuracy' "$3")
echo "$(basename "$2"): train loss $loss, test accuracy $acc after $4 iterations"
if [ "$(echo "$loss < $5" | bc)" -ne 1 ]; then echo "FAIL: train loss $loss >= $5"; exit 1; fi
if [ "$(echo "$acc > $6" | bc)" -ne 1 ]; then echo "FAIL: test accuracy $acc <= $6"; exit 1; fi
echo "PASS"
