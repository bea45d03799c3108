#!/usr/bin/env bash
# The original write-up's three machines (docs/operations.md, "A three-machine
# fleet"), as three network namespaces on this host, run from the unpacked
# .debs: `orch` (orchestrator + SQLite store) and two edge nodes, each edge
# linked to orch by its own veth pair. Each machine resolves the center by
# name (orch.apollo.test, /etc/netns/NS/hosts). Mutual TLS with a fleet CA,
# operator tokens (acl bootstrap, then an operator token), and the packaged
# /etc/apollo/*.yaml with only the listen address, the center's host name,
# node ids and certificate paths changed; state paths are given as flags
# (--store, --state-dir), since nothing is installed under /var/lib here.
# The seed's task file then runs on both edge nodes.
#
# Usage: three_machines.sh ROOT WORKDIR   (ROOT: the .debs unpacked; needs root)
set -uo pipefail
R=${1:?unpacked root}
T=${2:?work dir}
cd "$(dirname "$0")/../.."
TAG=ap$$
NS_O=${TAG}o NS_A=${TAG}a NS_B=${TAG}b
PIDS=()
FAILURES=0
fail() { echo "FAIL: $*"; FAILURES=$((FAILURES + 1)); }
die() { fail "$*"; for f in "$T"/ns-*.log; do [ -f "$f" ] && { echo "--- $f"; tail -20 "$f"; }; done; exit 1; }
cleanup() {
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
  wait 2>/dev/null
  for ns in "$NS_O" "$NS_A" "$NS_B"; do ip netns del "$ns" 2>/dev/null; rm -rf "/etc/netns/$ns"; done
}
trap cleanup EXIT
[ "$(id -u)" = 0 ] || die "network namespaces need root"

# orch <-> edge-1 on 10.98.1.0/30, orch <-> edge-2 on 10.98.2.0/30.
for ns in "$NS_O" "$NS_A" "$NS_B"; do ip netns add "$ns" || die "ip netns add $ns"; done
link() {  # link N EDGE_NS
  ip link add "${TAG}x$1" type veth peer name "${TAG}y$1" || die "veth $1"
  ip link set "${TAG}x$1" netns "$NS_O"
  ip link set "${TAG}y$1" netns "$2"
  ip -n "$NS_O" addr add "10.98.$1.1/30" dev "${TAG}x$1"
  ip -n "$2" addr add "10.98.$1.2/30" dev "${TAG}y$1"
  ip -n "$NS_O" link set "${TAG}x$1" up
  ip -n "$2" link set "${TAG}y$1" up
  mkdir -p "/etc/netns/$2"
  printf '127.0.0.1 localhost\n10.98.%s.1 orch.apollo.test\n' "$1" >"/etc/netns/$2/hosts"
}
link 1 "$NS_A"
link 2 "$NS_B"
for ns in "$NS_O" "$NS_A" "$NS_B"; do ip -n "$ns" link set lo up; done
ip netns exec "$NS_A" getent hosts orch.apollo.test | grep -q "^10.98.1.1 " || die "edge-1 does not resolve orch.apollo.test"

# Certificates, made on the "operator's workstation" (this host).
CLI=$R/usr/bin/apollo-cli
P=$T/pki
"$CLI" tls ca create --dir "$P" >/dev/null || die "tls ca"
"$CLI" tls cert create --dir "$P" --server --host orch.apollo.test >/dev/null || die "server cert"
for n in edge-1 edge-2; do "$CLI" tls cert create --dir "$P" --node $n >/dev/null || die "cert $n"; done
"$CLI" tls cert create --dir "$P" --client --name alice >/dev/null || die "client cert"

# The packaged configs, edited as docs/operations.md says.
cfg() { cp "$R/etc/apollo/$1" "$2"; }
cfg orchestrator.yaml "$T/orchestrator.yaml"
perl -0pi -e "s|^listen: 127.0.0.1:7011\$|listen: 0.0.0.0:7011|m;
  s|^# tls:\n#   cert: /etc/apollo/tls/server.pem\n#   key: /etc/apollo/tls/server-key.pem     # mode 0600\n#   ca: /etc/apollo/tls/ca.pem|tls:\n  cert: $P/server.pem\n  key: $P/server-key.pem\n  ca: $P/ca.pem|m" \
  "$T/orchestrator.yaml"
grep -q '^  cert: ' "$T/orchestrator.yaml" && grep -q '^listen: 0.0.0.0:7011$' "$T/orchestrator.yaml" ||
  die "the packaged orchestrator.yaml no longer has the lines operations.md tells people to edit"
for n in edge-1 edge-2; do
  cfg edge-agent.yaml "$T/$n.yaml"
  perl -0pi -e "s|^node_id: edge-1\$|node_id: $n|m; s|^orchestrator: 127.0.0.1:7011\$|orchestrator: orch.apollo.test:7011|m;
    s|^# tls:\n#   cert: /etc/apollo/tls/edge-1.pem\n#   key: /etc/apollo/tls/edge-1-key.pem     # mode 0600\n#   ca: /etc/apollo/tls/ca.pem|tls:\n  cert: $P/$n.pem\n  key: $P/$n-key.pem\n  ca: $P/ca.pem|m" \
    "$T/$n.yaml"
  grep -q "^node_id: $n\$" "$T/$n.yaml" && grep -q '^  cert: ' "$T/$n.yaml" &&
    grep -q '^orchestrator: orch.apollo.test:7011$' "$T/$n.yaml" ||
    die "the packaged edge-agent.yaml no longer has the lines operations.md tells people to edit"
done
diff <(sed -n 's/^labels: \(.*\)/\1/p' "$T/edge-1.yaml") <(echo '{role: worker}  # e.g. {role: worker, zone: eu-west-1}') >/dev/null ||
  fail "the packaged edge-agent.yaml does not label nodes role=worker"

ip netns exec "$NS_O" "$R/usr/bin/apollo-orchestrator" --config "$T/orchestrator.yaml" \
  --store "sqlite://$T/orch.db" >"$T/ns-orchestrator.log" 2>&1 &
PIDS+=($!)
for i in $(seq 1 100); do grep -q 'listening on' "$T/ns-orchestrator.log" && break; sleep 0.1; done
grep -q 'listening on' "$T/ns-orchestrator.log" || die "the orchestrator did not start"
ip netns exec "$NS_A" "$R/usr/bin/apollo-edge-agent" --config "$T/edge-1.yaml" --state-dir "$T/edge-1" \
  >"$T/ns-edge-1.log" 2>&1 &
PIDS+=($!)
ip netns exec "$NS_B" "$R/usr/bin/apollo-edge-agent" --config "$T/edge-2.yaml" --state-dir "$T/edge-2" \
  >"$T/ns-edge-2.log" 2>&1 &
PIDS+=($!)

# The operator works from edge-1's network (any machine that reaches the center).
export APOLLO_SERVER=orch.apollo.test:7011 APOLLO_TLS_CA=$P/ca.pem APOLLO_TLS_CERT=$P/alice.pem \
  APOLLO_TLS_KEY=$P/alice-key.pem
op() { ip netns exec "$NS_A" "$CLI" "$@"; }
admin=$(op -o json acl bootstrap | jq -r .token) || die "acl bootstrap"
[ -n "$admin" ] && [ "$admin" != null ] || die "acl bootstrap gave no token"
op node list >/dev/null 2>"$T/noauth.err" && fail "a call without a token was accepted"
export APOLLO_TOKEN=$admin
APOLLO_TOKEN=$(op -o json token create --name alice --role operator --ttl 1h | jq -r .token) ||
  die "token create"
connected() { [ "$(op -o json node list | jq '[.nodes[] | select(.connected)] | length')" = 2 ]; }
for i in $(seq 1 150); do connected 2>/dev/null && break; sleep 0.2; done
connected || die "edge-1 and edge-2 did not both connect over TLS: $(op node list 2>&1)"
op task submit --file examples/collect_metrics.yaml >"$T/submit.out" 2>&1 || die "submit: $(cat "$T/submit.out")"
TASK=collect-metrics-1712345678-b7e2
both() {
  [ "$(op -o json task status --task-id $TASK | jq -c '[.status, ([.nodes[].node_id] | sort)]')" = \
    '["SUCCEEDED",["edge-1","edge-2"]]' ]
}
for i in $(seq 1 150); do both 2>/dev/null && break; sleep 0.2; done
both || die "the seed's task did not succeed on edge-1 and edge-2: $(op task status --task-id $TASK 2>&1)"
[ $FAILURES = 0 ] && echo "ok   three machines in network namespaces (TLS, tokens, packaged configs): the seed's task succeeded on edge-1 and edge-2"
[ $FAILURES = 0 ]
