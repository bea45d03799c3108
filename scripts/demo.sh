#!/usr/bin/env bash
# `make demo`: for now (issue 2) it shows the binaries exist and validates
# the example task files offline. The orchestrator issue turns this into the
# full demo: an orchestrator, two agents, the seed's task, a DAG.
set -euo pipefail
cd "$(dirname "$0")/.."

for b in bin/orchestrator bin/edge-agent bin/apollo-cli; do
  [ -x "$b" ] || { echo "demo: $b is missing; run 'make build'" >&2; exit 1; }
  echo "demo: $($b --version)"
done

echo "demo: validating the example task files"
for f in examples/*.yaml; do
  bin/apollo-cli task validate --file "$f"
done

echo "demo: a broken file is refused with file:line:column messages:"
if bin/apollo-cli task validate --file tests/data/bad/many_problems.yaml; then
  echo "demo: the broken file was accepted; that is a bug" >&2
  exit 1
fi
echo "demo: ok"
