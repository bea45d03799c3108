#!/usr/bin/env bash
# make bench-replicas: several orchestrators on PostgreSQL 15 + NATS JetStream
# (docs/replicas.md), in one sitting on one throwaway PostgreSQL and one
# nats-server:
#  1. throughput: apollo-bench (--tasks, 100 simulated agents) against the
#     leader of 1 replica, then of 3 replicas, alternated ROUNDS times, each
#     run on a fresh database;
#  2. failover: KILLS times, kill -9 the leader of 3 replicas serving two real
#     agents; seconds from the kill until a task submitted right after it
#     (through a surviving replica) is SUCCEEDED; the killed replica is
#     started again as a follower before the next kill.
# Prints one line per run and a summary; exit 1 when a run failed.
#
#   bash scripts/bench-replicas.sh BIN_DIR [TASKS] [ROUNDS] [KILLS]
set -uo pipefail
BIN=$(cd "${1:?bin dir}" && pwd)
TASKS=${2:-10000}
ROUNDS=${3:-2}
KILLS=${4:-20}
cd "$(dirname "$0")/.."
source tests/e2e/lib.sh "$BIN"
start_postgres
start_nats

cat >"$E2E_DIR/orchestrator.yaml" <<YAML
ack_timeout: 2
dispatch_interval: 200ms
YAML
stop_replicas() {
  local r
  for r in "${!RPID[@]}"; do kill "${RPID[$r]}" 2>/dev/null; wait "${RPID[$r]}" 2>/dev/null; done
  RPID=()
}
cli() { "$BIN/apollo-cli" --server "$(replica_servers)" "$@"; }
PG_PORT=${PG_URL#*@127.0.0.1:}
PG_PORT=${PG_PORT%%/*}
db_url() { echo "postgresql://apollo@127.0.0.1:$PG_PORT/$1"; }
new_db() { pg_run psql -h 127.0.0.1 -p "$PG_PORT" -U apollo -d postgres -qc "CREATE DATABASE $1" >/dev/null || die "createdb $1"; }

echo "== throughput: $TASKS tasks over 100 agents, leader of 1 vs 3 replicas, $ROUNDS rounds"
declare -A TP=()
run=0
for round in $(seq 1 "$ROUNDS"); do
  for n in 1 3; do
    run=$((run + 1))
    new_db "tp$run"
    RPORT=()
    for r in $(seq 1 "$n"); do start_replica "$r" "$(db_url "tp$run")"; done
    wait_until 20 "a leader" has_leader
    l=$(leader)
    out=$("$BIN/apollo-bench" --server "127.0.0.1:${RPORT[$l]}" --scenarios throughput \
      --tasks "$TASKS" --timeout 600 2>>"$E2E_DIR/bench.log")
    tp=$(grep '"scenario": *"throughput"' <<<"$out" | jq -r .tasks_per_s)
    [ -n "$tp" ] && [ "$tp" != null ] || { echo "$out" | tail -n 5; die "throughput run $run ($n replicas) failed"; }
    echo "round $round, $n replica(s): $tp tasks/s"
    TP[$n]="${TP[$n]:-} $tp"
    stop_replicas
  done
done
for n in 1 3; do
  echo "throughput $n replica(s):${TP[$n]} (median $(tr ' ' '\n' <<<"${TP[$n]}" | sed '/^$/d' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'))"
done

echo "== failover: $KILLS kills of the leader of 3 replicas, 2 agents"
new_db failover
RPORT=()
for r in 1 2 3; do start_replica "$r" "$(db_url failover)"; done
wait_until 20 "a leader" has_leader
for n in 1 2; do start_agent "a$n" --orchestrator "$(replica_servers)"; done
wait_until 30 "agents connected" all_connected a1 a2
: >"$E2E_DIR/failover"
for k in $(seq 1 "$KILLS"); do
  l=$(leader)
  [ -n "$l" ] || die "no leader before kill $k"
  kill -9 "${RPID[$l]}"
  wait "${RPID[$l]}" 2>/dev/null
  t0=$(date +%s.%N)
  write_task "$E2E_DIR/probe$k.yaml" "probe-$k" noop "{type: nodes, nodes: [a$(( k % 2 + 1 ))]}" "{}"
  cli task submit --file "$E2E_DIR/probe$k.yaml" >/dev/null || die "submit probe-$k"
  wait_until 60 "probe-$k SUCCEEDED" task_status_is "probe-$k" SUCCEEDED
  dt=$(python3 -c "import time; print(f'{time.time() - $t0:.2f}')")
  echo "kill $k: r$l killed, new leader r$(leader), dispatch resumed after ${dt}s"
  echo "$dt" >>"$E2E_DIR/failover"
  start_replica "$l" "$(db_url failover)"
done
sort -n "$E2E_DIR/failover" | awk '{a[NR]=$1} END {
  printf "failover over %d kills (lease 5 s): min %.2f s, median %.2f s, p90 %.2f s, max %.2f s\n",
    NR, a[1], a[int((NR+1)/2)], a[int(NR*0.9+0.5)], a[NR] }'
finish
