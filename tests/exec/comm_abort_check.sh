#!/bin/sh
# Usage: comm_abort_check.sh MPIEXEC PROGRAM RANKS
# Runs the abort test program (one rank throws while the others wait in a collective): the job must end on its own
# well before the timeout, with the SystemError exit code 3 and the rank's message, instead of hanging.
out=$(timeout 60 "$1" --allow-run-as-root --oversubscribe -np "$3" "$2" 2>&1)
rc=$?
printf '%s\n' "$out"
if [ "$rc" -eq 124 ]; then echo "FAIL: the job hung until the timeout"; exit 1; fi
if [ "$rc" -ne 3 ]; then echo "FAIL: exit code $rc, expected 3 (SystemError)"; exit 1; fi
if ! printf '%s' "$out" | grep -q "error: injected failure on the last rank"; then
  echo "FAIL: the rank's message is missing"; exit 1
fi
echo "PASS: the job aborted with exit code $rc"
