#!/usr/bin/env bash
# make bench-compare: Apollo-11's scenario 1 (throughput) and 3 (latency,
# one agent) and the two peers of ../shared/peers (Celery 5 + Redis, BullMQ +
# Redis), back to back on this machine, then the ratios (issue 9).
#
# Usage: scripts/bench-compare.sh [BIN_DIR]      (default: <repo>/bin)
# Env:   TASKS   apollo-bench --tasks (default 50000)
#        PEERS   folder holding celery/ and bullmq/ (default <repo>/../shared/peers, or
#                ../shared/peers beside the local repository this one was cloned from)
#        N, W, CONCURRENCY, PROBE, INFLIGHT  passed through to the peers' run.sh
# The peers install their own dependencies on first use (apt redis-server,
# python3-celery; npm ci for bullmq). Every run is bounded by `timeout`; each
# starts and stops its own servers. Exit code: non-zero if any run failed.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="${1:-$ROOT/bin}"
# The peers sit beside the main checkout (../shared/peers). A clone made
# elsewhere (e.g. a fresh clone in /tmp) finds them beside the repository it
# was cloned from, when that is a local path.
if [ -z "${PEERS:-}" ]; then
  PEERS="$ROOT/../shared/peers"
  if [ ! -d "$PEERS" ]; then
    ORIGIN="$(git -C "$ROOT" remote get-url origin 2>/dev/null || true)"
    if [ -n "$ORIGIN" ] && [ -d "$ORIGIN/../shared/peers" ]; then
      PEERS="$(cd "$ORIGIN/../shared/peers" && pwd)"
    fi
  fi
fi
if [ ! -d "$PEERS/celery" ] || [ ! -d "$PEERS/bullmq" ]; then
  echo "bench-compare: no peers at $PEERS (expected celery/ and bullmq/ there); set PEERS=/path/to/shared/peers" >&2
  exit 2
fi
OUT="$(mktemp -d /tmp/apollo-bench-compare.XXXXXX)"
trap 'rm -rf "$OUT"' EXIT
FAILED=0

run() {  # run NAME SECONDS COMMAND...
  local name=$1 secs=$2; shift 2
  echo "== $name: $*"
  if ! timeout "$secs" "$@" 2>&1 | tee "$OUT/$name.txt"; then
    echo "!! $name failed"
    FAILED=1
  fi
}

date -u +"bench-compare %Y-%m-%dT%H:%M:%SZ on $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
run apollo 1800 "$BIN/apollo-bench" --scenarios throughput,latency --latency-agents 1 \
  --tasks "${TASKS:-50000}"
run celery 600 bash "$PEERS/celery/run.sh"
run bullmq 600 bash "$PEERS/bullmq/run.sh"
# The PostgreSQL row (issue 18): apollo on a throwaway PostgreSQL 15 with
# stock durable settings, against Graphile Worker on the same settings,
# each at its best: Graphile with its batching on for throughput, with its
# defaults (the lower-latency configuration) for latency.
PG_TASKS="${PG_TASKS:-20000}"
if [ -d "$PEERS/graphile" ]; then
  run apollo_pg 1800 "$BIN/apollo-bench" --pg --scenarios throughput,latency --latency-agents 1 \
    --tasks "$PG_TASKS"
  run graphile_batched 900 env N="$PG_TASKS" GW_LOCAL_QUEUE=51 GW_COMPLETE_BATCH_DELAY_MS=0 \
    bash "$PEERS/graphile/run.sh"
  run graphile 900 env N="$PG_TASKS" bash "$PEERS/graphile/run.sh"
else
  echo "!! no $PEERS/graphile: the PostgreSQL row is skipped"
  FAILED=1
fi

# Figures: apollo from its JSON lines, the peers from their "RESULT" lines.
json() { grep "\"scenario\":\"$1\"" "$OUT/${3:-apollo}.txt" | jq -r ".$2 // empty" 2>/dev/null; }
field() { grep -h "RESULT $2" "$OUT/$1.txt" 2>/dev/null | grep -o "$3=[0-9.]*" | head -n 1 | cut -d= -f2; }
A_TP=$(json throughput tasks_per_s)
A_P50=$(json latency_1_agents p50_ms)
A_P99=$(json latency_1_agents p99_ms)
C_TP=$(field celery throughput throughput_tasks_per_s)
C_P50=$(field celery latency p50)
C_P99=$(field celery latency p99)
B_TP=$(field bullmq throughput throughput_jobs_per_s)
B_P50=$(field bullmq latency p50)
B_P99=$(field bullmq latency p99)

# ratio A B: A/B with two decimals, or "-" when either is missing.
ratio() { if [ -n "$1" ] && [ -n "$2" ]; then awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; else echo "-"; fi; }

echo
printf '%-28s %12s %12s %12s\n' "" "apollo-11" "celery" "bullmq"
printf '%-28s %12s %12s %12s\n' "tasks/s (end to end)" "${A_TP:--}" "${C_TP:--}" "${B_TP:--}"
printf '%-28s %12s %12s %12s\n' "latency p50 ms" "${A_P50:--}" "${C_P50:--}" "${B_P50:--}"
printf '%-28s %12s %12s %12s\n' "latency p99 ms" "${A_P99:--}" "${C_P99:--}" "${B_P99:--}"
echo
echo "throughput apollo/celery: $(ratio "$A_TP" "$C_TP")x (target >= 10)"
echo "throughput apollo/bullmq: $(ratio "$A_TP" "$B_TP")x (target >= 1.2)"
echo "latency p50 apollo/celery: $(ratio "$A_P50" "$C_P50")x, apollo/bullmq: $(ratio "$A_P50" "$B_P50")x (lower is better)"
echo "latency p99 apollo/celery: $(ratio "$A_P99" "$C_P99")x, apollo/bullmq: $(ratio "$A_P99" "$B_P99")x (lower is better)"
PG_TP=$(json throughput tasks_per_s apollo_pg)
PG_P50=$(json latency_1_agents p50_ms apollo_pg)
PG_P99=$(json latency_1_agents p99_ms apollo_pg)
GB_TP=$(field graphile_batched throughput throughput_jobs_per_s)
GD_TP=$(field graphile throughput throughput_jobs_per_s)
GD_P50=$(field graphile latency p50)
GD_P99=$(field graphile latency p99)
echo
printf '%-28s %12s %18s %18s\n' "PostgreSQL 15 (durable)" "apollo-11" "graphile batched" "graphile defaults"
printf '%-28s %12s %18s %18s\n' "tasks/s (end to end)" "${PG_TP:--}" "${GB_TP:--}" "${GD_TP:--}"
printf '%-28s %12s %18s %18s\n' "latency p50 ms" "${PG_P50:--}" "-" "${GD_P50:--}"
printf '%-28s %12s %18s %18s\n' "latency p99 ms" "${PG_P99:--}" "-" "${GD_P99:--}"
echo
echo "throughput apollo-pg/graphile: $(ratio "$PG_TP" "$GB_TP")x (target >= 1.0, against its batching)"
echo "latency p50 apollo-pg/graphile: $(ratio "$PG_P50" "$GD_P50")x (target <= 2, against its defaults)"
echo
echo "note: apollo-11 fsyncs every task at the agent (WAL) and in the store (SQLite synchronous=FULL);"
echo "      the peers run Redis with appendfsync everysec (up to ~1 s of acknowledged work lost on a host crash)."
exit "$FAILED"
