#!/usr/bin/env bash
# The agent protocol version in Hello and Welcome (issue 22), with real
# processes on loopback:
#  1. the orchestrator refuses a Hello in a protocol it cannot speak with
#     FAILED_PRECONDITION, one line saying which side to upgrade, and a
#     protocol_refused alert; it welcomes protocol 1 and 0 (an agent from
#     before the field) and says its own protocol in the Welcome;
#  2. a real edge-agent refuses a center whose Welcome names a protocol it
#     cannot speak, and says so once however often it retries;
#  3. a real edge-agent refused by a center (FAILED_PRECONDITION) says so
#     once, not at every retry;
#  4. --version of the three binaries names the release, the commit and
#     the protocol.
source "$(dirname "$0")/lib.sh" "$1"
cd "$(dirname "$0")/../.."
TOOL=$BIN/apollo-e2e-tool
[ -x "$TOOL" ] || die "$TOOL is missing"

start_orchestrator
out=$("$TOOL" hello "127.0.0.1:$ORCH_PORT" future-node 99) || fail "hello 99 did not run"
[ "$(jq -r .code <<<"$out")" = 9 ] || fail "protocol 99: expected FAILED_PRECONDITION (9), got $out"
jq -r .message <<<"$out" | grep -q 'the agent speaks agent protocol 99, this orchestrator .* speaks 1\.\.1: upgrade this orchestrator' ||
  fail "protocol 99: message: $out"
for p in 1 0; do
  out=$("$TOOL" hello "127.0.0.1:$ORCH_PORT" "node-p$p" "$p") || fail "hello $p did not run"
  [ "$(jq -c '[.code, .welcome_protocol]' <<<"$out")" = '[0,1]' ] ||
    fail "protocol $p: expected a Welcome saying protocol 1, got $out"
done
alerts=$(cli -o json alert list --kind protocol_refused)
[ "$(jq '.alerts | length' <<<"$alerts")" = 1 ] || fail "expected one protocol_refused alert: $alerts"
jq -r '.alerts[0].message' <<<"$alerts" | grep -q 'agent protocol 99' || fail "alert text: $alerts"
[ "$(grep -c 'agent protocol 99' "$E2E_DIR/orchestrator.log")" -ge 1 ] ||
  fail "the orchestrator's log does not name the refused protocol"
check_pass "the center refuses protocol 99, welcomes 1 and 0, raises one alert"

listening() { [ -n "$(ss -ltnH "sport = :$1")" ]; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# fake_center_agent MODE NODE: a fake center in MODE for 4 s, a real agent
# retrying every 200-500 ms against it; leaves the agent's log.
fake_center_agent() {
  local port; port=$(free_port)
  "$TOOL" fake-center "$port" "$1" 4 >"$E2E_DIR/fake-$2.out" 2>&1 &
  local fake=$!
  EXTRA_PIDS+=("$fake")
  wait_until 10 "fake center listening" listening "$port"
  printf 'reconnect: {initial_backoff_ms: 200, max_backoff_ms: 500}\n' >"$E2E_DIR/$2.yaml"
  "$BIN/edge-agent" --node-id "$2" --orchestrator "127.0.0.1:$port" --state-dir "$E2E_DIR/$2" \
    --config "$E2E_DIR/$2.yaml" >>"$E2E_DIR/$2.log" 2>&1 &
  AGENT_PID[$2]=$!
  wait "$fake"
  kill_agent "$2"
  sessions=$(jq -r .sessions "$E2E_DIR/fake-$2.out")
}

fake_center_agent welcome:99 agent-old
[ "${sessions:-0}" -ge 3 ] || fail "the agent tried only ${sessions:-0} time(s) in 4 s"
n=$(grep -c "refusing the center's session: the orchestrator speaks agent protocol 99, this edge-agent .* speaks 1\.\.1: upgrade this edge-agent" "$E2E_DIR/agent-old.log")
[ "$n" = 1 ] || fail "expected the refusal once in the agent's log, found $n"
grep -q 'connected to' "$E2E_DIR/agent-old.log" && fail "the agent went on with a center it cannot speak to"
check_pass "an agent refuses a center speaking protocol 99, and says it once ($sessions tries)"

fake_center_agent refuse agent-refused
[ "${sessions:-0}" -ge 3 ] || fail "the agent tried only ${sessions:-0} time(s) in 4 s"
n=$(grep -c 'the center refused this agent: fake center: agent protocol 1 refused' "$E2E_DIR/agent-refused.log")
[ "$n" = 1 ] || fail "expected the center's refusal once in the agent's log, found $n"
check_pass "an agent refused by the center says so once ($sessions tries)"

for b in orchestrator edge-agent apollo-cli; do
  v=$("$BIN/$b" --version)
  [[ "$v" =~ ^$b\ [0-9]+\.[0-9]+\.[0-9]+\ \(commit\ ([0-9a-f]{12}(-dirty)?|unknown),\ agent\ protocol\ 1\)$ ]] ||
    fail "$b --version: '$v'"
done
check_pass "--version names the release, the commit and the protocol"
finish
