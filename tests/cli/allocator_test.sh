#!/usr/bin/env bash
# The shipped daemons run on jemalloc (issue 18): each one's malloc answers to
# jemalloc's MALLOC_CONF (stats printed at exit), not just a NEEDED entry.
# usage: allocator_test.sh BIN_DIR
set -uo pipefail
BIN="${1:?usage: allocator_test.sh BIN_DIR}"
fail=0
for tool in orchestrator edge-agent; do
  if ! readelf -d "$BIN/$tool" | grep -q 'NEEDED.*libjemalloc'; then
    echo "FAIL: $BIN/$tool does not link libjemalloc"
    fail=1
    continue
  fi
  out="$(MALLOC_CONF=stats_print:true timeout 20 "$BIN/$tool" --help 2>&1 >/dev/null)"
  if ! grep -q 'Begin jemalloc statistics' <<<"$out"; then
    echo "FAIL: $BIN/$tool links libjemalloc but its malloc is not jemalloc's"
    fail=1
    continue
  fi
  echo "ok: $tool allocates with jemalloc"
done
exit $fail
