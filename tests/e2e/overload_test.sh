#!/usr/bin/env bash
# Overload protection on staged bad days, real processes:
#  1. an intent that always fails opens its circuit breaker; other intents
#     keep flowing;
#  2. 200 tasks failing at once: re-dispatches never exceed the retry bucket;
#  3. a 5,000-task burst against one slow agent: the queue watermarks alert
#     and pause new submissions (retryable error), nothing is lost or run
#     twice, everything completes after.
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
# The alert as the operator sees it: apollo-cli alert list, filtered.
n=$(cli -o json alert list --kind circuit_open --node edge-1 --limit 1000 \
  | jq '[.alerts[] | select(.task_id // "" | startswith("doomed-"))] | length')
[ "$n" = 1 ] || fail "want 1 circuit_open alert naming edge-1 and a doomed task, got $n: $(cli alert list)"
cli alert list --kind circuit_open | grep -Eq "circuit_open +edge-1 +doomed-" \
  || fail "alert list table: $(cli alert list --kind circuit_open)"
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
# A transient failure (a command that exits 1), so each task gets its retry;
# invalid params would be permanent and never retried.
tasks_file "$E2E_DIR/storm.yaml" storm 200 exec "{argv: [\"false\"]}" 1
cli task submit --file "$E2E_DIR/storm.yaml" >/dev/null || die "submit storm"
all_failed() {
  [ "$(cli -o json task list --status FAILED --intent exec --limit 1000 \
       | jq '[.tasks[] | select(.task_id | startswith("storm-"))] | length')" -ge 200 ]
}
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

# ---- 3: a 5,000-task burst against one slow agent, fresh store and agent.
# The agent is away when the burst starts (as on a bad day: it restarts),
# so the first files fill the dispatch queue (capacity 1,000; PENDING rows
# count) past 80 % (alert) and 90 % (pause) whatever the machine's speed;
# the next file is refused (queue_paused, retryable). Then the agent comes
# back, taking an intent every 8 ms at best (--test-intent-delay-ms: a slow
# disk or CPU) and running one task at a time (max_concurrency 1), each a
# 2 ms sleep; refused files are resubmitted until accepted, as a client
# should. The ack timeout is long enough that the backlog is not re-sent
# while it waits. (With the agent there from the start, whether the queue
# ever reached 90 % depended on the CLI outpacing the agent: CI, starved of
# CPU, once saw no refusal at all.)
kill_agent edge-1
kill_orchestrator
cat >"$E2E_DIR/orchestrator2.yaml" <<YAML
dispatch_interval: 1
ack_timeout: 60
queue: {capacity: 1000, alert_at: 0.8, pause_at: 0.9}
YAML
ORCH_PORT=""
STORE_FILE=burst.db start_orchestrator --config "$E2E_DIR/orchestrator2.yaml"
rm -rf "$E2E_DIR/edge-1"
printf 'max_concurrency: 1\n' >"$E2E_DIR/slow-agent.yaml"
start_agent edge-1 --config "$E2E_DIR/slow-agent.yaml" --test-intent-delay-ms 8
wait_until 20 "agent connected" all_connected edge-1
kill_agent edge-1  # registered, now away
BURST=5000 FILE_SIZE=250 FILL=4
refused=0 resumed_after_refusal=0 accepted=0 agent_back=0
queue_paused() { [ "$(cli -o json intent list | jq -r .queue.paused)" = true ]; }
burst_start=$(date +%s)
for part in $(seq 1 $((BURST / FILE_SIZE))); do
  tasks_file "$E2E_DIR/burst$part.yaml" "burst$part" "$FILE_SIZE" sleep "{seconds: 0.002}" 0
  for try in $(seq 1 600); do  # bounded: 600 x 0.2 s
    if cli task submit --file "$E2E_DIR/burst$part.yaml" >/dev/null 2>"$E2E_DIR/err"; then
      accepted=$((accepted + FILE_SIZE))
      [ "$try" -gt 1 ] && resumed_after_refusal=$((resumed_after_refusal + 1))
      break
    fi
    grep -q "queue_paused" "$E2E_DIR/err" || die "burst$part refused for another reason: $(cat "$E2E_DIR/err")"
    [ "$part" -gt "$FILL" ] || fail "burst$part refused before the queue held $((FILL * FILE_SIZE)) rows: $(cat "$E2E_DIR/err")"
    refused=$((refused + 1))
    if [ "$agent_back" = 0 ]; then
      start_agent edge-1 --config "$E2E_DIR/slow-agent.yaml" --test-intent-delay-ms 8
      agent_back=1
    fi
    sleep 0.2
  done
  # The queue holds FILL files' rows and nobody takes them: it pauses at
  # its next check (every dispatch pass).
  [ "$part" = "$FILL" ] && wait_until 20 "the queue paused at $((FILL * FILE_SIZE)) of 1000" queue_paused
done
[ "$accepted" = "$BURST" ] || fail "only $accepted of $BURST tasks were accepted"
[ "$refused" -gt 0 ] || fail "no submission was refused: the queue never paused"
[ "$resumed_after_refusal" -gt 0 ] || fail "no refused file was accepted later: submissions never resumed"
# Counts a status over every page (the API returns at most 1,000 a page).
count_status() {
  local token="" n=0 page
  for _ in $(seq 1 20); do
    page=$(cli -o json task list --status "$1" --limit 1000 ${token:+--page-token "$token"}) || return 1
    n=$((n + $(jq '.tasks | length' <<<"$page")))
    token=$(jq -r '.next_page_token // ""' <<<"$page")
    [ -z "$token" ] && break
  done
  echo "$n"
}
burst_done() { [ "$(count_status SUCCEEDED)" -ge "$BURST" ]; }
wait_until 300 "all $BURST burst tasks SUCCEEDED" burst_done
burst_secs=$(( $(date +%s) - burst_start ))
n_ok=$(count_status SUCCEEDED)
[ "$n_ok" = "$BURST" ] || fail "want exactly $BURST SUCCEEDED, got $n_ok"
for s in FAILED PENDING DISPATCHED RUNNING RETRYING; do
  n=$(count_status "$s")
  [ "$n" = 0 ] || fail "$n burst tasks are $s"
done
wait_until 10 "queue depth 0" bash -c "[ \"\$($BIN/apollo-cli --server 127.0.0.1:$ORCH_PORT -o json intent list | jq .queue.depth)\" = 0 ]"
[ "$(cli -o json intent list | jq -r .queue.paused)" = false ] || fail "queue still paused after the burst"
# The alerts (apollo-cli alert list, and lines in the log): the 80 % alert,
# the 90 % pause and the resume, in that order.
DB="$E2E_DIR/burst.db"
kinds=$(cli -o json alert list --limit 1000 | jq -r '.alerts[] | select(.kind | startswith("queue_")) | .kind' | tr '\n' ' ')
grep -q "queue_alert queue_paused .*queue_resumed" <<<"$kinds" || fail "queue alert rows not alert, pause, resume: $kinds"
grep -q "ALERT: dispatch queue above its pause mark" "$E2E_DIR/orchestrator.log" || fail "no pause alert logged"
# Nothing ran twice: every row was dispatched once (attempt 1) and, on the
# agent's side, its WAL holds exactly one ACCEPTED per task.
twice=$(sqlite3 -readonly "$DB" "SELECT count(*) FROM task_nodes WHERE attempt <> 1")
[ "$twice" = 0 ] || fail "$twice burst rows were dispatched more than once"
kill_agent edge-1   # the WAL is read while nothing writes it
"$BIN/edge-agent" --dump-wal "$E2E_DIR/edge-1/wal" 2>"$E2E_DIR/dump.err" \
  | jq -r 'select(.event_type == "ACCEPTED") | .task_id' | sort | uniq -c | awk '{print $1}' | sort | uniq -c \
  >"$E2E_DIR/accepted-per-task"
[ "$(cat "$E2E_DIR/accepted-per-task" | tr -s ' ')" = " $BURST 1" ] \
  || fail "ACCEPTED per task in the agent's WAL (count times): $(cat "$E2E_DIR/accepted-per-task")"
check_pass "5,000-task burst against one slow agent: alert at 80 %, paused at 90 % ($refused refusals, queue_paused), resumed, all $BURST SUCCEEDED once each (${burst_secs} s)"

finish
