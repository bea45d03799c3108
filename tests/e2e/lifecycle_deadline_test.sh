#!/usr/bin/env bash
# Issue 16, with real processes: the schedule-to-start deadline, metadata
# where an operator looks, and compensation on exactly the failed nodes.
#
# 1. A task with start_timeout 3 aimed at a registered node whose agent is
#    gone ends TIMEOUT (cause not_started) 3 s after it could start, within
#    one dispatch tick; after its one retry it is final; the task depending
#    on it is CANCELLED (upstream_failed); its callback fires exactly once.
#    The agent, back afterwards, runs nothing of it (its marker file never
#    appears, its WAL never hears of the task, the rows stay as judged).
# 2. metadata in `task status` (text and JSON), `task list` (text, --meta
#    filter) and the callback body.
# 3. on_failure: a task failing on 2 of 3 nodes runs its compensation task
#    <task>-compensate-<node> on exactly those 2, once each, after their
#    retries; linked both ways (compensates / the history).
source "$(dirname "$0")/lib.sh" "$1"
cd "$(dirname "$0")/../.."

cat >"$E2E_DIR/orchestrator.yaml" <<YAML
dispatch_interval: 200ms
ack_timeout: 1
heartbeat_interval: 1
suspect_after: 2
lost_after: 3
circuit_breaker: {failures: 100, cool_down: 1}
callbacks: {timeout: 2, max_attempts: 3, allowed_hosts: [127.0.0.1]}
YAML
start_orchestrator --config "$E2E_DIR/orchestrator.yaml"
for n in gone-1 live-1 live-2 live-3; do start_agent "$n"; done
wait_until 20 "agents connected" all_connected gone-1 live-1 live-2 live-3
kill_agent gone-1
node_gone() { ! node_connected "$1"; }
wait_until 10 "gone-1 disconnected" node_gone gone-1

python3 tests/tools/callback_sink.py "$E2E_DIR/sink.port" "$E2E_DIR/sink.bodies" 0 \
  >>"$E2E_DIR/sink.log" 2>&1 &
EXTRA_PIDS+=($!)
wait_until 10 "callback sink up" test -s "$E2E_DIR/sink.port"
SINK="http://127.0.0.1:$(cat "$E2E_DIR/sink.port")/hooks/apollo"
# posts TASK_ID: the callback bodies received for that task, one per line.
posts() { grep '^200 ' "$E2E_DIR/sink.bodies" 2>/dev/null | cut -d' ' -f2- | jq -c --arg t "$1" 'select(.task_id == $t)'; }
# jq: an RFC 3339 time with microseconds -> seconds since the epoch.
JQ_T='def t: (sub("\\.[0-9]+Z$"; "Z") | fromdateiso8601) + ((capture("\\.(?<f>[0-9]+)Z$").f | tonumber) / 1e6);'
events() { cli -o json task events --task-id "$1"; }

MARKER=$E2E_DIR/judged-marker
cat >"$E2E_DIR/deadline.yaml" <<YAML
tasks:
  - task_id: stuck
    intent: ensure_file
    target_selector: {type: nodes, nodes: [gone-1]}
    timeout: 30
    start_timeout: 3
    retry_policy: {max_retries: 1, initial_interval: 1, max_interval: 1, backoff: fixed}
    callback_url: $SINK
    params: {path: $MARKER, content: ran}
  - task_id: after-stuck
    intent: noop
    target_selector: {type: nodes, nodes: [live-1]}
    timeout: 30
    depends_on: [stuck]
YAML
cli task submit --file "$E2E_DIR/deadline.yaml" >/dev/null || die "submit deadline.yaml"

# Meanwhile (2): metadata, on live nodes.
write_task "$E2E_DIR/meta.yaml" meta-task noop "{type: nodes, nodes: [live-1]}" "{}" \
  "metadata: {change: CHG-42, owner: ops}" "callback_url: $SINK"
write_task "$E2E_DIR/meta-other.yaml" meta-other noop "{type: nodes, nodes: [live-1]}" "{}" \
  "metadata: {change: CHG-43, owner: ops}"
cli task submit --file "$E2E_DIR/meta.yaml" >/dev/null || die "submit meta-task"
cli task submit --file "$E2E_DIR/meta-other.yaml" >/dev/null || die "submit meta-other"

# ...and (3): fails on live-2 and live-3 (every attempt), succeeds on live-1.
write_task "$E2E_DIR/comp.yaml" comp-task exec "{type: nodes, nodes: [live-1, live-2, live-3]}" \
  "{argv: [sh, -c, 'echo \$APOLLO_NODE_ID \$APOLLO_ATTEMPT >> $E2E_DIR/comp-runs; [ \$APOLLO_NODE_ID = live-1 ]']}" \
  "on_failure: {intent: exec, params: {argv: [sh, -c, 'echo \$APOLLO_NODE_ID \$APOLLO_TASK_ID >> $E2E_DIR/compensations']}, timeout: 20}"
sed -i 's/^retry_policy: .*/retry_policy: {max_retries: 1, initial_interval: 1, max_interval: 1, backoff: fixed}/' \
  "$E2E_DIR/comp.yaml"
cli task submit --file "$E2E_DIR/comp.yaml" >/dev/null || die "submit comp-task"

# ---- 1. the deadline
not_started_count() { events stuck | jq '[.entries[] | select(.cause == "not_started" and .to == "TIMEOUT")] | length'; }
first_timeout() { [ "$(not_started_count)" -ge 1 ]; }
wait_until 15 "stuck: first TIMEOUT not_started" first_timeout
h=$(events stuck)
created=$(jq -r "$JQ_T"' [.entries[] | select(.cause == "create")][0].at | t' <<<"$h")
first=$(jq -c '[.entries[] | select(.cause == "not_started")][0]' <<<"$h")
at=$(jq -r "$JQ_T"' .at | t' <<<"$first")
deadline=$(jq -r '.detail | capture("deadline (?<d>[0-9T:.Z-]+)").d' <<<"$first")
dl=$(jq -rn --arg d "$deadline" "$JQ_T"' $d | t' 2>/dev/null)
[ "$(jq -r .from <<<"$first")" = PENDING ] || fail "first not_started from $(jq -r .from <<<"$first"), want PENDING: $first"
jq -e '.detail | test("start_timeout 3s") and test("node_(disconnected|lost)")' <<<"$first" >/dev/null ||
  fail "not_started detail does not give the limit and the node's state: $first"
awk -v c="$created" -v d="$dl" -v a="$at" 'BEGIN { exit !(d - c > 2.9 && d - c < 3.3 && a >= d && a - d < 0.9) }' ||
  fail "TIMEOUT at +$(awk -v c="$created" -v a="$at" 'BEGIN{print a-c}')s, deadline at +$(awk -v c="$created" -v d="$dl" 'BEGIN{print d-c}')s after creation; want deadline 3s, TIMEOUT within a tick of it: $first"
check_pass "start_timeout 3: TIMEOUT cause not_started 3s after creation, within a tick, saying why"

settled_stuck() { task_status_is stuck TIMEOUT && [ "$(not_started_count)" = 2 ]; }
wait_until 15 "stuck: second TIMEOUT not_started (after its retry)" settled_stuck
json=$(cli -o json task status --task-id stuck)
[ "$(jq -r '.nodes[0].retries' <<<"$json")" = 1 ] || fail "stuck retries: $json"
[ "$(jq -r '.start_timeout_s' <<<"$json")" = 3 ] || fail "stuck start_timeout_s: $json"
events stuck | jq -e '[.entries[] | select(.cause == "retry" and .to == "RETRYING")] | length == 1' >/dev/null ||
  fail "want exactly 1 retry: $(cli task events --task-id stuck)"
cli task status --task-id stuck | grep -q '^start_timeout: 3s' || fail "task status text: $(cli task status --task-id stuck)"
check_pass "stuck: after its 1 retry, TIMEOUT not_started again; final (retries 1 of 1)"

wait_until 10 "after-stuck CANCELLED" task_status_is after-stuck CANCELLED
c=$(events after-stuck | jq -c '[.entries[] | select(.to == "CANCELLED")][0]')
jq -e '(.cause + " " + .detail) | test("upstream_failed")' <<<"$c" >/dev/null ||
  fail "the dependent's cancellation does not say upstream_failed: $c"
[ "$(events after-stuck | jq '[.entries[] | select(.to == "RUNNING" or .to == "DISPATCHED")] | length')" = 0 ] ||
  fail "the dependent was dispatched: $(cli task events --task-id after-stuck)"
check_pass "the dependent task is CANCELLED upstream_failed, never dispatched"

one_post() { [ -n "$(posts stuck)" ]; }
wait_until 10 "stuck's callback" one_post
sleep 3  # a second POST would come now
[ "$(posts stuck | wc -l)" = 1 ] || fail "stuck's callback POSTed $(posts stuck | wc -l) times: $(posts stuck)"
[ "$(posts stuck | head -1 | jq -r .status)" = TIMEOUT ] || fail "callback body: $(posts stuck)"
[ "$(posts stuck | head -1 | jq -r '.nodes[0].retries')" = 1 ] || fail "callback body (retries): $(posts stuck)"
check_pass "the callback gets the final state (TIMEOUT, retries used) exactly once"

# The agent comes back: the judged attempts stay judged.
version_before=$(cli -o json task status --task-id stuck | jq -c '[.nodes[] | [.status, .version, .attempt]]')
n_events=$(events stuck | jq '.entries | length')
start_agent gone-1
wait_until 20 "gone-1 back" all_connected gone-1
sleep 3  # time to sync, reconcile and (wrongly) run anything
[ ! -e "$MARKER" ] || fail "the judged task ran on gone-1: $MARKER exists"
version_after=$(cli -o json task status --task-id stuck | jq -c '[.nodes[] | [.status, .version, .attempt]]')
[ "$version_before" = "$version_after" ] || fail "stuck's row changed after the agent came back: $version_before -> $version_after"
[ "$(events stuck | jq '.entries | length')" = "$n_events" ] || fail "new history for stuck: $(cli task events --task-id stuck)"
wal=$("$BIN/edge-agent" --dump-wal "$E2E_DIR/gone-1/wal" 2>/dev/null | jq -c 'select(.task_id == "stuck")')
[ -z "$wal" ] || fail "gone-1's WAL has events for stuck: $wal"
task_status_is after-stuck CANCELLED || fail "after-stuck left CANCELLED"
[ "$(posts stuck | wc -l)" = 1 ] || fail "stuck's callback POSTed again: $(posts stuck)"
check_pass "the restarted agent does not run the judged task (no marker, nothing in its WAL, rows unchanged)"

# ---- 2. metadata
wait_until 20 "meta-task SUCCEEDED" task_status_is meta-task SUCCEEDED
cli task status --task-id meta-task | grep -q '^metadata: change=CHG-42,owner=ops$' ||
  fail "task status text: $(cli task status --task-id meta-task)"
[ "$(cli -o json task status --task-id meta-task | jq -c .metadata)" = '{"change":"CHG-42","owner":"ops"}' ] ||
  fail "task status JSON metadata: $(cli -o json task status --task-id meta-task | jq -c .metadata)"
cli task list | grep -Eq '^meta-task +SUCCEEDED +noop +[0-9TZ:.-]+ +change=CHG-42,owner=ops *$' ||
  fail "task list text: $(cli task list)"
cli task list | grep -q '^TASK_ID .* METADATA' || fail "task list has no METADATA column: $(cli task list | head -1)"
[ "$(cli -o json task list --meta change=CHG-42 | jq -c '[.tasks[].task_id]')" = '["meta-task"]' ] ||
  fail "--meta change=CHG-42: $(cli -o json task list --meta change=CHG-42 | jq -c '[.tasks[].task_id]')"
[ "$(cli -o json task list --meta owner=ops | jq -c '[.tasks[].task_id] | sort')" = '["meta-other","meta-task"]' ] ||
  fail "--meta owner=ops: $(cli -o json task list --meta owner=ops | jq -c '[.tasks[].task_id]')"
[ "$(cli -o json task list --meta owner=ops --meta change=CHG-43 | jq -c '[.tasks[].task_id]')" = '["meta-other"]' ] ||
  fail "--meta owner=ops --meta change=CHG-43: $(cli -o json task list --meta owner=ops --meta change=CHG-43)"
cli task list --meta change=CHG-42 | grep -q '^meta-task ' || fail "text --meta: $(cli task list --meta change=CHG-42)"
! cli task list --meta change=CHG-42 | grep -Eq '^(meta-other|stuck|after-stuck|comp-task) ' ||
  fail "--meta lists a task without change=CHG-42: $(cli task list --meta change=CHG-42)"
meta_post() { [ -n "$(posts meta-task)" ]; }
wait_until 10 "meta-task's callback" meta_post
[ "$(posts meta-task | head -1 | jq -c .metadata)" = '{"change":"CHG-42","owner":"ops"}' ] ||
  fail "callback body metadata: $(posts meta-task)"
check_pass "metadata in task status (text, JSON), task list (column, --meta filter) and the callback body"

# ---- 3. compensation
settled_comp() {
  task_status_is comp-task-compensate-live-2 SUCCEEDED && task_status_is comp-task-compensate-live-3 SUCCEEDED
}
wait_until 30 "both compensation tasks SUCCEEDED" settled_comp
sleep 2  # a wrong or repeated compensation would show now
json=$(cli -o json task status --task-id comp-task)
[ "$(jq -c '[.nodes[] | [.node_id, .status, .retries]]' <<<"$json")" = \
  '[["live-1","SUCCEEDED",0],["live-2","FAILED",1],["live-3","FAILED",1]]' ] || fail "comp-task rows: $json"
[ "$(sort "$E2E_DIR/comp-runs" | tr '\n' ' ')" = "live-1 1 live-2 1 live-2 2 live-3 1 live-3 2 " ] ||
  fail "comp-task runs: $(tr '\n' ' ' <"$E2E_DIR/comp-runs")"
[ "$(sort "$E2E_DIR/compensations" | tr '\n' ' ')" = \
  "live-2 comp-task-compensate-live-2 live-3 comp-task-compensate-live-3 " ] ||
  fail "compensations ran: $(tr '\n' ' ' <"$E2E_DIR/compensations" 2>/dev/null)"
if cli task status --task-id comp-task-compensate-live-1 >/dev/null 2>&1; then
  fail "a compensation task exists for live-1, where comp-task succeeded"
fi
for n in live-2 live-3; do
  c=$(cli -o json task status --task-id "comp-task-compensate-$n")
  [ "$(jq -r .compensates <<<"$c")" = comp-task ] || fail "comp-task-compensate-$n compensates: $c"
  [ "$(jq -c '[.nodes[].node_id]' <<<"$c")" = "[\"$n\"]" ] || fail "comp-task-compensate-$n nodes: $c"
  cli task status --task-id "comp-task-compensate-$n" | grep -q '^compensates: comp-task ' ||
    fail "status text of comp-task-compensate-$n: $(cli task status --task-id "comp-task-compensate-$n")"
  k=$(events comp-task | jq --arg n "$n" \
    '[.entries[] | select(.node_id == $n and .cause == "compensation" and (.detail | contains("comp-task-compensate-" + $n)))] | length')
  [ "$k" = 1 ] || fail "comp-task's history names comp-task-compensate-$n $k times: $(cli task events --task-id comp-task)"
  # Started only once the row was FAILED for good (after its retry).
  order=$(events comp-task | jq -r --arg n "$n" '[.entries[] | select(.node_id == $n) | .cause] | join(",")')
  [[ "$order" =~ retry.*compensation ]] || fail "compensation of $n before its retry was spent: $order"
done
[ "$(events comp-task | jq '[.entries[] | select(.cause == "compensation" and .node_id == "live-1")] | length')" = 0 ] ||
  fail "comp-task's history has a compensation on live-1"
check_pass "on_failure: compensation ran on exactly live-2 and live-3, once each, linked both ways"

finish
