#!/usr/bin/env bash
# Issue 7, operator side: dead letters in a real orchestrator's store are
# shown by `dlq list` / `dlq show`, refused for replay while their cause
# stands, replayed after the fix, dropped; `bus status` numbers move.
#
# The letters are parked with the store API before the orchestrator starts
# (apollo-e2e-tool seed-dlq): a real agent only sends events of tasks it was
# given, so it cannot produce an unknown-task event. How the bus parks a
# poison event is shown by bus_conformance_test (both backends).
source "$(dirname "$0")/lib.sh" "$1"
cd "$(dirname "$0")/../.."

ids=$("$BIN/apollo-e2e-tool" seed-dlq "sqlite://$E2E_DIR/apollo.db") || die "seed-dlq failed"
unknown=$(sed -n 1p <<<"$ids")
malformed=$(sed -n 2p <<<"$ids")
start_orchestrator
start_agent worker-1 --label role=worker
wait_until 20 "worker-1 connected" all_connected worker-1

# 1. list and show.
status=$(cli -o json bus status) || die "bus status failed"
[ "$(jq -r .dead_letters <<<"$status")" = 2 ] || fail "bus status: want 2 dead letters: $status"
[ "$(jq -r .backend <<<"$status")" = "${APOLLO_E2E_BUS:-embedded}" ] || fail "backend: $status"
[ "$(jq '.partitions | length' <<<"$status")" = 16 ] || fail "want 16 partitions: $status"
cli bus status | grep -q "^dead letters: 2 waiting for an operator" || fail "bus status text: $(cli bus status)"
list=$(cli -o json dlq list) || die "dlq list failed"
[ "$(jq '.letters | length' <<<"$list")" = 2 ] || fail "want 2 letters: $list"
[ "$(jq -r '.letters[0].reason' <<<"$list")" = "unknown task late-task on node ghost-node" ] || fail "reason: $list"
[ "$(jq -r '.letters[1].event.payload_text' <<<"$list")" = "{not json" ] || fail "malformed payload not shown: $list"
cli dlq list | grep -qE "^$unknown +ghost-node-1 +late-task +ghost-node +ACCEPTED +5 " || fail "dlq list text: $(cli dlq list)"
show=$(cli dlq show "$unknown") || fail "dlq show failed"
grep -q "^reason:     unknown task late-task on node ghost-node$" <<<"$show" || fail "dlq show: $show"
if cli dlq show 99999 2>"$E2E_DIR/err"; then fail "dlq show of an unknown id succeeded"; fi
grep -q "^apollo-cli: no dead letter 99999" "$E2E_DIR/err" || fail "unknown id: $(cat "$E2E_DIR/err")"
check_pass "dlq list / show / bus status show the parked events"

# 2. Replay before the fix: refused, the letter stays.
if cli dlq replay "$unknown" 2>"$E2E_DIR/err"; then fail "replay of a still-poison letter succeeded"; fi
grep -q "still cannot be applied: unknown task late-task" "$E2E_DIR/err" || fail "replay error: $(cat "$E2E_DIR/err")"
[ "$(cli -o json dlq list | jq '.letters | length')" = 2 ] || fail "a refused replay removed the letter"
check_pass "replay before the fix is refused with the reason; the letter stays"

# 3. Drop the malformed one: gone, the count moves.
cli dlq drop "$malformed" >/dev/null || fail "dlq drop failed"
[ "$(cli -o json bus status | jq .dead_letters)" = 1 ] || fail "bus status after drop: $(cli -o json bus status)"
check_pass "drop removes the letter; bus status counts 1"

# 4. The fix (the task now exists), then the replay applies the event.
write_task "$E2E_DIR/late.yaml" late-task noop "{type: nodes, nodes: [ghost-node]}" "{}"
cli task submit --file "$E2E_DIR/late.yaml" >/dev/null 2>"$E2E_DIR/late.err" || die "submit late-task"
out=$(cli dlq replay "$unknown") || fail "replay after the fix failed"
grep -q "replayed" <<<"$out" || fail "replay output: $out"
[ "$(cli -o json dlq list | jq '.letters | length')" = 0 ] || fail "letters left after replay"
cli -o json task events --task-id late-task | jq -e '[.entries[] | select(.cause | test("ghost-node-1"))] | length == 1' >/dev/null \
  || fail "replayed event not in the history: $(cli task events --task-id late-task)"
[ "$(cli -o json bus status | jq .dead_letters)" = 0 ] || fail "bus status after replay"
cli dlq list | grep -q "^no dead letters" || fail "empty dlq list text"
check_pass "after the fix, replay applies the event; queue empty"

# 5. Live traffic moves the lag counters: published and applied grow.
before=$(cli -o json bus status | jq .totals.published)
write_task "$E2E_DIR/noop.yaml" noop-1 noop "{type: nodes, nodes: [worker-1]}" "{}"
cli task submit --file "$E2E_DIR/noop.yaml" >/dev/null || die "submit noop-1"
wait_until 30 "noop-1 SUCCEEDED" task_status_is noop-1 SUCCEEDED
settled() { [ "$(cli -o json bus status | jq '.totals.pending')" = 0 ]; }
wait_until 10 "bus drained" settled
status=$(cli -o json bus status)
after=$(jq .totals.published <<<"$status")
[ "$after" -ge $((before + 2)) ] || fail "published did not move: $before -> $after"
[ "$(jq .totals.applied <<<"$status")" = "$after" ] || fail "applied != published when idle: $status"
check_pass "bus status: published $before -> $after, all applied"

finish
