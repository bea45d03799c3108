#!/usr/bin/env bash
# Usage: scripts/ctest-failures.sh BUILD_DIR [LINES]
# Prints the last LINES (default 25) lines of output of each test the last
# ctest run in BUILD_DIR failed, so the end of `make test` says why, not
# only which (a CI log is often kept by its tail). Reads ctest's own
# Testing/Temporary logs; prints nothing when nothing failed.
set -u
dir=${1:?usage: ctest-failures.sh BUILD_DIR [LINES]}
lines=${2:-25}
failed=$dir/Testing/Temporary/LastTestsFailed.log
log=$dir/Testing/Temporary/LastTest.log
[ -s "$failed" ] && [ -r "$log" ] || exit 0
while IFS= read -r entry; do
  name=${entry#*:}
  echo "----- the end of failed test $name (full output: $log)"
  # A test's block runs from its "N/M Test: NAME" line to "<end of output>".
  awk -v name="$name" '
    /^[0-9]+\/[0-9]+ Test: / { t = $0; sub(/^[0-9]+\/[0-9]+ Test: /, "", t)
                                if (t == name) { on = 1; n = 0; next } }
    on && /^<end of output>$/ { on = 0 }
    on { buf[n++] = $0 }
    END { s = n > L ? n - L : 0; for (i = s; i < n; i++) print buf[i] }
  ' L="$lines" "$log"
done <"$failed"
