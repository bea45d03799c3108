#!/usr/bin/env bash
# `make demo`: the whole system on this machine. Starts an orchestrator on
# SQLite and two edge agents (role=worker), submits the seed's task file,
# waits for it on both nodes, shows the collected metrics, then runs a small
# DAG, and stops everything it started. Exits 0 only if all of it worked.
# State lives in ./var/demo (wiped at start). Port: APOLLO_DEMO_PORT (7011).
set -uo pipefail
cd "$(dirname "$0")/.."

PORT=${APOLLO_DEMO_PORT:-7011}
DIR=./var/demo
CLI=(bin/apollo-cli --server "127.0.0.1:$PORT")
PIDS=()

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
die() {
  echo "demo: FAILED: $*" >&2
  for f in "$DIR"/*.log; do echo "----- $f" >&2; tail -n 15 "$f" >&2; done
  exit 1
}
stop_all() {
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null; done
  for pid in "${PIDS[@]}"; do
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null
  done
}
trap stop_all EXIT

for b in bin/orchestrator bin/edge-agent bin/apollo-cli; do
  [ -x "$b" ] || die "$b is missing; run 'make build'"
done
if [ -n "$(ss -ltnH "sport = :$PORT" 2>/dev/null)" ]; then
  die "port $PORT is already in use; set APOLLO_DEMO_PORT to a free port"
fi
rm -rf "$DIR" /tmp/apollo-demo-app.conf
mkdir -p "$DIR"
# The DAG below runs exec and writes under /tmp: both are off in the
# shipped agent config (config/edge-agent.yaml), so the demo turns them on.
printf '%s\n' 'enabled_intents: [collect_metrics, ensure_file, exec, noop, sleep]' \
  'ensure_file: {allowed_dirs: [/tmp]}' >"$DIR/agent.yaml"

say "starting the orchestrator (SQLite at $DIR/apollo.db) and two edge agents"
bin/orchestrator --listen "127.0.0.1:$PORT" --store "sqlite://$DIR/apollo.db" >"$DIR/orchestrator.log" 2>&1 &
PIDS+=($!)
for n in 1 2; do
  bin/edge-agent --config "$DIR/agent.yaml" --node-id "worker-$n" --label role=worker \
    --orchestrator "127.0.0.1:$PORT" --state-dir "$DIR/worker-$n" >"$DIR/worker-$n.log" 2>&1 &
  PIDS+=($!)
done
connected() {
  [ "$("${CLI[@]}" -o json node list 2>/dev/null | jq '[.nodes[] | select(.connected)] | length')" = 2 ]
}
for _ in $(seq 1 100); do connected && break; sleep 0.2; done
connected || die "the agents did not connect within 20 s"
"${CLI[@]}" node list

say "apollo-cli task submit --file examples/collect_metrics.yaml   (the seed's file)"
"${CLI[@]}" task submit --file examples/collect_metrics.yaml || die "submit failed"
timeout 60 "${CLI[@]}" task watch --task-id collect-metrics-1712345678-b7e2 >/dev/null \
  || die "collect-metrics did not succeed"
say "apollo-cli task status --task-id collect-metrics-1712345678-b7e2"
"${CLI[@]}" task status --task-id collect-metrics-1712345678-b7e2 || die "status failed"
say "the metrics each worker collected"
"${CLI[@]}" -o json task status --task-id collect-metrics-1712345678-b7e2 |
  jq -c '.nodes[] | {node: .node_id, load_1m: .result.load["1m"], cpus: .result.cpu.count,
         cpu_utilization: .result.cpu.utilization,
         mem_available_mb: ((.result.memory.available_bytes // 0) / 1048576 | floor),
         uptime_s: .result.uptime_s}' || die "no metrics"

say "a DAG: ensure_file on every worker, then an exec check that depends on it"
"${CLI[@]}" task submit --file examples/deploy_dag.yaml || die "DAG submit failed"
timeout 60 "${CLI[@]}" task watch --task-id demo-check-config >/dev/null || die "the DAG did not succeed"
"${CLI[@]}" task status --task-id demo-write-config
"${CLI[@]}" task status --task-id demo-check-config
say "the history of the check, with the cause of every step"
"${CLI[@]}" task events --task-id demo-check-config

say "demo: ok (logs and state in $DIR)"
