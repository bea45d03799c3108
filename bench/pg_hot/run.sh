#!/bin/bash
# What a HOT-able task_nodes row would save, and what a narrow table of due
# times would cost (issue 18; BENCHMARKS.md, "where a PostgreSQL throughput
# run's CPU goes"). On a throwaway PostgreSQL 15 (stock durable settings),
# 100,000 task rows on 100 nodes, each taken through the events' two steps
# (DISPATCHED -> RUNNING with an execution deadline, RUNNING -> SUCCEEDED
# with none) in transactions of 500 rows, three ways:
#   a: task_nodes as the store has it (4 indexes, two on columns that change);
#   c: the same row with only its two key indexes and fillfactor 80 (updates
#      may be HOT), due times kept nowhere: the saving's upper bound;
#   b: c plus a narrow table of the live rows' due times, kept in step.
# Usage: bench/pg_hot/run.sh   (as root: initdb runs as the postgres user)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
dir=$(mktemp -d); chown postgres "$dir"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
runuser -u postgres -- "$PGBIN/initdb" -D "$dir/data" -U postgres -A trust >/dev/null
runuser -u postgres -- "$PGBIN/pg_ctl" -D "$dir/data" -l "$dir/log" -w \
  -o "-p $port -k $dir -c listen_addresses=127.0.0.1" start >/dev/null
trap 'runuser -u postgres -- "$PGBIN/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null; rm -rf "$dir"' EXIT
P="psql -h 127.0.0.1 -p $port -U postgres -qAt -v ON_ERROR_STOP=1"

batch() {  # $1 a|b|c, $2 first task, $3 last task
  local r="unnest(ARRAY(SELECT generate_series($2,$3)::bigint)) u(r)"
  local t=tn_a; [ "$1" = a ] || t=tn_b
  local k="t.task_ref = u.r AND t.node_ref = u.r % 100"
  echo "BEGIN; UPDATE $t t SET state = 2, version = t.version + 1, updated_at = 5, due_kind = 3, due_at = 9000 + t.task_ref FROM $r WHERE $k;"
  [ "$1" = b ] && echo "UPDATE due_b t SET due_kind = 3, due_at = 9000 + t.task_ref, state = 2 FROM $r WHERE $k;"
  echo "COMMIT; BEGIN; UPDATE $t t SET state = 3, version = t.version + 1, updated_at = 6, due_kind = 0, due_at = NULL FROM $r WHERE $k;"
  [ "$1" = b ] && echo "DELETE FROM due_b t USING $r WHERE $k;"
  echo "COMMIT;"
}

run() {  # $1 a|b|c: fresh tables, then 200 batches of 500 tasks
  $P -f "$here/setup.sql" >/dev/null
  local t0; t0=$(date +%s%N)
  for b in $(seq 0 199); do batch "$1" $((b * 500 + 1)) $((b * 500 + 500)); done | $P >/dev/null
  local ms=$((($(date +%s%N) - t0) / 1000000))
  local t=tn_a; [ "$1" = a ] || t=tn_b
  echo "$1: $ms ms for 100,000 tasks x 2 steps; updates|HOT $($P -c "SELECT n_tup_upd || '|' || n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = '$t'"); WAL $($P -c "SELECT pg_size_pretty(wal_bytes) FROM pg_stat_wal")"
}

for order in "a c b" "b c a"; do for w in $order; do run "$w"; done; done
