#!/usr/bin/env bash
# Helpers for end-to-end tests: real orchestrator and agent processes on
# loopback, each in its own state dir under one temp dir, stopped by PID at
# exit. Every wait is bounded.
#
# Usage: source lib.sh BIN_DIR   (BIN_DIR holds orchestrator, edge-agent, apollo-cli)
set -uo pipefail

BIN=${1:?bin dir}
E2E_DIR=$(mktemp -d /tmp/apollo-e2e.XXXXXX)
echo "e2e state in $E2E_DIR"
declare -A AGENT_PID=()
ORCH_PID=""
ORCH_PORT=""
FAILURES=0

EXTRA_PIDS=()
cleanup() {
  for pid in "${AGENT_PID[@]}" $ORCH_PID "${EXTRA_PIDS[@]}"; do kill -9 "$pid" 2>/dev/null; done
  wait 2>/dev/null
  if [ "$FAILURES" -eq 0 ] && [ -z "${KEEP_E2E_DIR:-}" ]; then rm -rf "$E2E_DIR"; else echo "state kept in $E2E_DIR"; fi
}
trap cleanup EXIT

CHECKED_FAILURES=0
fail() { echo "FAIL: $*"; FAILURES=$((FAILURES + 1)); }
# Ends a check: "ok" only if no fail() since the previous check ended.
check_pass() {
  if [ "$FAILURES" -eq "$CHECKED_FAILURES" ]; then echo "ok   $*"; else echo "FAILED CHECK: $*"; fi
  CHECKED_FAILURES=$FAILURES
}
die() { echo "FAIL: $*"; FAILURES=$((FAILURES + 1)); dump_logs; exit 1; }
dump_logs() {
  for f in "$E2E_DIR"/*.log; do echo "----- $f"; tail -n 30 "$f"; done
}

cli() { "$BIN/apollo-cli" --server "127.0.0.1:$ORCH_PORT" "$@"; }

# start_nats: a throwaway `nats-server -js` on a free loopback port, its
# JetStream files under $E2E_DIR/js; sets APOLLO_E2E_BUS so the orchestrator
# runs on it. Missing nats-server fails the test (it is required in CI).
start_nats() {
  command -v nats-server >/dev/null || die "nats-server is not installed (apt-get install nats-server)"
  NATS_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  nats-server -js -sd "$E2E_DIR/js" -a 127.0.0.1 -p "$NATS_PORT" >>"$E2E_DIR/nats.log" 2>&1 &
  NATS_PID=$!
  EXTRA_PIDS+=("$NATS_PID")
  for _ in $(seq 1 100); do
    if [ -n "$(ss -ltnH "sport = :$NATS_PORT" 2>/dev/null)" ]; then
      APOLLO_E2E_BUS="nats://127.0.0.1:$NATS_PORT"
      echo "event bus: $APOLLO_E2E_BUS"
      return 0
    fi
    kill -0 "$NATS_PID" 2>/dev/null || die "nats-server exited at start"
    sleep 0.1
  done
  die "nats-server did not start listening"
}
# start_postgres: a throwaway PostgreSQL 15 (initdb in $E2E_DIR/pg, trust
# auth, a free loopback port, run as the postgres user when root); sets
# PG_URL. Stopped at exit. Missing PostgreSQL fails the test.
PGBIN=/usr/lib/postgresql/15/bin
pg_run() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$PGBIN/$1" "${@:2}"; else "$PGBIN/$1" "${@:2}"; fi
}
start_postgres() {
  [ -x "$PGBIN/initdb" ] || die "PostgreSQL 15 is not installed (apt-get install postgresql)"
  chmod 755 "$E2E_DIR"
  mkdir -p "$E2E_DIR/pg" && { [ "$(id -u)" != 0 ] || chown postgres "$E2E_DIR/pg"; }
  local port
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  pg_run initdb -D "$E2E_DIR/pg/data" -A trust -U apollo -E UTF8 >>"$E2E_DIR/pg.log" 2>&1 ||
    die "initdb failed (see $E2E_DIR/pg.log)"
  pg_run pg_ctl -D "$E2E_DIR/pg/data" -l "$E2E_DIR/pg/server.log" -w -t 60 start \
    -o "-p $port -k $E2E_DIR/pg -c listen_addresses=127.0.0.1" >>"$E2E_DIR/pg.log" 2>&1 ||
    die "PostgreSQL did not start (see $E2E_DIR/pg/server.log)"
  EXTRA_PIDS+=("$(head -n 1 "$E2E_DIR/pg/data/postmaster.pid")")
  PG_URL="postgresql://apollo@127.0.0.1:$port/postgres"
  echo "store: $PG_URL"
}

# Orchestrator replicas (docs/replicas.md). start_replica N STORE_URL: replica
# rN on its own loopback port (RPORT[N], kept across restarts), on the bus
# $APOLLO_E2E_BUS, with $E2E_DIR/orchestrator.yaml if there is one, logging
# to $E2E_DIR/rN.log. replica_servers: every replica's address, comma
# separated (what agents and apollo-cli take); leader: the leading replica's
# number, from cluster status; leader_epoch: the leader lease's epoch.
declare -A RPORT=() RPID=()
start_replica() {
  local r=$1 store=$2 cfg=()
  [ -n "${RPORT[$r]:-}" ] ||
    RPORT[$r]=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  [ ! -f "$E2E_DIR/orchestrator.yaml" ] || cfg=(--config "$E2E_DIR/orchestrator.yaml")
  "$BIN/orchestrator" "${cfg[@]}" --replica-id "r$r" --listen "127.0.0.1:${RPORT[$r]}" \
    --store "$store" --bus "${APOLLO_E2E_BUS:-embedded}" --http-listen off --log-format json \
    >>"$E2E_DIR/r$r.log" 2>&1 &
  RPID[$r]=$!
  EXTRA_PIDS+=("${RPID[$r]}")
  wait_until 30 "replica r$r listening" grep -q "listening on" "$E2E_DIR/r$r.log"
}
replica_servers() {
  local r out=""
  for r in $(printf '%s\n' "${!RPORT[@]}" | sort -n); do out+="${out:+,}127.0.0.1:${RPORT[$r]}"; done
  echo "$out"
}
cluster_status() { "$BIN/apollo-cli" --server "$(replica_servers)" -o json cluster status; }
leader() { cluster_status | jq -r '.replicas[] | select(.leader) | .replica_id' | sed 's/^r//'; }
leader_epoch() { cluster_status | jq -r '.leases[] | select(.name == "leader") | .epoch'; }
has_leader() { [ -n "$(leader)" ]; }

# APOLLO_E2E_NATS=1 (set by ctest for the *_nats variants): every test of
# this run uses the NATS JetStream bus instead of the embedded one.
if [ -n "${APOLLO_E2E_NATS:-}" ]; then start_nats; fi

# start_orchestrator [extra args...]: on a port the kernel picks; the port
# is kept across restarts (ORCH_PORT) so agents find it again. Its HTTP
# server too (HTTP_PORT; not the shared default 7080) unless the args say
# --http-listen.
start_orchestrator() {
  local listen="127.0.0.1:${ORCH_PORT:-0}" http=()
  [[ " $* " == *" --http-listen "* ]] || http=(--http-listen "127.0.0.1:${HTTP_PORT:-0}")
  "$BIN/orchestrator" ${APOLLO_E2E_BUS:+--bus "$APOLLO_E2E_BUS"} --listen "$listen" --store "sqlite://$E2E_DIR/${STORE_FILE:-apollo.db}" "${http[@]}" "$@" \
    >>"$E2E_DIR/orchestrator.log" 2>&1 &
  ORCH_PID=$!
  for _ in $(seq 1 100); do
    local line
    line=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$E2E_DIR/orchestrator.log" | tail -n 1)
    if [ -n "$line" ] && [ -n "$(ss -ltnH "sport = :${line##*:}" 2>/dev/null)" ]; then
      ORCH_PORT=${line##*:}
      line=$(grep -oE 'HTTP on https?://127.0.0.1:[0-9]+' "$E2E_DIR/orchestrator.log" | tail -n 1)
      HTTP_PORT=${line##*:}
      return 0
    fi
    kill -0 "$ORCH_PID" 2>/dev/null || die "orchestrator exited at start"
    sleep 0.1
  done
  die "orchestrator did not start listening"
}

# start_agent NODE [extra args...]; agents dial AGENT_PORT when set (a
# fault proxy in front of the orchestrator), else the orchestrator itself,
# unless the args say --orchestrator.
# Agents reconnect within ~2 s here (shipped default: up to 30 s of jittered
# backoff), so a restarted orchestrator is rejoined in a bounded time.
# The tests' tasks run exec and write under /tmp, both off in the shipped
# config, so this one enables them. A test passing its own --config sets
# its own.
start_agent() {
  local node=$1; shift
  local cfg=()
  if [[ " $* " != *" --config "* ]]; then
    [ -f "$E2E_DIR/e2e-agent.yaml" ] ||
      printf 'reconnect: {initial_backoff_ms: 200, max_backoff_ms: 2000}\n%s\n%s\n' \
        'enabled_intents: [collect_metrics, ensure_file, exec, noop, sleep]' \
        'ensure_file: {allowed_dirs: [/tmp]}' >"$E2E_DIR/e2e-agent.yaml"
    cfg=(--config "$E2E_DIR/e2e-agent.yaml")
  fi
  local center=(--orchestrator "127.0.0.1:${AGENT_PORT:-$ORCH_PORT}")
  [[ " $* " != *" --orchestrator "* ]] || center=()  # the caller's (e.g. a list of replicas)
  "$BIN/edge-agent" --node-id "$node" "${center[@]}" \
    --state-dir "$E2E_DIR/$node" "${cfg[@]}" "$@" >>"$E2E_DIR/$node.log" 2>&1 &
  AGENT_PID[$node]=$!
}

kill_agent() { kill -9 "${AGENT_PID[$1]}" 2>/dev/null; wait "${AGENT_PID[$1]}" 2>/dev/null; }
kill_orchestrator() { kill -9 "$ORCH_PID" 2>/dev/null; wait "$ORCH_PID" 2>/dev/null; }

# wait_until SECONDS DESCRIPTION COMMAND...: polls every 0.1 s.
wait_until() {
  local limit=$1 what=$2; shift 2
  local n=$((limit * 10))
  for _ in $(seq 1 "$n"); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.1
  done
  die "timed out after ${limit}s waiting for: $what"
}

node_connected() {
  [ "$(cli -o json node list | jq -r --arg n "$1" '.nodes[] | select(.node_id == $n) | .connected')" = true ]
}
all_connected() { local n; for n in "$@"; do node_connected "$n" || return 1; done; }
task_status_is() { [ "$(cli -o json task status --task-id "$1" | jq -r .status)" = "$2" ]; }
node_status() { cli -o json task status --task-id "$1" | jq -r --arg n "$2" '.nodes[] | select(.node_id == $n) | .status'; }
node_status_is() { [ "$(node_status "$1" "$2")" = "$3" ]; }

# write_task FILE ID INTENT SELECTOR PARAMS_JSON [extra yaml lines]
write_task() {
  local file=$1 id=$2 intent=$3 selector=$4 params=$5; shift 5
  {
    echo "task_id: $id"
    echo "intent: $intent"
    echo "target_selector: $selector"
    echo "timeout: 60"
    echo "retry_policy: {max_retries: 2, initial_interval: 1, max_interval: 2, backoff: fixed}"
    echo "params: $params"
    for l in "$@"; do echo "$l"; done
  } >"$file"
}

# gate_sh FILE: a shell line for an exec task that waits (at most 25 s) until
# the test creates FILE, so the task ends after the change under test,
# however slow the machine. No single quotes: it goes inside argv's '...'.
gate_sh() { echo "i=0; while [ ! -e $1 ] && [ \$i -lt 250 ]; do sleep 0.1; i=\$((i+1)); done"; }

# start_proxy: a fault-injecting proxy in front of the orchestrator; agents
# started afterwards dial it. cut_network / heal_network partition them.
start_proxy() {
  python3 "$(dirname "${BASH_SOURCE[0]}")/../tools/faultproxy.py" "$ORCH_PORT" "$E2E_DIR/proxy.port" \
    >>"$E2E_DIR/proxy.log" 2>&1 &
  PROXY_PID=$!
  EXTRA_PIDS+=("$PROXY_PID")
  wait_until 10 "proxy listening" test -s "$E2E_DIR/proxy.port"
  AGENT_PORT=$(cat "$E2E_DIR/proxy.port")
}
cut_network() { kill -USR1 "$PROXY_PID"; }
heal_network() { kill -USR2 "$PROXY_PID"; }
log_has() { grep -q "$2" "$E2E_DIR/$1.log"; }

finish() {
  if [ "$FAILURES" -eq 0 ]; then echo "all checks passed"; exit 0; fi
  dump_logs
  echo "$FAILURES check(s) failed"
  exit 1
}
