#!/usr/bin/env bash
# The state-store benchmark against both backends (issue 3):
#   1. SQLite (synchronous=FULL) in a temp dir,
#   2. PostgreSQL 15: a throwaway server started here (the same recipe as
#      src/store/testing/pg_server.cc: initdb in a temp dir as the `postgres`
#      user, a free loopback port, stock durable settings), one fresh database
#      per case, stopped again on exit whatever happens.
# Prints store_bench's lines, one per case:
#   store=sqlite batch=100 events_per_s=... p50_ms=... p99_ms=... ...
#   store=postgresql batch=100 events_per_s=... p50_ms=... p99_ms=... ...
#
# usage: scripts/bench-store.sh [store_bench args, e.g. --events 20000]
# env:   STORE_BENCH   the binary (default build/release/bench/store_bench)
#        CASES         batch:inflight list (default 1:1,100:1,1000:1,1:16,100:4)
#        BACKENDS      "sqlite postgres" (default both)
#        APOLLO_PG_BIN PostgreSQL binaries (default /usr/lib/postgresql/15/bin)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BENCH=${STORE_BENCH:-$ROOT/build/release/bench/store_bench}
CASES=${CASES:-1:1,100:1,1000:1,1:16,100:4}
BACKENDS=${BACKENDS:-sqlite postgres}
PGBIN=${APOLLO_PG_BIN:-/usr/lib/postgresql/15/bin}

if [ ! -x "$BENCH" ]; then
  echo "bench-store: $BENCH not built (make build, or set STORE_BENCH)" >&2
  exit 1
fi

as_pg() {  # initdb refuses root: run the server tools as `postgres` then
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

PGDIR=""
stop_pg() {
  if [ -n "$PGDIR" ]; then
    as_pg "$PGBIN/pg_ctl" -D "$PGDIR/data" -m fast -w -t 60 stop >/dev/null 2>&1 || true
    rm -rf "$PGDIR"
    PGDIR=""
  fi
}
trap stop_pg EXIT INT TERM

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start_pg() {
  PGDIR=$(mktemp -d /tmp/apollo-pg-bench-XXXXXX)
  if [ "$(id -u)" -eq 0 ]; then chown postgres "$PGDIR"; fi
  as_pg "$PGBIN/initdb" -D "$PGDIR/data" -A trust -U apollo -E UTF8 --no-instructions \
    >"$PGDIR/initdb.log" 2>&1 || { cat "$PGDIR/initdb.log" >&2; return 1; }
  PGPORT=$(free_port)
  as_pg "$PGBIN/pg_ctl" -D "$PGDIR/data" -l "$PGDIR/server.log" -w -t 60 \
    -o "-p $PGPORT -k $PGDIR -c listen_addresses=127.0.0.1" start >/dev/null \
    || { cat "$PGDIR/server.log" >&2; return 1; }
}

case_names() {  # "100:4" -> "b100i4", as store_bench names its {case}
  local IFS=,
  for c in $CASES; do
    local batch=${c%%:*} inflight=1
    [[ $c == *:* ]] && inflight=${c#*:}
    echo "b${batch}i${inflight}"
  done
}

for backend in $BACKENDS; do
  case $backend in
    sqlite)
      "$BENCH" --cases "$CASES" "$@"
      ;;
    postgres)
      start_pg
      for name in $(case_names); do
        psql -q -h 127.0.0.1 -p "$PGPORT" -U apollo -d postgres \
          -c "CREATE DATABASE bench_$name" >/dev/null
      done
      "$BENCH" --url "postgresql://apollo@127.0.0.1:$PGPORT/bench_{case}" --cases "$CASES" "$@"
      stop_pg
      ;;
    *)
      echo "bench-store: unknown backend $backend" >&2
      exit 2
      ;;
  esac
done
