#!/usr/bin/env bash
# Issue 16, progress before kill, with real processes: at a run's execution
# timeout the center asks the agent how it is doing.
#  - an exec that keeps printing ::progress:: lines is extended
#    (execution_extension), each extension in `task events` (cause
#    extended, with the progress reported), and SUCCEEDS well past its
#    timeout;
#  - an exec that prints nothing is stopped and ends TIMEOUT, and none of
#    its processes (a shell and a background child) is left behind;
#  - an exec that reported progress once and then stalls gets one extension,
#    then is stopped (TIMEOUT): progress must advance between queries.
# The three run at once (timeout 2 s, extend_by 2 s), so the test is short.
source "$(dirname "$0")/lib.sh" "$1"
cd "$(dirname "$0")/../.."

cat >"$E2E_DIR/orchestrator.yaml" <<YAML
dispatch_interval: 200ms
ack_timeout: 1
heartbeat_interval: 1
execution_extension: {extend_by: 2, max_extensions: 5}
YAML
cat >"$E2E_DIR/agent.yaml" <<YAML
reconnect: {initial_backoff_ms: 200, max_backoff_ms: 2000}
enabled_intents: [exec, noop]
exec: {allowed_commands: [/usr/bin/sh, /bin/sh]}
max_concurrency: 4
kill_grace: 1
YAML
start_orchestrator --config "$E2E_DIR/orchestrator.yaml"
start_agent worker-1 --config "$E2E_DIR/agent.yaml"
wait_until 20 "worker-1 connected" all_connected worker-1

# A unique tag in the commands' arguments, so pgrep finds only this run's
# processes (sleep 41.<tag>, a float GNU sleep accepts).
TAG=$(( $$ % 10000 ))$(( RANDOM % 1000 ))
# exec_task ID TIMEOUT SHELL_SCRIPT: one exec task on worker-1, never retried.
exec_task() {
  cat >"$E2E_DIR/$1.yaml" <<YAML
task_id: $1
intent: exec
target_selector: {type: nodes, nodes: [worker-1]}
timeout: $2
retry_policy: {max_retries: 0}
params: {argv: [sh, -c, '$3']}
YAML
  cli task submit --file "$E2E_DIR/$1.yaml" >/dev/null || die "submit $1"
}
# ~5 s of work in ten steps, a progress line each: 2.5x its timeout.
exec_task healthy 2 'for i in 1 2 3 4 5 6 7 8 9 10; do echo "::progress:: ${i}0% step $i of 10"; sleep 0.5; done; echo finished'
# Silent: a shell with a child in the background and one in the foreground.
exec_task silent 2 "sleep 41.$TAG & sleep 42.$TAG; wait"
# One progress line at the start, then nothing moves.
exec_task stalled 2 "echo \"::progress:: 10% warming up\"; sleep 43.$TAG"

started=$(date +%s)
procs() { pgrep -f "sleep 4[123]\\.$TAG" ; }
# The pattern is right (so "none left" below can fail): all three run.
three_running() { [ "$(procs | wc -l)" -ge 3 ]; }
wait_until 20 "the silent and stalled tasks' processes running" three_running
check_pass "the three exec tasks run (their processes are visible)"

# 1. The healthy one: extended while it progresses, then SUCCEEDED.
ended() { [[ "$(cli -o json task status --task-id "$1" | jq -r .status)" =~ ^(SUCCEEDED|FAILED|TIMEOUT|CANCELLED)$ ]]; }
wait_until 30 "healthy ended" ended healthy
task_status_is healthy SUCCEEDED || fail "healthy ended $(cli -o json task status --task-id healthy | jq -r .status), want SUCCEEDED"
events=$(cli -o json task events --task-id healthy)
ext=$(jq '[.entries[] | select(.cause == "extended")] | length' <<<"$events")
[ "$ext" -ge 1 ] || fail "healthy: no extension in its history: $(cli task events --task-id healthy)"
jq -e '[.entries[] | select(.cause == "extended")] | all(.detail | test("^execution timeout extended by .*\\(extension [0-9]+ of 5\\): [0-9]+% \"step [0-9]+ of 10\""))' \
  <<<"$events" >/dev/null || fail "healthy: extension details lack the progress: $(cli task events --task-id healthy)"
jq -e '[.entries[] | select(.cause == "exec_timeout" and (.detail | test("asked the agent")))] | length >= 1' \
  <<<"$events" >/dev/null || fail "healthy: no progress query in its history"
jq -e '[.entries[] | select(.to == "TIMEOUT")] | length == 0' <<<"$events" >/dev/null \
  || fail "healthy: went through TIMEOUT: $(cli task events --task-id healthy)"
result=$(cli -o json task status --task-id healthy | jq -c '.nodes[0].result')
[ "$(jq -r .stdout_tail <<<"$result")" = finished ] || fail "healthy: output $result"
[ "$(jq -r .exit_code <<<"$result")" = 0 ] || fail "healthy: exit code in $result"
check_pass "an exec printing progress past its timeout is extended ($ext time(s), progress in task events) and SUCCEEDS"

# 2. The silent one: stopped at its timeout, TIMEOUT, nothing extended.
wait_until 20 "silent ended" ended silent
task_status_is silent TIMEOUT || fail "silent ended $(cli -o json task status --task-id silent | jq -r .status), want TIMEOUT"
elapsed=$(( $(date +%s) - started ))
[ "$elapsed" -lt 20 ] || fail "silent: TIMEOUT only after ${elapsed}s"
jq -e '[.entries[] | select(.cause == "extended")] | length == 0' \
  <<<"$(cli -o json task events --task-id silent)" >/dev/null \
  || fail "silent: extended without progress: $(cli task events --task-id silent)"
check_pass "an exec printing nothing is stopped at its timeout: TIMEOUT, never extended"

# 3. The stalled one: one extension (it had reported), then TIMEOUT.
wait_until 20 "stalled ended" ended stalled
task_status_is stalled TIMEOUT || fail "stalled ended $(cli -o json task status --task-id stalled | jq -r .status), want TIMEOUT"
events=$(cli -o json task events --task-id stalled)
ext=$(jq '[.entries[] | select(.cause == "extended")] | length' <<<"$events")
[ "$ext" = 1 ] || fail "stalled: $ext extension(s), want 1: $(cli task events --task-id stalled)"
jq -e '[.entries[] | select(.to == "TIMEOUT" and (.detail | test("without progress since the last query")))] | length == 1' \
  <<<"$events" >/dev/null || fail "stalled: TIMEOUT detail: $(cli task events --task-id stalled)"
check_pass "an exec whose progress stops moving gets one extension, then TIMEOUT (no progress since the last query)"

# 4. Nothing of the stopped runs is left: not the shells, not their children.
none_left() { [ -z "$(procs)" ]; }
wait_until 10 "no process of the stopped tasks left" none_left
check_pass "no process of the stopped tasks is left behind"

# 5. Stopping a run the center timed out is not an anomaly: the agent's
# report of the stop (CANCELLED or TIMEOUT of that attempt) raises no
# illegal_transition alert.
bad=$(cli -o json alert list --limit 1000 | jq -c '[.alerts[] | select(.task_id == "healthy" or .task_id == "silent" or .task_id == "stalled")]')
[ "$bad" = "[]" ] || fail "alerts about the tasks: $bad"
check_pass "no alert raised about the three tasks"
finish
