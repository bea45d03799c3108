#!/usr/bin/env bash
# The shipped daemons hold no test switch (issue 17): no APOLLO_TEST_*
# environment name is compiled into bin/orchestrator or bin/edge-agent, and
# the agent's --test-* flags are refused there. Their test builds
# (test-bin/) keep both, for the fault-injection and planted-bug tests.
# Usage: no_test_switches_test.sh BIN_DIR TEST_BIN_DIR
set -uo pipefail
BIN=${1:?bin dir}
TEST_BIN=${2:?test-bin dir}
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

for exe in orchestrator edge-agent; do
  [ -x "$BIN/$exe" ] || { fail "$BIN/$exe missing"; continue; }
  found=$(grep -a -o 'APOLLO_TEST_[A-Z_]*' "$BIN/$exe" | sort -u | tr '\n' ' ')
  [ -z "$found" ] || fail "$BIN/$exe reads test switches: $found"
  tfound=$(grep -a -c 'APOLLO_TEST_' "$TEST_BIN/$exe" 2>/dev/null || echo 0)
  [ "$tfound" -gt 0 ] || fail "$TEST_BIN/$exe (test build) has no test switch: the check above proves nothing"
done

out=$("$BIN/edge-agent" --node-id n1 --test-duplicate-delivery 2>&1); rc=$?
[ "$rc" -ne 0 ] || fail "bin/edge-agent accepted --test-duplicate-delivery"
echo "$out" | grep -q -- "--test-duplicate-delivery" || fail "refusal does not name the flag: $out"
# The test build takes the flag (it then fails on the missing WAL dir, not
# on the flag).
out=$("$TEST_BIN/edge-agent" --node-id n1 --test-clock-offset-s 5 --dump-wal /nonexistent 2>&1)
if echo "$out" | grep -q -- "--test-clock-offset-s"; then
  fail "the test build refused --test-clock-offset-s: $out"
fi

if [ "$failures" -eq 0 ]; then echo "ok   shipped binaries hold no test switch"; fi
exit $((failures > 0))
