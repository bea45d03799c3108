#!/usr/bin/env bash
# The seed's section 3.4 drill, staged with real processes on loopback:
# an agent is frozen in the middle of a batch aimed at it (its intents go
# unacknowledged: ack timeouts fire), killed with SIGKILL, and restarted —
# once with its WAL, once with its WAL deleted. Prints how long the fleet
# took to converge (every task SUCCEEDED, executed once per attempt, and no
# drift between the agent's snapshot and the store) after the restart.
#
# usage: scripts/drill.sh [BIN_DIR]   (default: ./bin)   — needs jq, python3
set -uo pipefail
cd "$(dirname "$0")/.."
source tests/e2e/lib.sh "${1:-bin}"

N=${DRILL_TASKS:-50}
printf 'dispatch_interval: 1\nack_timeout: 2\n' >"$E2E_DIR/orchestrator.yaml"
printf 'reconnect: {initial_backoff_ms: 200, max_backoff_ms: 1000}\nmax_concurrency: 4\nenabled_intents: [exec]\n' >"$E2E_DIR/agent.yaml"
start_orchestrator --config "$E2E_DIR/orchestrator.yaml"

now() { date +%s.%N; }
all_done() {  # all_done PREFIX
  [ "$(cli -o json task list --status SUCCEEDED --limit 1000 | jq --arg p "$1-" '[.tasks[] | select(.task_id | startswith($p))] | length')" -ge "$N" ]
}
no_drift() { cli node sync --node-id "$1" >/dev/null 2>&1; sleep 0.3; cli reconcile --dry-run --node-id "$1" | grep -q "no drift"; }

drill() {  # drill NODE PREFIX wipe|keep
  local node=$1 prefix=$2 mode=$3
  start_agent "$node" --config "$E2E_DIR/agent.yaml"
  wait_until 20 "$node connected" all_connected "$node"
  { echo "tasks:"
    for i in $(seq 1 "$N"); do
      cat <<YAML
  - task_id: $prefix-$i
    intent: exec
    target_selector: {type: nodes, nodes: [$node]}
    timeout: 60
    retry_policy: {max_retries: 3, initial_interval: 1, max_interval: 2, backoff: fixed}
    params: {argv: [sh, -c, 'echo \$APOLLO_TASK_ID \$APOLLO_ATTEMPT >> $E2E_DIR/journal-$node; sleep 0.2']}
YAML
    done; } >"$E2E_DIR/$prefix.yaml"
  cli task submit --file "$E2E_DIR/$prefix.yaml" >/dev/null || die "submit $prefix"
  sleep ${DRILL_FREEZE_AFTER:-0.05}
  kill -STOP "${AGENT_PID[$node]}"            # frozen mid-batch
  echo "drill: $node frozen mid-batch; waiting past the 2 s ack timeout"
  sleep 3
  local resent
  resent=$(for i in $(seq 1 "$N"); do cli -o json task events --task-id "$prefix-$i" | jq -r '.entries[].cause'; done | grep -c ack_timeout)
  echo "drill: $resent intents re-sent after an ack timeout while the agent was frozen"
  kill_agent "$node"
  [ "$mode" = wipe ] && rm -rf "$E2E_DIR/$node/wal" && echo "drill: $node's WAL deleted"
  local t0; t0=$(now)
  start_agent "$node" --config "$E2E_DIR/agent.yaml"
  wait_until 120 "$prefix converged" all_done "$prefix"
  wait_until 30 "$node: no drift" no_drift "$node"
  local t1; t1=$(now)
  local dup
  dup=$(sort "$E2E_DIR/journal-$node" | uniq -d | wc -l)
  [ "$dup" = 0 ] || fail "$dup (task, attempt) pairs executed twice on $node"
  printf 'drill: %-22s converged in %.1f s after the restart (%d tasks, %s)\n' \
    "$node ($mode WAL)" "$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')" "$N" "$(grep -c recovered "$E2E_DIR/$node.log") WAL recoveries logged"
}

drill edge-1 withwal keep
drill edge-2 nowal wipe
finish
