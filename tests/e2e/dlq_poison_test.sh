#!/usr/bin/env bash
# Issue 7: a poison event reaches the dead-letter queue through the real
# orchestrator and a real agent, and is replayed after the cause is fixed.
#
# How: the agent finishes a task while the orchestrator is down, so the
# SUCCEEDED event waits in its WAL; the orchestrator comes back on a store
# that lacks the task (as after a restore from an older backup). The agent
# resends the event, the bus cannot apply it (unknown task), parks it after
# max_deliver tries, and the rest keeps flowing. The fix: the task is
# submitted again; `dlq replay` then applies the parked event, and the task
# ends SUCCEEDED from the agent's cached result (its ALREADY_DONE answer to
# the new dispatch, or the replayed SUCCEEDED) without being run again.
source "$(dirname "$0")/lib.sh" "$1"
cd "$(dirname "$0")/../.."

start_orchestrator
start_agent worker-1 --label role=worker
wait_until 20 "worker-1 connected" all_connected worker-1
# The task journals each run, then takes 2 s (so it is RUNNING when the
# orchestrator goes down).
write_task "$E2E_DIR/lost.yaml" lost-task exec "{type: nodes, nodes: [worker-1]}" \
  "{argv: [sh, -c, 'echo \$APOLLO_TASK_ID \$APOLLO_ATTEMPT >> $E2E_DIR/journal; sleep 2']}"
cli task submit --file "$E2E_DIR/lost.yaml" >/dev/null || die "submit lost-task"
wait_until 20 "lost-task RUNNING" node_status_is lost-task worker-1 RUNNING
kill_orchestrator
sleep 3  # the run ends: SUCCEEDED is durable in the agent's WAL, unacknowledged

# Back on a store without the task (restored from an older backup).
STORE_FILE=restored.db start_orchestrator
wait_until 20 "worker-1 reconnected" all_connected worker-1
has_letter() { [ "$(cli -o json dlq list | jq '[.letters[] | select(.task_id == "lost-task")] | length')" -ge 1 ]; }
wait_until 30 "the resent event of lost-task parked as a dead letter" has_letter
letter=$(cli -o json dlq list | jq -r '[.letters[] | select(.task_id == "lost-task" and .event_type == "SUCCEEDED")][0]')
id=$(jq -r .id <<<"$letter")
[ "$id" != null ] || fail "no SUCCEEDED letter for lost-task: $(cli dlq list)"
jq -e '.reason | test("unknown task lost-task")' <<<"$letter" >/dev/null || fail "reason: $letter"
[ "$(jq -r .deliveries <<<"$letter")" -ge 5 ] || fail "parked before max_deliver: $letter"
[ "$(jq -r .node_id <<<"$letter")" = worker-1 ] || fail "node: $letter"
cli dlq show "$id" | grep -q "^reason:     unknown task lost-task" || fail "dlq show: $(cli dlq show "$id")"
[ "$(cli -o json bus status | jq .dead_letters)" -ge 1 ] || fail "bus status counts no letter"
log_has orchestrator "ALERT: dead letter" || fail "no dead-letter alert in the orchestrator log"
cli alert list --kind dead_letter --node worker-1 | grep -Eq "dead_letter +worker-1 +lost-task +off +event parked after" \
  || fail "no dead-letter alert in apollo-cli alert list: $(cli alert list)"
check_pass "a resent event of an unknown task is dead-lettered, listed, shown and alerted"

# The partition keeps flowing: another task on the same agent succeeds.
write_task "$E2E_DIR/next.yaml" next-task noop "{type: nodes, nodes: [worker-1]}" "{}"
cli task submit --file "$E2E_DIR/next.yaml" >/dev/null || die "submit next-task"
wait_until 30 "next-task SUCCEEDED" task_status_is next-task SUCCEEDED
check_pass "work keeps flowing past the parked event"

# Not fixed yet: replay refused. Fixed (the task exists again): applied.
if cli dlq replay "$id" 2>"$E2E_DIR/err"; then fail "replay before the fix succeeded"; fi
grep -q "still cannot be applied" "$E2E_DIR/err" || fail "replay error: $(cat "$E2E_DIR/err")"
cli task submit --file "$E2E_DIR/lost.yaml" >/dev/null 2>&1 || die "resubmit lost-task"
cli dlq replay --all >"$E2E_DIR/replay.out" || fail "replay --all failed"
cli -o json dlq list | jq -e '[.letters[] | select(.task_id == "lost-task")] | length == 0' >/dev/null \
  || fail "lost-task letters left after the fix: $(cli dlq list)"
cli -o json task events --task-id lost-task | jq -e --arg e "$(jq -r .event_id <<<"$letter")" \
  '[.entries[] | select(.cause | contains($e))] | length >= 1' >/dev/null \
  || fail "replayed event not in lost-task's history: $(cli task events --task-id lost-task)"
check_pass "after the fix, replay applies the parked event (in lost-task's history); queue empty"
# The re-submitted row (DISPATCHED again) ends SUCCEEDED from what the agent
# already did: DISPATCHED -> RUNNING (implied, in the history) -> SUCCEEDED,
# and the task is not run a second time.
wait_until 30 "lost-task SUCCEEDED after the fix" task_status_is lost-task SUCCEEDED
runs=$(grep -c '^lost-task ' "$E2E_DIR/journal")
[ "$runs" = 1 ] || fail "lost-task ran $runs times: $(cat "$E2E_DIR/journal")"
cli -o json task events --task-id lost-task \
  | jq -e '[.entries[] | select(.detail // "" | test("^implied by (SUCCEEDED|ALREADY_DONE) of attempt"))] | length >= 1' >/dev/null \
  || fail "no implied RUNNING step in lost-task's history: $(cli task events --task-id lost-task)"
check_pass "the re-submitted task ends SUCCEEDED from the agent's result, run once"
finish
