#!/usr/bin/env bash
# apollo-cli task validate as an operator uses it: exit codes, the
# file:line:column format on stderr, and clear one-line errors for bad flags
# and unreadable files.
set -uo pipefail
CLI=${1:?usage: validate_test.sh path/to/apollo-cli}
fail=0
check() {  # check NAME EXPECTED_RC ACTUAL_RC
  if [ "$2" != "$3" ]; then echo "FAIL $1: exit $3, want $2"; fail=1; else echo "ok   $1"; fi
}

out=$("$CLI" task validate --file examples/collect_metrics.yaml 2>&1); rc=$?
check "seed example is valid" 0 $rc
grep -q "valid, 1 task: collect-metrics-1712345678-b7e2" <<<"$out" || { echo "FAIL seed output: $out"; fail=1; }

err=$("$CLI" task validate --file tests/data/bad/many_problems.yaml 2>&1 >/dev/null); rc=$?
check "bad file is refused" 1 $rc
n=$(grep -cE '^tests/data/bad/many_problems.yaml:[0-9]+:[0-9]+: ' <<<"$err")
[ "$n" = 5 ] || { echo "FAIL want 5 file:line:column lines, got $n: $err"; fail=1; }

"$CLI" task validate --file /nonexistent/x.yaml >/dev/null 2>/tmp/apollo-cli-err.$$; rc=$?
check "missing file" 1 $rc
grep -q "cannot read /nonexistent/x.yaml: No such file or directory" /tmp/apollo-cli-err.$$ || { echo "FAIL missing-file message: $(cat /tmp/apollo-cli-err.$$)"; fail=1; }
rm -f /tmp/apollo-cli-err.$$

"$CLI" task validate --file tests/data >/dev/null 2>&1; check "directory" 1 $?
"$CLI" task validate >/dev/null 2>&1; rc=$?; [ $rc -ne 0 ]; check "missing --file is an error" 0 $?
"$CLI" task validate --file examples/collect_metrics.yaml --bogus >/dev/null 2>&1; rc=$?; [ $rc -ne 0 ]; check "unknown flag is an error" 0 $?

json=$("$CLI" task validate -o json --file tests/data/bad/unknown_field.yaml); rc=$?
check "json output of a bad file" 1 $rc
grep -q '"valid": false' <<<"$json" || { echo "FAIL json: $json"; fail=1; }

[ $fail -eq 0 ] && echo "cli validate: all checks passed"
exit $fail
