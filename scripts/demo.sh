#!/usr/bin/env bash
# `make demo`: the whole system on this machine, secured as a real fleet
# would be. Makes a CA and certificates (orchestrator, two nodes, an
# operator) under var/demo/pki, starts an orchestrator on SQLite with mutual
# TLS and operator tokens, and two edge agents (role=worker) with their node
# certificates; bootstraps the first admin token, makes an operator token,
# submits the seed's task file with it, waits for it on both nodes, shows the
# collected metrics, runs a small DAG, shows the audit trail, and stops
# everything it started. Exits 0 only if all of it worked.
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

PKI=$DIR/pki
say "the fleet's certificates in $PKI: a CA, the orchestrator, worker-1, worker-2, an operator"
bin/apollo-cli tls ca create --dir "$PKI" >/dev/null || die "tls ca create failed"
bin/apollo-cli tls cert create --dir "$PKI" --server >/dev/null || die "server certificate"
for n in 1 2; do
  bin/apollo-cli tls cert create --dir "$PKI" --node "worker-$n" >/dev/null || die "node certificate"
done
bin/apollo-cli tls cert create --dir "$PKI" --client --name operator >/dev/null || die "operator certificate"
ls "$PKI"
# apollo-cli reads its TLS files (and, below, its token) from the environment.
export APOLLO_TLS_CA=$PKI/ca.pem APOLLO_TLS_CERT=$PKI/operator.pem APOLLO_TLS_KEY=$PKI/operator-key.pem

say "starting the orchestrator (mutual TLS, operator tokens, SQLite at $DIR/apollo.db) and two edge agents"
bin/orchestrator --listen "127.0.0.1:$PORT" --store "sqlite://$DIR/apollo.db" \
  --tls-cert "$PKI/server.pem" --tls-key "$PKI/server-key.pem" --tls-ca "$PKI/ca.pem" \
  >"$DIR/orchestrator.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 100); do
  grep -q "listening on" "$DIR/orchestrator.log" && break
  sleep 0.1
done
for n in 1 2; do
  bin/edge-agent --config "$DIR/agent.yaml" --node-id "worker-$n" --label role=worker \
    --orchestrator "127.0.0.1:$PORT" --state-dir "$DIR/worker-$n" \
    --tls-cert "$PKI/worker-$n.pem" --tls-key "$PKI/worker-$n-key.pem" --tls-ca "$PKI/ca.pem" \
    >"$DIR/worker-$n.log" 2>&1 &
  PIDS+=($!)
done

say "apollo-cli acl bootstrap   (the first admin token; works once)"
(umask 077; "${CLI[@]}" -o json acl bootstrap >"$DIR/admin-token.json") || die "acl bootstrap failed"
APOLLO_TOKEN=$(jq -r .token "$DIR/admin-token.json")
export APOLLO_TOKEN
chmod 600 "$DIR/admin-token.json"
echo "admin token kept in $DIR/admin-token.json (mode 600); the CLI below uses it via \$APOLLO_TOKEN"
say "apollo-cli token create --name demo-operator --role operator"
OPERATOR_TOKEN=$("${CLI[@]}" -o json token create --name demo-operator --role operator | jq -r .token)
[ -n "$OPERATOR_TOKEN" ] || die "token create failed"
"${CLI[@]}" token list
if env -u APOLLO_TOKEN "${CLI[@]}" task list >/dev/null 2>"$DIR/no-token.err"; then
  die "a call without a token was answered"
fi
echo "without a token: $(cat "$DIR/no-token.err")"
connected() {
  [ "$("${CLI[@]}" -o json node list 2>/dev/null | jq '[.nodes[] | select(.connected)] | length')" = 2 ]
}
for _ in $(seq 1 100); do connected && break; sleep 0.2; done
connected || die "the agents did not connect within 20 s"
"${CLI[@]}" node list

say "apollo-cli task submit --file examples/collect_metrics.yaml   (the seed's file, as demo-operator)"
APOLLO_TOKEN=$OPERATOR_TOKEN "${CLI[@]}" task submit --file examples/collect_metrics.yaml ||
  die "submit failed"
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
APOLLO_TOKEN=$OPERATOR_TOKEN "${CLI[@]}" task submit --file examples/deploy_dag.yaml ||
  die "DAG submit failed"
timeout 60 "${CLI[@]}" task watch --task-id demo-check-config >/dev/null || die "the DAG did not succeed"
"${CLI[@]}" task status --task-id demo-write-config
"${CLI[@]}" task status --task-id demo-check-config
say "the history of the check, with the cause of every step"
"${CLI[@]}" task events --task-id demo-check-config

say "a rollout: a canary first, the rest once someone approves (examples/rollout.yaml)"
"${CLI[@]}" task submit --dry-run --file examples/rollout.yaml || die "rollout dry run failed"
APOLLO_TOKEN=$OPERATOR_TOKEN "${CLI[@]}" task submit --file examples/rollout.yaml ||
  die "rollout submit failed"
rollout_state() { "${CLI[@]}" -o json task status --task-id web-v2 | jq -r .rollout.state; }
for _ in $(seq 1 100); do [ "$(rollout_state)" = awaiting_approval ] && break; sleep 0.2; done
[ "$(rollout_state)" = awaiting_approval ] || die "the rollout's canary did not end: $(rollout_state)"
"${CLI[@]}" task status --task-id web-v2
say "apollo-cli task approve --task-id web-v2   (as demo-operator)"
APOLLO_TOKEN=$OPERATOR_TOKEN "${CLI[@]}" task approve --task-id web-v2 --reason "canary is healthy" \
  >/dev/null || die "approve failed"
timeout 60 "${CLI[@]}" task watch --task-id web-v2 >/dev/null || die "the rollout did not succeed"
"${CLI[@]}" task status --task-id web-v2
"${CLI[@]}" task events --task-id web-v2

say "apollo-cli audit list   (who did what)"
"${CLI[@]}" audit list || die "audit list failed"

say "the dashboard and the metrics (HTTP, same certificate and tokens)"
http=$(grep -oE 'HTTP on https?://[0-9.]+:[0-9]+' "$DIR/orchestrator.log" | tail -n 1)
if [ -z "$http" ]; then
  grep 'HTTP server is off' "$DIR/orchestrator.log" || echo "no HTTP server (see $DIR/orchestrator.log)"
else
  url=${http#HTTP on }
  [ "$(curl -sS --cacert "$PKI/ca.pem" "$url/healthz")" = ok ] || die "$url/healthz did not answer"
  page=$(curl -sS -o /dev/null -w '%{http_code}' --cacert "$PKI/ca.pem" "$url/")
  if [ "$page" = 200 ]; then
    echo "dashboard: $url/"
    echo "  its certificate is signed by the demo's own CA ($PKI/ca.pem): the browser asks you to accept it;"
    echo "  sign in with the admin token: jq -r .token $DIR/admin-token.json"
  else
    echo "dashboard: not built (make ui builds web/dist; make demo does it)"
  fi
  echo "metrics: curl --cacert $PKI/ca.pem -H \"Authorization: Bearer \$(jq -r .token $DIR/admin-token.json)\" $url/metrics"
  curl -sS --cacert "$PKI/ca.pem" -H "Authorization: Bearer $APOLLO_TOKEN" "$url/metrics" |
    grep -E '^apollo_(tasks|sessions_connected|nodes)' | head -n 12
fi

if [ "${APOLLO_DEMO_KEEP:-0}" = 1 ]; then
  say "demo: ok; the system keeps running until Ctrl-C (at most 8 hours)"
  [ -n "$http" ] && echo "dashboard: ${http#HTTP on }/"
  trap 'echo; echo "demo: stopping"; exit 0' INT TERM
  sleep 28800 &
  wait $!
  exit 0
fi
say "demo: ok (logs and state in $DIR; certificates in $PKI)"
