#!/usr/bin/env bash
# Bad days for one agent, with real processes: cut off from the center past
# its autonomy window (conservative mode entered and left, work for it held
# with blocked_reason conservative_mode, nothing lost or run twice), and its
# WAL deleted while it is down (reconciliation restores consistency; the
# history shows `reconcile` causes).
source "$(dirname "$0")/lib.sh" "$1"
cd "$(dirname "$0")/../.."

printf 'dispatch_interval: 1\nack_timeout: 2\n' >"$E2E_DIR/orchestrator.yaml"
printf 'reconnect: {initial_backoff_ms: 200, max_backoff_ms: 1000}\n' >"$E2E_DIR/agent.yaml"
start_orchestrator --config "$E2E_DIR/orchestrator.yaml"
start_proxy
# Each session's snapshot is held back 3 s so the window between reconnect
# and reconciliation (the agent still conservative) is long enough to watch.
agent() {
  start_agent edge-1 --config "$E2E_DIR/agent.yaml" --enable-intent exec \
    --test-autonomy-window-ms 1500 --test-snapshot-delay-ms 3000
}
agent
wait_until 20 "agent connected" all_connected edge-1
JOURNAL="echo \$APOLLO_TASK_ID \$APOLLO_ATTEMPT >> $E2E_DIR/journal"
submit_exec() {  # submit_exec ID SHELL_COMMAND
  write_task "$E2E_DIR/$1.yaml" "$1" exec "{type: nodes, nodes: [edge-1]}" "{argv: [sh, -c, '$2']}"
  cli task submit --file "$E2E_DIR/$1.yaml" >/dev/null || die "submit $1"
}

# 1. Partitioned past the autonomy window while a task runs.
submit_exec during-cut "$JOURNAL; sleep 3"
wait_until 20 "during-cut RUNNING" node_status_is during-cut edge-1 RUNNING
cut_network
wait_until 15 "conservative mode" log_has edge-1 "conservative mode; finishing running tasks"
submit_exec while-cut "$JOURNAL"
sleep 3  # the running task finishes while cut off; the new one must wait
[ "$(node_status while-cut edge-1)" = PENDING ] || fail "while-cut moved while the node was cut off"
blocked_reason() { cli -o json task status --task-id "$1" | jq -r '.nodes[0].blocked_reason // ""'; }
# Cut off, the center cannot know the agent's mode: the node is just away.
blocked_reason while-cut | grep -q '^node_' || fail "while cut off, blocked_reason is '$(blocked_reason while-cut)'"
heal_network
# Back, its Hello says conservative; until the center has reconciled its
# backlog and snapshot the task waits with blocked_reason conservative_mode.
held_conservative() { blocked_reason while-cut | grep -q '^conservative_mode'; }
wait_until 15 "while-cut held with blocked_reason conservative_mode" held_conservative
[ "$(node_status while-cut edge-1)" = PENDING ] || fail "while-cut went out to a conservative agent"
wait_until 30 "left conservative mode" log_has edge-1 "leaving conservative mode"
wait_until 30 "during-cut SUCCEEDED" task_status_is during-cut SUCCEEDED
wait_until 30 "while-cut SUCCEEDED" task_status_is while-cut SUCCEEDED
for t in during-cut while-cut; do
  n=$(grep -c "^$t " "$E2E_DIR/journal")
  [ "$n" = 1 ] || fail "$t ran $n times"
done
[ "$(cli -o json task status --task-id during-cut | jq '.nodes[0].attempt')" = 1 ] \
  || fail "during-cut was dispatched again"
grep -q "REJECTED" <(cli -o json task events --task-id while-cut) && fail "while-cut was rejected by the agent"
check_pass "cut off past the autonomy window: conservative mode entered and left (blocked_reason conservative_mode meanwhile), nothing lost or run twice"

# 2. The WAL is deleted while the agent is down, with a task running.
submit_exec lost-run "$JOURNAL; sleep 2"
wait_until 20 "lost-run RUNNING" node_status_is lost-run edge-1 RUNNING
kill_agent edge-1
rm -rf "$E2E_DIR/edge-1/wal"
agent
wait_until 60 "lost-run SUCCEEDED after reconcile + retry" task_status_is lost-run SUCCEEDED
cli -o json task events --task-id lost-run | jq -e '[.entries[] | select(.cause | test("reconcile"))] | length > 0' >/dev/null \
  || fail "no reconcile cause in lost-run's history"
[ "$(cli -o json task status --task-id lost-run | jq '.nodes[0].attempt')" = 2 ] \
  || fail "lost-run was not retried as attempt 2"
# New events after the wipe are numbered above what the store has, so they
# are applied, not dropped as duplicates.
submit_exec after-wipe "$JOURNAL"
wait_until 20 "after-wipe SUCCEEDED" task_status_is after-wipe SUCCEEDED
out=$(cli reconcile --dry-run --node-id edge-1)
grep -q "no drift" <<<"$out" || fail "drift remains: $out"
check_pass "WAL deleted while down: reconciled (cause reconcile), retried, new events applied, no drift left"

finish
