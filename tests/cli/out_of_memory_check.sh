#!/bin/sh
# Usage: out_of_memory_check.sh SCALETWIN WORK_DIR
# Memory that runs out while a large measurements file is parsed (issue 54, F9): with the address space capped at
# 300 MB, `validate` of a 50 MB file of 25 million numbers ends with exit 3 and "out of memory", not an abort (134).
# Skipped (77) where the binary cannot start under the cap at all (AddressSanitizer reserves terabytes).
set -u
bin=$1 dir=$2
rm -rf "$dir" && mkdir -p "$dir" || exit 1
/usr/bin/python3 -c "
import sys
with open(sys.argv[1], 'w') as f:
    f.write('{\"runs\": [')
    f.write(','.join(['1'] * 25_000_000))
    f.write(']}')
" "$dir/big.json" || exit 1
(ulimit -v 300000; "$bin" --help > /dev/null 2>&1) || { echo "skipped: the binary does not start under a 300 MB cap"; exit 77; }
(ulimit -v 300000; exec "$bin" validate --measurements "$dir/big.json" > "$dir/out.txt" 2>&1)
rc=$?
cat "$dir/out.txt" | head -3
[ $rc -eq 3 ] || { echo "FAIL: validate exited $rc when memory ran out, not 3"; exit 1; }
grep -q "out of memory" "$dir/out.txt" || { echo "FAIL: no out-of-memory message"; exit 1; }
rm -f "$dir/big.json"
echo "ok: out of memory while parsing: exit 3"
