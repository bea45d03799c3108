#!/usr/bin/env bash
# A WAL written by an earlier release (tests/data/wal_v1: format 1, release
# 0.1.0) is read by this build (issue 22):
#  1. `edge-agent --dump-wal` prints exactly the events it held then;
#  2. an agent started on a copy of it recovers it with no data loss and
#     continues its sequence numbers after the old ones (the next event is
#     seq 3), so the center never takes a new event for an old duplicate.
source "$(dirname "$0")/lib.sh" "$1"
cd "$(dirname "$0")/../.."
FIX=tests/data/wal_v1

"$BIN/edge-agent" --dump-wal "$FIX/wal" >"$E2E_DIR/dump.jsonl" 2>"$E2E_DIR/dump.err" || fail "--dump-wal failed: $(cat "$E2E_DIR/dump.err")"
cmp -s "$E2E_DIR/dump.jsonl" "$FIX/expected_dump.jsonl" ||
  fail "the format-1 WAL reads differently: $(diff "$FIX/expected_dump.jsonl" "$E2E_DIR/dump.jsonl" | head -5)"
[ -s "$E2E_DIR/dump.err" ] && fail "--dump-wal reported damage: $(cat "$E2E_DIR/dump.err")"
check_pass "edge-agent --dump-wal reads the format-1 WAL as it was written"

mkdir -p "$E2E_DIR/wal-fixture"
cp -r "$FIX/wal" "$E2E_DIR/wal-fixture/wal"
start_orchestrator
start_agent wal-fixture --label role=worker
wait_until 30 "the agent on the old WAL connected" node_connected wal-fixture
grep -q 'WAL recovered' "$E2E_DIR/wal-fixture.log" || fail "no recovery line"
grep -q 'DATA LOSS' "$E2E_DIR/wal-fixture.log" && fail "recovery reported data loss: $(grep 'DATA LOSS' "$E2E_DIR/wal-fixture.log")"
write_task "$E2E_DIR/t.yaml" wal-compat-1 noop "{type: nodes, nodes: [wal-fixture]}" "{}"
cli task submit --file "$E2E_DIR/t.yaml" >/dev/null || die "submit"
wait_until 30 "the task succeeded" task_status_is wal-compat-1 SUCCEEDED
kill_agent wal-fixture
"$BIN/edge-agent" --dump-wal "$E2E_DIR/wal-fixture/wal" >"$E2E_DIR/after.jsonl" 2>/dev/null
first_new=$(jq -r 'select(.task_id == "wal-compat-1") | .sequence_number' "$E2E_DIR/after.jsonl" | sort -n | head -1)
[ "$first_new" = 3 ] || fail "the first new event has seq '${first_new}', expected 3 (after the old log's 1 and 2)"
check_pass "an agent on the format-1 WAL recovers it and numbers on from seq 3"
finish
