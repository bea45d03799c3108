#!/usr/bin/env bash
# Overload protection on staged bad days, real processes:
#  1. an intent that always fails opens its circuit breaker; other intents
#     keep flowing;
#  2. 200 tasks failing at once: re-dispatches never exceed the retry bucket;
#  3. a burst against an agent that is away: the queue watermarks pause new
#     submissions (retryable error), nothing is lost, everything completes.
source "$(dirname "$0")/lib.sh" "$1"
cd "$(dirname "$0")/../.."

tasks_file() {  # tasks_file FILE PREFIX COUNT INTENT PARAMS MAX_RETRIES
  { echo "tasks:"
    for i in $(seq 1 "$3"); do
      cat <<YAML
  - task_id: $2-$i
    intent: $4
    target_selector: {type: nodes, nodes: [edge-1]}
    timeout: 60
    retry_policy: {max_retries: $6, initial_interval: 0, max_interval: 0, backoff: fixed}
    params: $5
YAML
    done; } >"$1"
}

# ---- 1 and 2: breaker and retry bucket
cat >"$E2E_DIR/orchestrator.yaml" <<YAML
dispatch_interval: 1
circuit_breaker: {failures: 3, cool_down: 600}
retry_budget: {rate_per_s: 20, burst: 10}
YAML
start_orchestrator --config "$E2E_DIR/orchestrator.yaml"
start_agent edge-1
wait_until 20 "agent connected" all_connected edge-1

tasks_file "$E2E_DIR/fail.yaml" doomed 6 exec "{argv: [sh, -c, 'exit 3']}" 0
cli task submit --file "$E2E_DIR/fail.yaml" >/dev/null || die "submit doomed"
breaker_open() { [ "$(cli -o json intent list | jq -r '.intents[] | select(.intent=="exec") | .breaker')" = OPEN ]; }
wait_until 30 "exec breaker OPEN" breaker_open
tasks_file "$E2E_DIR/fine.yaml" fine 5 noop "{}" 0
cli task submit --file "$E2E_DIR/fine.yaml" >/dev/null || die "submit fine"
for i in 1 2 3 4 5; do wait_until 30 "fine-$i SUCCEEDED" task_status_is "fine-$i" SUCCEEDED; done
tasks_file "$E2E_DIR/held.yaml" held 1 exec "{argv: [true]}" 0
cli task submit --file "$E2E_DIR/held.yaml" >/dev/null || die "submit held"
blocked() { cli -o json task status --task-id held-1 | jq -r '.nodes[0].blocked_reason' | grep -q '^circuit_open exec'; }
wait_until 10 "held-1 blocked by the breaker" blocked
grep -q "ALERT: circuit breaker OPEN for intent 'exec'" "$E2E_DIR/orchestrator.log" || fail "no breaker alert logged"
check_pass "an always-failing intent opens its breaker (alert, circuit_open blocked_reason); other intents flow"

# The storm's failures must not open a breaker (that would hold the retries
# back for another reason): the same store, a config with a lenient breaker.
kill_orchestrator
cat >"$E2E_DIR/orchestrator-storm.yaml" <<YAML
dispatch_interval: 1
circuit_breaker: {failures: 1000, cool_down: 600}
retry_budget: {rate_per_s: 20, burst: 10}
YAML
start_orchestrator --config "$E2E_DIR/orchestrator-storm.yaml"
wait_until 20 "agent reconnected" all_connected edge-1
tasks_file "$E2E_DIR/storm.yaml" storm 200 sleep "{seconds: not-a-number}" 1
cli task submit --file "$E2E_DIR/storm.yaml" >/dev/null || die "submit storm"
all_failed() { [ "$(cli -o json task list --status FAILED --intent sleep --limit 1000 | jq '.tasks | length')" -ge 200 ]; }
wait_until 120 "all 200 storm tasks FAILED after their retry" all_failed
# Every retry is a "dispatch" history entry with attempt 2; count them per second.
for i in $(seq 1 200); do
  cli -o json task events --task-id "storm-$i" | jq -r '.entries[] | select(.cause=="dispatch" and .attempt==2) | .at[0:19]'
done | sort | uniq -c | sort -rn >"$E2E_DIR/retry-rate"
peak=$(head -1 "$E2E_DIR/retry-rate" | awk '{print $1}')
total=$(awk '{s+=$1} END {print s}' "$E2E_DIR/retry-rate")
[ "$total" = 200 ] || fail "want 200 retries dispatched, got $total"
[ "$peak" -le 30 ] || fail "retries peaked at $peak/s, above rate 20 + burst 10"
check_pass "200 tasks failing at once: 200 retries, peak $peak/s within the bucket (20/s, burst 10)"

# ---- 3: watermarks, with a second orchestrator on a fresh store
kill_agent edge-1
kill_orchestrator
cat >"$E2E_DIR/orchestrator2.yaml" <<YAML
dispatch_interval: 1
queue: {capacity: 1000, alert_at: 0.5, pause_at: 0.8}
YAML
ORCH_PORT=""
STORE_FILE=burst.db start_orchestrator --config "$E2E_DIR/orchestrator2.yaml"
rm -rf "$E2E_DIR/edge-1"
start_agent edge-1
wait_until 20 "agent connected" all_connected edge-1
kill_agent edge-1   # registered, now away: nothing drains
for part in 1 2; do
  tasks_file "$E2E_DIR/burst$part.yaml" "burst$part" 500 noop "{}" 0
  cli task submit --file "$E2E_DIR/burst$part.yaml" >/dev/null || die "submit burst$part"
done
paused() { [ "$(cli -o json intent list | jq -r .queue.paused)" = true ]; }
wait_until 10 "queue paused" paused
tasks_file "$E2E_DIR/burst3.yaml" burst3 500 noop "{}" 0
if cli task submit --file "$E2E_DIR/burst3.yaml" >/dev/null 2>"$E2E_DIR/err"; then
  fail "a submission was accepted while the queue was paused"
fi
grep -q "queue_paused" "$E2E_DIR/err" || fail "refusal does not say queue_paused: $(cat "$E2E_DIR/err")"
start_agent edge-1
resumed() { [ "$(cli -o json intent list | jq -r .queue.paused)" = false ]; }
wait_until 120 "queue resumed" resumed
cli task submit --file "$E2E_DIR/burst3.yaml" >/dev/null || fail "resubmission after resume refused"
done_all() { [ "$(cli -o json task list --status SUCCEEDED --limit 1000 | jq '.tasks | length')" -ge 1000 ]; }
wait_until 180 "burst SUCCEEDED" done_all
left=$(cli -o json intent list | jq .queue.depth)
wait_until 120 "queue drained" bash -c "[ \"\$($BIN/apollo-cli --server 127.0.0.1:$ORCH_PORT -o json intent list | jq .queue.depth)\" = 0 ]"
grep -q "ALERT: dispatch queue above its pause mark" "$E2E_DIR/orchestrator.log" || fail "no pause alert logged"
check_pass "burst against an absent agent: paused at the watermark, refused retryably, resumed, all 1,500 completed"

finish
