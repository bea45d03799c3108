#!/usr/bin/env bash
# Retention soak (issue 16): apollo-bench's soak scenario — a steady submit
# rate for SOAK_SECONDS (default 600) with a 1-minute retention — on SQLite,
# then on a throwaway PostgreSQL 15 server. Each run prints store size and
# row counts every 30 s, and the throughput of a burst on the fresh store
# against one while retention purges (burst_ratio).
#
#   make bench-retention                      # 10 minutes per backend
#   SOAK_SECONDS=120 make bench-retention     # a quick look
set -euo pipefail
BIN=${1:?bin dir}
SOAK_SECONDS=${SOAK_SECONDS:-600}
SOAK_RATE=${SOAK_RATE:-200}
BACKENDS=${BACKENDS:-"sqlite postgresql"}
dir=$(mktemp -d /tmp/apollo-soak.XXXXXX)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/orchestrator.yaml" <<'YAML'
retention:
  history: 1m
  dedup: 1m
  alerts: 1m
  dead_letters: 1m
  interval: 5s
  batch: 500
YAML
for backend in $BACKENDS; do
  extra=()
  [ "$backend" = postgresql ] && extra=(--pg)
  echo "== soak on $backend: ${SOAK_RATE} tasks/s for ${SOAK_SECONDS}s, retention 1m"
  "$BIN/apollo-bench" --scenarios soak --orchestrator-config "$dir/orchestrator.yaml" \
    --soak-seconds "$SOAK_SECONDS" --soak-rate "$SOAK_RATE" "${extra[@]}"
done
