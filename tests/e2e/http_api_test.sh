#!/usr/bin/env bash
# The orchestrator's HTTP server with real processes (issue 20): /healthz,
# /readyz, /metrics scraped before and after tasks flow (the values move;
# `promtool check metrics` passes on both scrapes; a missing promtool fails
# the test), the JSON API (submit, reads, cancel, errors as JSON, a bad task
# file as 400 with line:column), the OpenAPI document against the routes the
# server really answers, bearer tokens and roles, and HTTPS with the gRPC
# port's certificate.
source "$(dirname "$0")/lib.sh" "$1"
cd "$(dirname "$0")/../.."

command -v promtool >/dev/null || die "promtool is not installed (apt-get install prometheus)"
command -v curl >/dev/null || die "curl is not installed (apt-get install curl)"

BASE=""
# req METHOD PATH [curl args...]: prints the body; the status goes to
# $E2E_DIR/status. Never fails (the caller checks the status).
req() {
  local method=$1 path=$2; shift 2
  curl -sS -o "$E2E_DIR/body" -w '%{http_code}' -X "$method" "$@" "$BASE$path" >"$E2E_DIR/status" 2>"$E2E_DIR/curl.err" ||
    echo 000 >"$E2E_DIR/status"
  cat "$E2E_DIR/body" 2>/dev/null
}
status() { cat "$E2E_DIR/status"; }
# sample FILE SERIES: the value of one sample of a scrape (0 when absent).
sample() { awk -v s="$2" '$1 == s { print $2; found = 1 } END { if (!found) print 0 }' "$1"; }
scrape() {
  req GET /metrics "${@:2}" >"$1"
  [ "$(status)" = 200 ] || fail "GET /metrics: HTTP $(status): $(head -c 300 "$1")"
  promtool check metrics <"$1" >"$E2E_DIR/promtool.out" 2>&1 ||
    fail "promtool check metrics: $(cat "$E2E_DIR/promtool.out")"
}

start_orchestrator --log-format json
BASE="http://127.0.0.1:$HTTP_PORT"
[ -n "$HTTP_PORT" ] || die "no 'HTTP on' line in the orchestrator's log"
start_agent worker-1 --label role=worker --metrics-listen 127.0.0.1:0 --log-format json
wait_until 20 "worker-1 connected" node_connected worker-1
agent_metrics_port() { grep -oE 'metrics on http://127.0.0.1:[0-9]+' "$E2E_DIR/worker-1.log" | tail -n 1 | sed 's/.*://'; }
agent_serves_metrics() { [ -n "$(agent_metrics_port)" ]; }
wait_until 10 "worker-1 serves its metrics" agent_serves_metrics
AGENT_METRICS="http://127.0.0.1:$(agent_metrics_port)"
agent_scrape() {
  curl -sS --max-time 5 "$AGENT_METRICS/metrics" >"$1" || fail "agent /metrics: $(cat "$1")"
  promtool check metrics <"$1" >"$E2E_DIR/promtool-agent.out" 2>&1 ||
    fail "promtool check metrics (agent): $(cat "$E2E_DIR/promtool-agent.out")"
}
agent_scrape "$E2E_DIR/agent-before.prom"

# 1. Health and readiness.
[ "$(req GET /healthz)" = ok ] && [ "$(status)" = 200 ] || fail "/healthz: $(status)"
body=$(req GET /readyz)
[ "$(status)" = 200 ] && [ "$(jq -r .ready <<<"$body")" = true ] || fail "/readyz: $(status) $body"
check_pass "/healthz 200 ok, /readyz 200 ready (store and bus answer)"

# 2. /metrics before, then a 3-task DAG submitted over HTTP, then after.
scrape "$E2E_DIR/before.prom"
grep -q '^apollo_sessions_connected 1$' "$E2E_DIR/before.prom" || fail "sessions: $(grep sessions "$E2E_DIR/before.prom")"
# The agent was admitted (once, or again after a reconnect), nothing
# refused.
grep -Eq '^apollo_sessions_admitted_total [1-9][0-9]*$' "$E2E_DIR/before.prom" || fail "admitted: $(grep admi "$E2E_DIR/before.prom")"
grep -q '^apollo_sessions_refused_total 0$' "$E2E_DIR/before.prom" || fail "refused: $(grep refused "$E2E_DIR/before.prom")"
grep -q '^apollo_nodes{liveness="ALIVE"} 1$' "$E2E_DIR/before.prom" || fail "nodes: $(grep '^apollo_nodes' "$E2E_DIR/before.prom")"
cat >"$E2E_DIR/dag.yaml" <<'EOF'
tasks:
  - task_id: http-a
    intent: noop
    target_selector: {type: nodes, nodes: [worker-1]}
    timeout: 30
  - task_id: http-b
    intent: noop
    target_selector: {type: nodes, nodes: [worker-1]}
    timeout: 30
    depends_on: [http-a]
  - task_id: http-c
    intent: noop
    target_selector: {type: nodes, nodes: [worker-1]}
    timeout: 30
    depends_on: [http-b]
EOF
body=$(req POST /api/v1/tasks -H 'Content-Type: application/yaml' --data-binary @"$E2E_DIR/dag.yaml")
[ "$(status)" = 201 ] || die "POST /api/v1/tasks: HTTP $(status): $body"
[ "$(jq -r '[.tasks[] | select(.created) | .task_id] | join(",")' <<<"$body")" = "http-a,http-b,http-c" ] ||
  fail "submit answer: $body"
http_status_is() { [ "$(req GET "/api/v1/tasks/$1" | jq -r .status)" = "$2" ]; }
wait_until 30 "http-c SUCCEEDED (read over HTTP)" http_status_is http-c SUCCEEDED
scrape "$E2E_DIR/after.prom"
# SERIES MIN_INCREASE: 3 rows went through each step; the submit was one
# store create; the events came in at least one ingest batch.
while read -r s want; do
  b=$(sample "$E2E_DIR/before.prom" "$s") a=$(sample "$E2E_DIR/after.prom" "$s")
  awk -v a="$a" -v b="$b" -v w="$want" 'BEGIN { exit !(a >= b + w) }' || fail "$s: $b -> $a, want +$want or more"
done <<'EOF'
apollo_tasks{state="SUCCEEDED"} 3
apollo_transitions_total{cause="create",from="NONE",to="PENDING"} 3
apollo_transitions_total{cause="event",from="DISPATCHED",to="RUNNING"} 3
apollo_transitions_total{cause="event",from="RUNNING",to="SUCCEEDED"} 3
apollo_submit_to_running_seconds_count 3
apollo_dispatch_to_ack_seconds_count 3
apollo_ingest_events_total{outcome="applied"} 6
apollo_ingest_batch_events_count 1
apollo_store_commit_seconds_count{op="create"} 1
apollo_intent_messages_offered_total 3
apollo_intent_messages_sent_total 3
apollo_intents_sent_total 3
EOF
[ "$(sample "$E2E_DIR/after.prom" 'apollo_tasks{state="SUCCEEDED"}')" = 3 ] || fail "want 3 SUCCEEDED tasks"
[ "$(sample "$E2E_DIR/after.prom" 'apollo_tasks{state="PENDING"}')" = 0 ] || fail "PENDING tasks left"
grep -q '^apollo_bus_pending_events{partition="0"} ' "$E2E_DIR/after.prom" || fail "no bus lag per partition"
# A DAG run one task at a time never makes the center busy.
[ "$(sample "$E2E_DIR/after.prom" 'apollo_intent_messages_held_total{why="busy"}')" = 0 ] ||
  fail "intents held for a busy center: $(grep held_total "$E2E_DIR/after.prom")"
grep -q '^apollo_event_batches_committing ' "$E2E_DIR/after.prom" || fail "no apollo_event_batches_committing"
check_pass "/metrics moves as 3 tasks flow (tasks by state, transitions, latencies); promtool check metrics passes"

# 2a. --log-format json: every line of both daemons is one JSON object; an
# agent's lines about a task carry task_id, node_id and attempt as keys.
for f in orchestrator worker-1; do
  jq -ce . "$E2E_DIR/$f.log" >/dev/null 2>"$E2E_DIR/jq.err" ||
    fail "$f.log is not one JSON object per line: $(head -c 300 "$E2E_DIR/jq.err"); $(head -n 3 "$E2E_DIR/$f.log")"
done
[ "$(jq -r 'select(.msg | test("listening on")) | .daemon + " " + .level' "$E2E_DIR/orchestrator.log")" = "orchestrator info" ] ||
  fail "no JSON 'listening on' line from the orchestrator"
line=$(jq -c 'select(.task_id == "http-b" and (.msg | test("SUCCEEDED")))' "$E2E_DIR/worker-1.log")
[ "$(jq -r '"\(.daemon) \(.node_id) \(.attempt) \(.level)"' <<<"$line")" = "edge-agent worker-1 1 info" ] &&
  jq -e '.ts | test("^20[0-9-]+T[0-9:.]+Z$")' <<<"$line" >/dev/null ||
  fail "the agent's JSON line about http-b: $line"
check_pass "--log-format json: every line of both daemons is JSON; the agent's task lines carry task_id, node_id, attempt"

# 2b. The agent's own /metrics (--metrics-listen) moves too.
agent_scrape "$E2E_DIR/agent-after.prom"
while read -r s want; do
  b=$(sample "$E2E_DIR/agent-before.prom" "$s") a=$(sample "$E2E_DIR/agent-after.prom" "$s")
  awk -v a="$a" -v b="$b" -v w="$want" 'BEGIN { exit !(a >= b + w) }' || fail "agent $s: $b -> $a, want +$want or more"
done <<'EOF'
apollo_agent_wal_records_total 6
apollo_agent_wal_fsync_seconds_count 1
apollo_agent_wal_fsync_seconds_bucket{le="+Inf"} 1
EOF
[ "$(sample "$E2E_DIR/agent-after.prom" apollo_agent_connected)" = 1 ] || fail "agent not connected per its metrics"
[ "$(sample "$E2E_DIR/agent-after.prom" apollo_agent_conservative_mode)" = 0 ] || fail "agent conservative per its metrics"
[ "$(curl -sS --max-time 5 "$AGENT_METRICS/healthz")" = ok ] || fail "agent /healthz"
check_pass "the agent's /metrics moves (WAL records, fsync histogram; connected, not conservative); promtool passes"

# 3. Reads mirror the gRPC API (the CLI reads the same handlers).
body=$(req GET '/api/v1/tasks?status=SUCCEEDED&limit=2')
[ "$(status)" = 200 ] && [ "$(jq '.tasks | length' <<<"$body")" = 2 ] || fail "list page: $body"
token=$(jq -r .next_page_token <<<"$body")
[ -n "$token" ] && [ "$token" != null ] || fail "no next_page_token: $body"
body=$(req GET "/api/v1/tasks?status=SUCCEEDED&limit=2&page_token=$token")
[ "$(jq '.tasks | length' <<<"$body")" = 1 ] || fail "second page: $body"
body=$(req GET /api/v1/tasks/http-b/events)
jq -e '[.entries[].to_status] | index("RUNNING") and index("SUCCEEDED")' <<<"$body" >/dev/null ||
  fail "events: $body"
[ "$(req GET /api/v1/tasks/http-b | jq -r '.nodes[0].status')" = "$(node_status http-b worker-1)" ] ||
  fail "HTTP and CLI disagree on http-b"
[ "$(req GET /api/v1/nodes | jq -r '.nodes[] | select(.node_id == "worker-1") | .connected')" = true ] ||
  fail "nodes: $(req GET /api/v1/nodes)"
for p in /api/v1/alerts /api/v1/dead-letters /api/v1/bus /api/v1/intents; do
  req GET "$p" | jq -e 'type == "object"' >/dev/null && [ "$(status)" = 200 ] || fail "GET $p: $(status)"
done
check_pass "JSON reads: task list with filter and paging, task, events, nodes, alerts, dead letters, bus, intents"

# 4. Cancel and retry over HTTP.
write_task "$E2E_DIR/long.yaml" http-long sleep "{type: nodes, nodes: [worker-1]}" "{seconds: 60}"
req POST /api/v1/tasks -H 'Content-Type: application/yaml' --data-binary @"$E2E_DIR/long.yaml" >/dev/null
[ "$(status)" = 201 ] || fail "submit http-long: $(status)"
wait_until 20 "http-long RUNNING" node_status_is http-long worker-1 RUNNING
agent_scrape "$E2E_DIR/agent-running.prom"
[ "$(sample "$E2E_DIR/agent-running.prom" apollo_agent_running_handlers)" = 1 ] ||
  fail "agent running handlers while http-long runs: $(grep running_handlers "$E2E_DIR/agent-running.prom")"
body=$(req POST /api/v1/tasks/http-long/cancel -H 'Content-Type: application/json' -d '{"reason": "http test"}')
[ "$(status)" = 200 ] || fail "cancel: $(status) $body"
wait_until 20 "http-long CANCELLED" task_status_is http-long CANCELLED
req GET /api/v1/tasks/http-long/events | jq -e '[.entries[].detail] | any(test("http test"))' >/dev/null ||
  fail "the cancel reason is not in the history"
body=$(req POST /api/v1/tasks/http-a/retry)
[ "$(status)" != 200 ] && jq -e '.error.code and .error.message' <<<"$body" >/dev/null ||
  fail "retry of a SUCCEEDED task: $(status) $body"
check_pass "POST cancel (reason in the history) and retry (refused as JSON for a succeeded task)"

# 5. Errors are JSON; a bad task file is a 400 with every problem's line:column.
body=$(req POST /api/v1/tasks -H 'Content-Type: application/yaml' --data-binary @tests/data/bad/many_problems.yaml)
[ "$(status)" = 400 ] || fail "bad task file: HTTP $(status)"
[ "$(jq -r .error.code <<<"$body")" = INVALID_ARGUMENT ] || fail "bad file code: $body"
n=$(jq '.error.problems | length' <<<"$body")
[ "$n" = "$(wc -l <tests/data/bad/many_problems.expected)" ] || fail "want every problem: $n in $body"
jq -e '.error.problems[0] | .line == 1 and .column == 10' <<<"$body" >/dev/null || fail "first problem: $body"
jq -e '.error.message | test("request-body:1:10: ")' <<<"$body" >/dev/null || fail "message: $body"
body=$(req POST /api/v1/tasks -H 'Content-Type: application/json' -d '{"task_id": "j1", "intent": "noop",
  "target_selector": {"type": "nodes", "nodes": ["worker-1"]}, "timeout": "soon"}')
[ "$(status)" = 400 ] && jq -e '.error.problems[0].line == 2' <<<"$body" >/dev/null ||
  fail "bad JSON task: $(status) $body"
req GET /api/v1/tasks/j1 >/dev/null
[ "$(status)" = 404 ] || fail "a refused file stored j1"
body=$(req POST /api/v1/tasks -H 'Content-Type: application/json' -d '{"task_id": "j2", "intent": "noop",
  "target_selector": {"type": "nodes", "nodes": ["worker-1"]}, "timeout": 30}')
[ "$(status)" = 201 ] || fail "a JSON task file: $(status) $body"
body=$(req GET /api/v1/tasks/nope)
[ "$(status)" = 404 ] && [ "$(jq -r .error.code <<<"$body")" = NOT_FOUND ] || fail "unknown task: $body"
body=$(req GET '/api/v1/tasks?limt=5')
[ "$(status)" = 400 ] && jq -e '.error.message | test("limt") and test("limit")' <<<"$body" >/dev/null ||
  fail "unknown parameter: $body"
body=$(req DELETE /api/v1/tasks/http-a)
[ "$(status)" = 405 ] && jq -e .error.message <<<"$body" >/dev/null || fail "DELETE: $(status) $body"
body=$(req GET /nowhere)
[ "$(status)" = 404 ] && jq -e '.error.message | test("no route")' <<<"$body" >/dev/null || fail "/nowhere: $body"
check_pass "errors are JSON with code and message; bad task file (YAML or JSON) -> 400 with every problem's line:column"

# 6. The OpenAPI document and the server's routes agree: every documented
# operation is answered by its route (not "no route", not 405), and a path
# that is not documented is not served.
req GET /api/v1/openapi.json >"$E2E_DIR/openapi.json"
[ "$(jq -r .openapi "$E2E_DIR/openapi.json")" = 3.0.3 ] || die "no OpenAPI document"
ops=0
# A route's own answer, not the server's: not "no route", not 405, not a
# request the server could not read (POSTs go with an empty body).
from_route() {
  [ "$(status)" != 405 ] && ! jq -e '.error.message | test("^no route|^HTTP [0-9]+$")' <<<"$1" >/dev/null 2>&1
}
while read -r method path; do
  [ "$path" = /api/v1/stream ] && { ops=$((ops + 1)); continue; }  # streams: section 6b
  concrete=$(sed -e 's/{id}/999999/g' -e 's/{[a-z_]*}/no-such-task/g' <<<"$path")
  body=$(req "${method^^}" "$concrete" --data-binary '')
  [ "$method" = get ] && body=$(req GET "$concrete")
  from_route "$body" || fail "documented $method $path is not served: $(status) $body"
  if [[ "$path" == /api/v1/* ]] && ! jq -e 'type == "object"' <<<"$body" >/dev/null 2>&1; then
    fail "$method $path did not answer JSON: $body"
  fi
  ops=$((ops + 1))
done < <(jq -r '.paths | to_entries[] | .key as $p | .value | keys[] | "\(.) \($p)"' "$E2E_DIR/openapi.json")
[ "$ops" -ge 16 ] || fail "only $ops operations documented"
for probe in "GET /api/v1/task" "GET /api/v1/tasks/x/history" "POST /api/v1/nodes" "GET /api/v2/tasks"; do
  body=$(req ${probe% *} "${probe#* }" --data-binary '')
  [ "${probe% *}" = GET ] && body=$(req GET "${probe#* }")
  from_route "$body" && fail "undocumented $probe answered $(status): $body"
done
check_pass "OpenAPI: all $ops documented operations are served, undocumented ones are not"

# 6b. /api/v1/stream: every change as it commits (Server-Sent Events), all
# tasks or one; bad requests are JSON errors before any byte of the stream.
curl -sSN --max-time 30 "$BASE/api/v1/stream" >"$E2E_DIR/stream-all.sse" 2>/dev/null &
ALL_PID=$!
wait_until 10 "the stream opened" grep -q '^retry: ' "$E2E_DIR/stream-all.sse"
write_task "$E2E_DIR/s1.yaml" http-s1 noop "{type: nodes, nodes: [worker-1]}" "{}"
req POST /api/v1/tasks -H 'Content-Type: application/yaml' --data-binary @"$E2E_DIR/s1.yaml" >/dev/null
[ "$(status)" = 201 ] || fail "submit http-s1: $(status)"
s1_done() { grep '^data: ' "$E2E_DIR/stream-all.sse" | sed 's/^data: //' |
  jq -se 'map(select(.task_id == "http-s1")) | map(.status) | index("SUCCEEDED")' >/dev/null 2>&1; }
wait_until 20 "http-s1 SUCCEEDED on the stream" s1_done
grep '^data: ' "$E2E_DIR/stream-all.sse" | sed 's/^data: //' >"$E2E_DIR/stream-all.json"
seen=$(jq -rs '[.[] | select(.task_id == "http-s1") | .status] | join(",")' "$E2E_DIR/stream-all.json")
[[ "$seen" == *SUCCEEDED ]] && [[ "$seen" != SUCCEEDED ]] || fail "http-s1 on the stream: $seen (want earlier states, then SUCCEEDED)"
grep -q '^event: task$' "$E2E_DIR/stream-all.sse" || fail "no 'event: task' line"
kill "$ALL_PID" 2>/dev/null; wait "$ALL_PID" 2>/dev/null
curl -sSN --max-time 8 "$BASE/api/v1/stream?task_id=http-s1" >"$E2E_DIR/stream-one.sse" 2>/dev/null
first=$(grep -m1 '^data: ' "$E2E_DIR/stream-one.sse" | sed 's/^data: //')
[ "$(jq -r .status <<<"$first")" = SUCCEEDED ] || fail "one task's stream starts with its state: $first"
grep -q '^: keepalive$' "$E2E_DIR/stream-one.sse" || fail "no keep-alive within 8 s"
body=$(req GET '/api/v1/stream?task_id=nope')
[ "$(status)" = 404 ] && [ "$(jq -r .error.code <<<"$body")" = NOT_FOUND ] || fail "stream of an unknown task: $(status) $body"
body=$(req GET '/api/v1/stream?task=x')
[ "$(status)" = 400 ] && jq -e '.error.message | test("task")' <<<"$body" >/dev/null || fail "stream with a bad parameter: $(status) $body"
check_pass "/api/v1/stream: a task's changes arrive as they commit (all tasks, or one with keep-alives); bad requests are JSON 4xx"

# 7. Tokens and roles: the gRPC API's, on a second orchestrator with --acl.
kill_agent worker-1
kill "$ORCH_PID"; wait "$ORCH_PID" 2>/dev/null
ORCH_PORT="" HTTP_PORT="" STORE_FILE=acl.db
mkdir -p "$E2E_DIR/ui"
echo '<!doctype html><title>apollo test ui</title>' >"$E2E_DIR/ui/index.html"
start_orchestrator --acl --http-ui-dir "$E2E_DIR/ui"
BASE="http://127.0.0.1:$HTTP_PORT"
[[ "$(req GET /)" == *"apollo test ui"* ]] && [ "$(status)" = 200 ] || fail "GET / with --http-ui-dir: $(status)"
grep -q 'the dashboard at /' "$E2E_DIR/orchestrator.log" || fail "the log does not say the dashboard is served"
APOLLO_TOKEN=$(cli -o json acl bootstrap | jq -r .token)
export APOLLO_TOKEN
VIEWER=$(cli -o json token create --name vera --role viewer | jq -r .token)
[ -n "$VIEWER" ] && [ "$VIEWER" != null ] || die "token create"
body=$(req GET /metrics)
[ "$(status)" = 401 ] && [ "$(jq -r .error.code <<<"$body")" = UNAUTHENTICATED ] || fail "no token: $(status) $body"
body=$(req GET /api/v1/tasks -H "Authorization: Bearer apollo-00")
[ "$(status)" = 401 ] && jq -e '.error.message | test("not known")' <<<"$body" >/dev/null || fail "bad token: $body"
body=$(req GET /api/v1/stream)
[ "$(status)" = 401 ] && [ "$(jq -r .error.code <<<"$body")" = UNAUTHENTICATED ] || fail "stream without a token: $(status) $body"
curl -sSN --max-time 3 -H "Authorization: Bearer $VIEWER" "$BASE/api/v1/stream" >"$E2E_DIR/stream-viewer.sse" 2>/dev/null
grep -q '^retry: ' "$E2E_DIR/stream-viewer.sse" || fail "a viewer's stream did not open: $(head -c 300 "$E2E_DIR/stream-viewer.sse")"
req GET /metrics -H "Authorization: Bearer $VIEWER" >/dev/null
[ "$(status)" = 200 ] || fail "viewer /metrics: $(status)"
body=$(req GET /api/v1/whoami -H "Authorization: Bearer $VIEWER")
[ "$(jq -c '[.name, .role, .tokens_required]' <<<"$body")" = '["vera","viewer",true]' ] || fail "whoami: $body"
req GET /api/v1/tasks -H "Authorization: Bearer $VIEWER" >/dev/null
[ "$(status)" = 200 ] || fail "viewer list: $(status)"
body=$(req POST /api/v1/tasks -H "Authorization: Bearer $VIEWER" -H 'Content-Type: application/yaml' \
  --data-binary @"$E2E_DIR/long.yaml")
[ "$(status)" = 403 ] && [ "$(jq -r .error.code <<<"$body")" = PERMISSION_DENIED ] &&
  jq -e '.error.message | test("vera.*viewer.*task.submit needs operator")' <<<"$body" >/dev/null ||
  fail "viewer submit: $(status) $body"
req POST /api/v1/tasks -H "Authorization: Bearer $APOLLO_TOKEN" -H 'Content-Type: application/yaml' \
  --data-binary @"$E2E_DIR/long.yaml" >/dev/null
[ "$(status)" = 201 ] || fail "admin submit: $(status)"
[ "$(req GET /healthz)" = ok ] || fail "/healthz needs no token"
trail=$(cli -o json audit list | jq -r '.entries[] | select(.action == "task.submit") | "\(.who) \(.outcome | split(":")[0])"')
[ "$trail" = "vera PERMISSION_DENIED
admin ok" ] || fail "audit trail of HTTP calls: $trail"
peers=$(cli -o json audit list | jq -r '[.entries[] | select(.action == "task.submit") | .peer] | unique | join(" ")')
[[ "$peers" =~ ^http:127\.0\.0\.1:[0-9]+( http:127\.0\.0\.1:[0-9]+)?$ ]] || fail "audit peers of HTTP calls: $peers"
check_pass "tokens: none/unknown 401, viewer reads and scrapes but gets 403 on submit, admin submits; audited"

# 8. HTTPS with the gRPC port's certificate.
PKI="$E2E_DIR/pki"
"$BIN/apollo-cli" tls ca create --dir "$PKI" >/dev/null || die "tls ca create"
"$BIN/apollo-cli" tls cert create --dir "$PKI" --server >/dev/null || die "server certificate"
kill "$ORCH_PID"; wait "$ORCH_PID" 2>/dev/null
unset APOLLO_TOKEN
ORCH_PORT="" HTTP_PORT="" STORE_FILE=tls.db
start_orchestrator --http-ui-dir "$E2E_DIR/no-such-ui" \
  --tls-cert "$PKI/server.pem" --tls-key "$PKI/server-key.pem" --tls-ca "$PKI/ca.pem"
grep -q "no dashboard: no directory $E2E_DIR/no-such-ui, make ui builds it" "$E2E_DIR/orchestrator.log" ||
  fail "the log does not say why there is no dashboard: $(grep 'HTTP on' "$E2E_DIR/orchestrator.log")"
grep -q "HTTP on https://127.0.0.1:$HTTP_PORT" "$E2E_DIR/orchestrator.log" || fail "not HTTPS: $(grep 'HTTP on' "$E2E_DIR/orchestrator.log")"
BASE="https://127.0.0.1:$HTTP_PORT"
[ "$(req GET /healthz --cacert "$PKI/ca.pem")" = ok ] || fail "HTTPS /healthz: $(status) $(cat "$E2E_DIR/curl.err")"
body=$(req GET / --cacert "$PKI/ca.pem")
[ "$(status)" = 404 ] && [[ "$body" == *"make ui"* ]] || fail "GET / without the dashboard's files: $(status) $body"
req GET /metrics --cacert "$PKI/ca.pem" >/dev/null
[ "$(status)" = 401 ] || fail "HTTPS /metrics without a token (tokens on with TLS): $(status)"
BASE="http://127.0.0.1:$HTTP_PORT"
req GET /healthz >/dev/null
[ "$(status)" = 000 ] || fail "plain HTTP answered on the HTTPS port: $(status)"
check_pass "HTTPS with the gRPC port's certificate (verified against the fleet CA); tokens on"

[ "$FAILURES" -eq 0 ] || { dump_logs; exit 1; }
echo "PASS"
