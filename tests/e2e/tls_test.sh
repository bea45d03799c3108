#!/usr/bin/env bash
# Mutual TLS with node identity, with real processes: certificates made by
# apollo-cli tls; an orchestrator that refuses plaintext peers; an agent
# holding worker-1's certificate that says Hello as worker-2 is refused
# before it can touch worker-2 (alert impersonation_refused; worker-2's
# session, row and event sequence unchanged, its task completes); correct
# agents and CLI work end to end. Operator tokens (on by default with TLS):
# no token is UNAUTHENTICATED, a viewer reads but cannot submit, an operator
# submits and cancels, a revoked token is refused, and the audit trail
# lists who did what, in order. Also: a non-loopback --listen without TLS
# refuses to start unless --insecure.
source "$(dirname "$0")/lib.sh" "$1"
cd "$(dirname "$0")/../.."

PKI="$E2E_DIR/pki"
# gRPC logs refused handshakes at ERROR (its default); check 3 counts them.
export GRPC_VERBOSITY=ERROR
tls_cli() { "$BIN/apollo-cli" "$@"; }

# 1. The fleet's certificates, as an operator makes them.
tls_cli tls ca create --dir "$PKI" >/dev/null || die "tls ca create failed"
tls_cli tls cert create --dir "$PKI" --server >/dev/null || die "server certificate"
for n in worker-1 worker-2; do
  tls_cli tls cert create --dir "$PKI" --node "$n" >/dev/null || die "node certificate $n"
done
tls_cli tls cert create --dir "$PKI" --client --name operator >/dev/null || die "client certificate"
for k in ca server worker-1 worker-2 operator; do
  [ "$(stat -c %a "$PKI/$k-key.pem")" = 600 ] || fail "$k-key.pem is mode $(stat -c %a "$PKI/$k-key.pem")"
done
openssl x509 -in "$PKI/worker-1.pem" -noout -ext subjectAltName | grep -q 'URI:apollo-node://worker-1' ||
  fail "worker-1.pem lacks its node URI"
if tls_cli tls ca create --dir "$PKI" 2>"$E2E_DIR/err"; then fail "ca create overwrote the CA"; fi
grep -q "already exists; pass --force" "$E2E_DIR/err" || fail "overwrite message: $(cat "$E2E_DIR/err")"
check_pass "apollo-cli tls: CA, server, node and operator certificates (keys 0600, node URI SAN)"

# 2. Reachable from other machines without TLS: refused unless --insecure.
"$BIN/orchestrator" --listen 0.0.0.0:0 --store "sqlite://$E2E_DIR/open.db" >"$E2E_DIR/open.out" 2>&1
rc=$?
[ "$rc" = 2 ] || fail "non-loopback without TLS: exit $rc, want 2"
[ "$(wc -l <"$E2E_DIR/open.out")" = 1 ] || fail "want one line: $(cat "$E2E_DIR/open.out")"
grep -q -- "refusing to listen on 0.0.0.0:0 .*--tls-cert, --tls-key and --tls-ca.*--insecure" \
  "$E2E_DIR/open.out" || fail "refusal: $(cat "$E2E_DIR/open.out")"
[ ! -e "$E2E_DIR/open.db" ] || fail "the refused orchestrator created its store"
"$BIN/orchestrator" --listen 0.0.0.0:0 --insecure --store "sqlite://$E2E_DIR/open.db" \
  >"$E2E_DIR/insecure.log" 2>&1 &
INSECURE_PID=$!
EXTRA_PIDS+=("$INSECURE_PID")
wait_until 10 "the --insecure orchestrator listening" grep -q "listening on 0.0.0.0:" "$E2E_DIR/insecure.log"
grep -q "WARNING: --insecure: serving 0.0.0.0:" "$E2E_DIR/insecure.log" || fail "no --insecure warning"
kill "$INSECURE_PID"
wait "$INSECURE_PID" 2>/dev/null
check_pass "non-loopback --listen: refused without TLS, a loud warning with --insecure"

# 3. The orchestrator with TLS; the lib's cli() runs with the operator's
# certificate from the environment.
export APOLLO_TLS_CA="$PKI/ca.pem" APOLLO_TLS_CERT="$PKI/operator.pem" APOLLO_TLS_KEY="$PKI/operator-key.pem"
start_orchestrator --tls-cert "$PKI/server.pem" --tls-key "$PKI/server-key.pem" --tls-ca "$PKI/ca.pem"
grep -q "listening on 127.0.0.1:$ORCH_PORT, .*mutual TLS, operator tokens required" "$E2E_DIR/orchestrator.log" ||
  die "orchestrator not on mutual TLS with tokens: $(tail -n 3 "$E2E_DIR/orchestrator.log")"
grep -q "none exists yet: run apollo-cli acl bootstrap" "$E2E_DIR/orchestrator.log" ||
  fail "no bootstrap hint in the orchestrator's log"
# The first admin token; every cli call below carries it ($APOLLO_TOKEN).
cli -o json acl bootstrap >"$E2E_DIR/admin.json" || die "acl bootstrap: $(cat "$E2E_DIR/admin.json")"
APOLLO_TOKEN=$(jq -r .token "$E2E_DIR/admin.json")
export APOLLO_TOKEN
[[ "$APOLLO_TOKEN" =~ ^apollo-[0-9a-f]{48}$ ]] || fail "admin token shape: $APOLLO_TOKEN"
if cli acl bootstrap >/dev/null 2>"$E2E_DIR/err"; then fail "a second bootstrap made a token"; fi
grep -q "bootstrap works once" "$E2E_DIR/err" || fail "second bootstrap: $(cat "$E2E_DIR/err")"
# tls_agent LOG_NAME NODE_ID CERT [extra args]: an agent with CERT's files.
tls_agent() {
  local log=$1 node=$2 cert=$3; shift 3
  "$BIN/edge-agent" --node-id "$node" --orchestrator "127.0.0.1:$ORCH_PORT" \
    --state-dir "$E2E_DIR/$log" --config "$E2E_DIR/e2e-agent.yaml" \
    --tls-cert "$PKI/$cert.pem" --tls-key "$PKI/$cert-key.pem" --tls-ca "$PKI/ca.pem" "$@" \
    >>"$E2E_DIR/$log.log" 2>&1 &
  AGENT_PID[$log]=$!
}
printf 'reconnect: {initial_backoff_ms: 200, max_backoff_ms: 2000}\n' >"$E2E_DIR/e2e-agent.yaml"
tls_agent worker-2 worker-2 worker-2 --label role=worker
wait_until 20 "worker-2 connected over TLS" node_connected worker-2

# The server logs every refused handshake: evidence that a peer was turned away.
handshakes() { grep -c "Handshake failed" "$E2E_DIR/orchestrator.log"; }
handshakes_at_least() { [ "$(handshakes)" -ge "$1" ]; }
h0=$(handshakes)
plain_cli() { env -u APOLLO_TLS_CA -u APOLLO_TLS_CERT -u APOLLO_TLS_KEY "$BIN/apollo-cli" --server "127.0.0.1:$ORCH_PORT" "$@"; }
if plain_cli node list >/dev/null 2>"$E2E_DIR/err"; then fail "a plaintext CLI call was answered"; fi
[ "$(wc -l <"$E2E_DIR/err")" = 1 ] || fail "plaintext CLI: want one line: $(cat "$E2E_DIR/err")"
grep -q "pass --tls-ca, --tls-cert and --tls-key" "$E2E_DIR/err" || fail "plaintext CLI hint: $(cat "$E2E_DIR/err")"
wait_until 10 "the plaintext CLI's handshake refused" handshakes_at_least $((h0 + 1))
h1=$(handshakes)
start_agent plain-1 --label role=worker
wait_until 20 "the plaintext agent's handshakes refused" handshakes_at_least $((h1 + 2))
cli -o json node list | jq -e '[.nodes[] | select(.node_id == "plain-1")] | length == 0' >/dev/null ||
  fail "the plaintext agent got a node row"
log_has plain-1 "connected to" && fail "the plaintext agent says it connected"
kill_agent plain-1
check_pass "plaintext CLI and plaintext agent refused by the TLS handshake"

# 4. Impersonation: worker-1's certificate, Hello as worker-2, while the
# real worker-2 runs a task.
write_task "$E2E_DIR/long.yaml" tls-long sleep "{type: nodes, nodes: [worker-2]}" "{seconds: 6}"
cli task submit --file "$E2E_DIR/long.yaml" >/dev/null || die "submit tls-long"
wait_until 20 "tls-long RUNNING on worker-2" node_status_is tls-long worker-2 RUNNING
row_before=$(cli -o json node list | jq -c '.nodes[] | select(.node_id == "worker-2") | {labels, groups, intents, mode, connected}')
tls_agent attacker worker-2 worker-1 --label role=evil
wait_until 20 "the impersonation_refused alert" \
  bash -c "'$BIN/apollo-cli' --server 127.0.0.1:$ORCH_PORT -o json alert list --kind impersonation_refused | jq -e '.alerts | length >= 1'"
alert=$(cli -o json alert list --kind impersonation_refused | jq -c '.alerts[0]')
[ "$(jq -r .node_id <<<"$alert")" = worker-1 ] || fail "alert names node $(jq -r .node_id <<<"$alert"), want worker-1"
jq -r .message <<<"$alert" | grep -q "certificate is for node worker-1, Hello says worker-2" ||
  fail "alert message: $alert"
cli alert list --kind impersonation_refused | grep -q impersonation_refused || fail "alert list text"
wait_until 10 "the attacker told why" log_has attacker "the center refused this agent: certificate is for node worker-1, Hello says worker-2"
log_has attacker "WARNING: .*worker-1.pem is the certificate of node worker-1, but this agent is worker-2" ||
  fail "the attacker agent did not warn at start"
log_has attacker "connected to" && fail "the attacker got a session"
node_connected worker-2 || fail "worker-2 is no longer connected"
row_after=$(cli -o json node list | jq -c '.nodes[] | select(.node_id == "worker-2") | {labels, groups, intents, mode, connected}')
[ "$row_before" = "$row_after" ] || fail "worker-2's row changed: $row_before -> $row_after"
[ "$(grep -c "connected to" "$E2E_DIR/worker-2.log")" = 1 ] || fail "worker-2 had to reconnect"
wait_until 30 "tls-long SUCCEEDED on the real worker-2" task_status_is tls-long SUCCEEDED
# Its events are worker-2's own ("event <node>-<seq> <TYPE>" in the history).
event_ids() {
  for t in "$@"; do
    cli -o json task events --task-id "$t" | jq -r '.entries[].cause | select(startswith("event ")) | split(" ")[1]'
  done
}
ids=$(event_ids tls-long)
[ -n "$ids" ] || fail "no events in tls-long's history"
grep -qv '^worker-2-[0-9]*$' <<<"$ids" && fail "an event of another node in worker-2's task: $ids"
# And intents still reach the real worker-2 (its session was not replaced).
write_task "$E2E_DIR/after.yaml" tls-after noop "{type: nodes, nodes: [worker-2]}" "{}"
cli task submit --file "$E2E_DIR/after.yaml" >/dev/null || die "submit tls-after"
wait_until 30 "tls-after SUCCEEDED on worker-2" task_status_is tls-after SUCCEEDED
# worker-2's sequence numbers run 1, 2, 3, ... across both tasks: nothing
# reset, skipped or took them over.
seqs=$(event_ids tls-long tls-after | sed 's/^worker-2-//')
[ "$seqs" = "$(seq 1 "$(wc -l <<<"$seqs")")" ] || fail "worker-2's event sequence: $(echo $seqs)"
kill_agent attacker
check_pass "impersonation refused: alert, worker-2's session, row and events untouched, its tasks complete"

# 5. Correct agents and CLI over TLS, end to end (flags instead of the
# environment for the submit).
tls_agent worker-1 worker-1 worker-1 --label role=worker
wait_until 20 "both workers connected" all_connected worker-1 worker-2
write_task "$E2E_DIR/both.yaml" tls-both noop "{type: label, key: role, value: worker}" "{}"
env -u APOLLO_TLS_CA -u APOLLO_TLS_CERT -u APOLLO_TLS_KEY "$BIN/apollo-cli" --server "127.0.0.1:$ORCH_PORT" \
  --tls-ca "$PKI/ca.pem" --tls-cert "$PKI/operator.pem" --tls-key "$PKI/operator-key.pem" \
  task submit --file "$E2E_DIR/both.yaml" >"$E2E_DIR/out" 2>&1 || die "TLS submit: $(cat "$E2E_DIR/out")"
grep -q "created, 2 nodes: worker-1, worker-2" "$E2E_DIR/out" || fail "submit output: $(cat "$E2E_DIR/out")"
wait_until 30 "tls-both SUCCEEDED" task_status_is tls-both SUCCEEDED
check_pass "agents and CLI with their certificates: submit -> SUCCEEDED on both workers"

# 6. Operator tokens and roles.
no_token_cli() { env -u APOLLO_TOKEN "$BIN/apollo-cli" --server "127.0.0.1:$ORCH_PORT" "$@"; }
if no_token_cli node list >/dev/null 2>"$E2E_DIR/err"; then fail "a call without a token was answered"; fi
[ "$(wc -l <"$E2E_DIR/err")" = 1 ] || fail "no token: want one line: $(cat "$E2E_DIR/err")"
grep -q "no token: this orchestrator requires an operator token .*pass --token or set APOLLO_TOKEN" \
  "$E2E_DIR/err" || fail "no-token message: $(cat "$E2E_DIR/err")"
if no_token_cli --token apollo-0000 task list >/dev/null 2>"$E2E_DIR/err"; then fail "a made-up token was accepted"; fi
grep -q "the token is not known to this orchestrator" "$E2E_DIR/err" || fail "bad token: $(cat "$E2E_DIR/err")"
VIEWER=$(cli -o json token create --name vera --role viewer | jq -r .token)
OPERATOR=$(cli -o json token create --name otto --role operator | jq -r .token)
[ -n "$VIEWER" ] && [ -n "$OPERATOR" ] || die "token create failed"
cli token list | grep -q "^otto .*operator .*active" || fail "token list: $(cli token list)"
cli -o json token list | jq -e '[.tokens[] | has("token")] | any | not' >/dev/null ||
  fail "token list shows a token"
APOLLO_TOKEN=$VIEWER cli task status --task-id tls-both >/dev/null || fail "the viewer cannot read"
write_task "$E2E_DIR/acl.yaml" acl-op sleep "{type: nodes, nodes: [worker-1]}" "{seconds: 30}"
if APOLLO_TOKEN=$VIEWER cli task submit --file "$E2E_DIR/acl.yaml" >/dev/null 2>"$E2E_DIR/err"; then
  fail "the viewer submitted a task"
fi
grep -q "token 'vera' has role viewer; task.submit needs operator" "$E2E_DIR/err" ||
  fail "viewer submit: $(cat "$E2E_DIR/err")"
cli -o json task status --task-id acl-op >/dev/null 2>&1 && fail "the viewer's refused submit stored acl-op"
if APOLLO_TOKEN=$VIEWER cli token create --name x --role admin >/dev/null 2>"$E2E_DIR/err"; then
  fail "the viewer made a token"
fi
APOLLO_TOKEN=$OPERATOR cli task submit --file "$E2E_DIR/acl.yaml" >/dev/null || fail "the operator cannot submit"
wait_until 20 "acl-op RUNNING" node_status_is acl-op worker-1 RUNNING
APOLLO_TOKEN=$OPERATOR cli task cancel --task-id acl-op --reason "acl test" >/dev/null ||
  fail "the operator cannot cancel"
if APOLLO_TOKEN=$OPERATOR cli token list >/dev/null 2>"$E2E_DIR/err"; then fail "the operator listed tokens"; fi
grep -q "token 'otto' has role operator; token.list needs admin" "$E2E_DIR/err" ||
  fail "operator token list: $(cat "$E2E_DIR/err")"
cli token revoke --name otto >/dev/null || fail "token revoke"
if APOLLO_TOKEN=$OPERATOR cli task list >/dev/null 2>"$E2E_DIR/err"; then fail "a revoked token was accepted"; fi
grep -q "token 'otto' was revoked at" "$E2E_DIR/err" || fail "revoked: $(cat "$E2E_DIR/err")"
check_pass "tokens: none/unknown UNAUTHENTICATED, viewer reads but cannot submit, operator submits and cancels, revoked refused"

# 7. The audit trail: who did what, in order.
cli -o json audit list --limit 1000 >"$E2E_DIR/audit.json" || die "audit list"
trail=$(jq -r '.entries[] | select(.action != "token.create") | "\(.who // "-") \(.action) \(if .target == "" then "-" else .target end) \(.outcome | split(":")[0])"' "$E2E_DIR/audit.json")
want="admin acl.bootstrap admin ok
- acl.bootstrap admin FAILED_PRECONDITION
admin task.submit tls-long ok
admin task.submit tls-after ok
admin task.submit tls-both ok
vera task.submit - PERMISSION_DENIED
otto task.submit acl-op ok
otto task.cancel acl-op ok
admin token.revoke otto ok"
[ "$trail" = "$want" ] || fail "audit trail:
$trail
want:
$want"
jq -e '[.entries[] | .peer | startswith("ipv4:127.0.0.1:")] | all' "$E2E_DIR/audit.json" >/dev/null ||
  fail "audit rows without the caller's address"
jq -e '[.entries[] | .args_digest | test("^[0-9a-f]{64}$")] | all' "$E2E_DIR/audit.json" >/dev/null ||
  fail "audit rows without a request digest"
cli audit list --who otto | grep -q "task.cancel" || fail "audit list --who otto"
[ "$(cli -o json audit list --who otto | jq '.entries | length')" = 2 ] || fail "audit list --who filters"
check_pass "audit list: bootstrap, submits, the refused viewer, the operator's submit and cancel, the revoke, in order"

finish
