#!/usr/bin/env bash
# Crashes with real processes: an agent killed with SIGKILL while its task is
# DISPATCHED, and the orchestrator killed with SIGKILL mid-run. Every task
# still finishes, none runs twice (a journal written by the task itself),
# and no event is lost (every event in the agents' WALs is in the store's
# history).
source "$(dirname "$0")/lib.sh" "$1"
cd "$(dirname "$0")/../.."

cat >"$E2E_DIR/orchestrator.yaml" <<YAML
dispatch_interval: 1
ack_timeout: 2
YAML
start_orchestrator --config "$E2E_DIR/orchestrator.yaml"
start_agent edge-1 --label role=edge
start_agent edge-2 --label role=edge
wait_until 20 "agents connected" all_connected edge-1 edge-2

JOURNAL_CMD="echo \$APOLLO_TASK_ID \$APOLLO_ATTEMPT \$APOLLO_NODE_ID >> $E2E_DIR/journal"

# 1. The agent is frozen, gets the intent (DISPATCHED), and is killed.
kill -STOP "${AGENT_PID[edge-1]}"
write_task "$E2E_DIR/t1.yaml" t-dispatched exec "{type: nodes, nodes: [edge-1]}" \
  "{argv: [sh, -c, '$JOURNAL_CMD']}"
cli task submit --file "$E2E_DIR/t1.yaml" >/dev/null || die "submit t-dispatched"
wait_until 20 "t-dispatched DISPATCHED" node_status_is t-dispatched edge-1 DISPATCHED
kill_agent edge-1
start_agent edge-1 --label role=edge
wait_until 30 "t-dispatched SUCCEEDED" task_status_is t-dispatched SUCCEEDED
n=$(grep -c '^t-dispatched ' "$E2E_DIR/journal")
[ "$n" = 1 ] || fail "t-dispatched ran $n times"
cli -o json task events --task-id t-dispatched | jq -e '[.entries[] | select(.cause | test("ack_timeout"))] | length > 0' >/dev/null \
  || fail "no ack_timeout re-dispatch in the history"
check_pass "agent killed while DISPATCHED: re-sent after the ack timeout, SUCCEEDED, ran once"

# 2. The orchestrator is killed mid-run and restarted on the same store.
{
  echo "tasks:"
  for i in $(seq 1 40); do
    node=edge-$(( i % 2 + 1 ))
    cat <<YAML
  - task_id: job-$i
    intent: exec
    target_selector: {type: nodes, nodes: [$node]}
    timeout: 60
    retry_policy: {max_retries: 2, initial_interval: 1, max_interval: 2, backoff: fixed}
    params: {argv: [sh, -c, '$JOURNAL_CMD; sleep 0.2']}
YAML
  done
} >"$E2E_DIR/jobs.yaml"
cli task submit --file "$E2E_DIR/jobs.yaml" >/dev/null || die "submit jobs"
succeeded() { cli -o json task list --status SUCCEEDED --limit 1000 | jq '.tasks | length'; }
at_least_succeeded() { [ "$(succeeded)" -ge "$1" ]; }
wait_until 30 "a few jobs done" at_least_succeeded 6
kill_orchestrator
start_orchestrator --config "$E2E_DIR/orchestrator.yaml"
wait_until 90 "all 41 tasks SUCCEEDED" at_least_succeeded 41
dups=$(awk '{print $1, $3}' "$E2E_DIR/journal" | sort | uniq -d)
[ -z "$dups" ] || fail "ran twice: $dups"
[ "$(wc -l <"$E2E_DIR/journal")" = 41 ] || fail "journal has $(wc -l <"$E2E_DIR/journal") lines, want 41"
check_pass "orchestrator killed mid-run: every task finished, none ran twice"

# 3. Every event the agents logged as durable is in the store's history
# (41 tasks x ACCEPTED + SUCCEEDED = at least 82).
kill -TERM "${AGENT_PID[edge-1]}" "${AGENT_PID[edge-2]}"
wait "${AGENT_PID[edge-1]}" "${AGENT_PID[edge-2]}" 2>/dev/null
for n in edge-1 edge-2; do
  "$BIN/edge-agent" --dump-wal "$E2E_DIR/$n/wal" | jq -r .event_id
done | sort -u >"$E2E_DIR/wal-events"
for t in t-dispatched $(seq -f 'job-%g' 1 40); do
  cli -o json task events --task-id "$t" | jq -r '.entries[].cause' | grep -oE 'edge-[12]-[0-9]+'
done | sort -u >"$E2E_DIR/store-events"
missing=$(comm -23 "$E2E_DIR/wal-events" "$E2E_DIR/store-events")
[ "$(wc -l <"$E2E_DIR/wal-events")" -ge 82 ] || fail "only $(wc -l <"$E2E_DIR/wal-events") events in the WALs"
[ -z "$missing" ] || fail "events in the WAL but not in the store: $missing"
check_pass "no event lost: all $(wc -l <"$E2E_DIR/wal-events") WAL events are in the store history"

finish
