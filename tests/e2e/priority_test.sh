#!/usr/bin/env bash
# Issue 16, priority at the center, with real processes: one agent is
# registered, then goes offline; 300 low-priority and 10 high-priority
# tasks queue for it (one file, the high ones last, so neither file order,
# creation time nor task id puts them first). When it returns, the 10 high
# ones run first. A second round queues 700 low + 10 high, more than the
# center sends in one chunk, so only the center's own ordering of due work
# gets the high ones out first.
#
# Proof from the agent's own journal (its WAL, edge-agent --dump-wal): with
# one run at a time, the order of its SUCCEEDED events is the order the
# runs happened; the order of its ACCEPTED events is the order the center
# sent the intents.
source "$(dirname "$0")/lib.sh" "$1"
cd "$(dirname "$0")/../.."

cat >"$E2E_DIR/orchestrator.yaml" <<YAML
dispatch_interval: 200ms
ack_timeout: 2
heartbeat_interval: 1
YAML
cat >"$E2E_DIR/agent.yaml" <<YAML
reconnect: {initial_backoff_ms: 200, max_backoff_ms: 1000}
enabled_intents: [noop]
max_concurrency: 1
YAML
start_orchestrator --config "$E2E_DIR/orchestrator.yaml"
start_agent edge-1 --config "$E2E_DIR/agent.yaml"
wait_until 20 "edge-1 connected" all_connected edge-1
kill_agent edge-1
offline() { ! node_connected edge-1; }
wait_until 20 "edge-1 shown offline" offline

# task ID PRIORITY ROUND: one entry of a tasks file (metadata round: ROUND,
# so each round is counted apart; a list shows at most 1000).
task() {
  printf '  - {task_id: %s, intent: noop, priority: %s, metadata: {round: "%s"}, target_selector: {type: nodes, nodes: [edge-1]}, timeout: 60, params: {}}\n' "$1" "$2" "$3"
}
{
  echo "tasks:"
  for i in $(seq -w 1 300); do task "bulk-$i" low 1; done
  for i in $(seq -w 1 10); do task "urgent-$i" high 1; done
} >"$E2E_DIR/tasks.yaml"
cli task submit --file "$E2E_DIR/tasks.yaml" >"$E2E_DIR/submit.out" || die "submit: $(cat "$E2E_DIR/submit.out")"
# count ROUND STATUS: tasks of ROUND in STATUS.
count() { cli -o json task list --meta "round=$1" --status "$2" --limit 1000 | jq '.tasks | length'; }
[ "$(count 1 PENDING)" = 310 ] || fail "want 310 PENDING while edge-1 is offline, got $(count 1 PENDING)"
blocked=$(cli -o json task status --task-id urgent-01 | jq -r '.nodes[0].blocked_reason')
[[ "$blocked" == node_* ]] || fail "urgent-01 is not blocked on the node: '$blocked'"
check_pass "310 tasks queued for the offline node (blocked: $blocked)"

# first TYPE N: the task ids of the first N events of TYPE in the agent's
# journal (wal.jsonl, dumped after it stopped), sorted.
first() { jq -r --arg t "$1" 'select(.event_type == $t) | .task_id' "$E2E_DIR/wal.jsonl" | head -n "$2" | sort | tr '\n' ' '; }
order() { jq -r --arg t "$1" 'select(.event_type == $t) | .task_id' "$E2E_DIR/wal.jsonl" | head -n 15 | tr '\n' ' '; }
all_done() { [ "$(count "$1" SUCCEEDED)" = "$2" ]; }
# run_backlog ROUND TOTAL: start edge-1, wait until the TOTAL tasks of
# ROUND SUCCEEDED, stop it, dump its journal.
run_backlog() {
  start_agent edge-1 --config "$E2E_DIR/agent.yaml"
  wait_until 40 "all $2 tasks of round $1 SUCCEEDED" all_done "$1" "$2"
  kill_agent edge-1
  "$BIN/edge-agent" --dump-wal "$E2E_DIR/edge-1/wal" >"$E2E_DIR/wal.jsonl" 2>"$E2E_DIR/wal.err" \
    || die "dump-wal: $(cat "$E2E_DIR/wal.err")"
}
run_backlog 1 310
want=$(for i in $(seq -w 1 10); do printf 'urgent-%s ' "$i"; done)
runs=$(jq -r 'select(.event_type == "SUCCEEDED") | .task_id' "$E2E_DIR/wal.jsonl" | sort -u | wc -l)
[ "$runs" = 310 ] || fail "the agent's journal has $runs tasks SUCCEEDED, want 310"
[ "$(first SUCCEEDED 10)" = "$want" ] || fail "first 10 runs: $(first SUCCEEDED 10); run order: $(order SUCCEEDED)"
check_pass "the 10 high-priority tasks ran first when the node returned (agent's journal)"
[ "$(first ACCEPTED 10)" = "$want" ] || fail "first 10 accepted: $(order ACCEPTED)"
check_pass "the center sent the 10 high-priority intents first (order of the agent's ACCEPTED events)"

# A backlog larger than what the center sends at once (it commits and
# sends due rows in chunks of 500, orchestrator.h dispatch_chunk): the
# first chunk must already hold the high ones, so the center itself picks
# due work high first (not only the agent's queue, which would still run
# late-arriving high ones next).
wait_until 20 "edge-1 shown offline" offline
{
  echo "tasks:"
  for i in $(seq -w 1 700); do task "later-$i" low 2; done
  for i in $(seq -w 1 10); do task "vip-$i" high 2; done
} >"$E2E_DIR/tasks2.yaml"
cli task submit --file "$E2E_DIR/tasks2.yaml" >"$E2E_DIR/submit2.out" || die "submit: $(cat "$E2E_DIR/submit2.out")"
[ "$(count 2 PENDING)" = 710 ] || fail "want 710 PENDING while edge-1 is offline, got $(count 2 PENDING)"
run_backlog 2 710
# Only this round's events (the journal holds the first round's too).
jq -c 'select(.task_id | startswith("later-") or startswith("vip-"))' "$E2E_DIR/wal.jsonl" >"$E2E_DIR/wal2.jsonl"
mv "$E2E_DIR/wal2.jsonl" "$E2E_DIR/wal.jsonl"
want=$(for i in $(seq -w 1 10); do printf 'vip-%s ' "$i"; done)
[ "$(first ACCEPTED 10)" = "$want" ] || fail "710-task backlog, first 10 accepted: $(order ACCEPTED)"
[ "$(first SUCCEEDED 10)" = "$want" ] || fail "710-task backlog, first 10 runs: $(order SUCCEEDED)"
check_pass "with 700 low + 10 high queued (more than one dispatch chunk), the center sent and the agent ran the high ones first"

# Round 3, nothing queued: a task for a connected node that the center
# holds nothing back for is dispatched by its own create (issue 18): one
# transaction holds (new) -> PENDING and PENDING -> DISPATCHED, so both
# carry the same store timestamp (a dispatch pass would be a later commit).
start_agent edge-1 --config "$E2E_DIR/agent.yaml"
wait_until 20 "edge-1 connected" all_connected edge-1
# fresh-0 running proves the node synced (only then does it take work).
{ echo "tasks:"; task fresh-0 normal 3; } >"$E2E_DIR/tasks3.yaml"
cli task submit --file "$E2E_DIR/tasks3.yaml" >"$E2E_DIR/submit3.out" || die "submit: $(cat "$E2E_DIR/submit3.out")"
wait_until 20 "fresh-0 SUCCEEDED" task_status_is fresh-0 SUCCEEDED
{ echo "tasks:"; task fresh-1 normal 3; } >"$E2E_DIR/tasks3.yaml"
cli task submit --file "$E2E_DIR/tasks3.yaml" >"$E2E_DIR/submit3.out" || die "submit: $(cat "$E2E_DIR/submit3.out")"
wait_until 20 "fresh-1 SUCCEEDED" task_status_is fresh-1 SUCCEEDED
cli -o json task events --task-id fresh-1 >"$E2E_DIR/fresh.json"
created=$(jq -r '.entries[] | select(.cause == "create") | .at' "$E2E_DIR/fresh.json")
sent=$(jq -r '.entries[] | select(.cause == "dispatch") | "\(.at) \(.attempt) \(.version)"' "$E2E_DIR/fresh.json")
[ -n "$created" ] && [ "$sent" = "$created 1 2" ] ||
  fail "fresh-1: created at '$created', dispatched at/attempt/version '$sent' (want the create's instant, 1, 2)"
check_pass "a task for a ready node with nothing queued is dispatched in its create's transaction"
finish
