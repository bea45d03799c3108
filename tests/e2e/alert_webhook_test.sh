#!/usr/bin/env bash
# Issue 16, alert delivery, with real processes: a local HTTP receiver gets
# every alert the orchestrator raises as a JSON POST to alerts.webhook_url,
# with the configured headers; `apollo-cli alert list` shows each alert's
# delivery.
#
# The poison events are made as in dlq_poison_test.sh: two tasks finish
# while the orchestrator is down, so their SUCCEEDED events wait in the
# agent's WAL; the orchestrator comes back on a store that lacks the tasks;
# the resent events cannot be applied and become dead letters, each raising
# a dead_letter alert.
#  - lost-task: the receiver answers 200 at once; it gets the alert exactly
#    once (counted after waiting), with kind, node_id, task_id, detail, at
#    and the X-Test header; alert list says delivered.
#  - flaky-task: the receiver answers 503 twice, then 200: alert list shows
#    the delivery failing, then delivered after 3 attempts.
source "$(dirname "$0")/lib.sh" "$1"
cd "$(dirname "$0")/../.."

# The receiver: appends one JSON line per POST to hooks.jsonl (what it
# answered, the path, the X-Test header, the body); answers 503 to the
# first FAIL_FIRST dead_letter POSTs about task FLAKY, 200 to everything
# else.
cat >"$E2E_DIR/receiver.py" <<'PY'
import http.server, json, os, sys
port_file, log_file, flaky, fail_first = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
failed = 0
class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        global failed
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        try:
            body = json.loads(raw)
        except ValueError:
            body = raw.decode("utf-8", "replace")
        code = 200
        if (isinstance(body, dict) and body.get("kind") == "dead_letter"
                and body.get("task_id") == flaky and failed < fail_first):
            failed += 1
            code = 503
        with open(log_file, "a") as f:
            f.write(json.dumps({"code": code, "path": self.path,
                                "x_test": self.headers.get("X-Test"),
                                "content_type": self.headers.get("Content-Type"),
                                "body": body}) + "\n")
        self.send_response(code)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
with open(port_file + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(port_file + ".tmp", port_file)
server.serve_forever()
PY
HOOKS=$E2E_DIR/hooks.jsonl
touch "$HOOKS"
python3 "$E2E_DIR/receiver.py" "$E2E_DIR/receiver.port" "$HOOKS" flaky-task 2 \
  >>"$E2E_DIR/receiver.log" 2>&1 &
EXTRA_PIDS+=("$!")
wait_until 10 "receiver listening" test -s "$E2E_DIR/receiver.port"
HOOK_PORT=$(cat "$E2E_DIR/receiver.port")

# The first orchestrator has no webhook, so every POST the receiver gets
# comes from the second one (alert ids are per store).
cat >"$E2E_DIR/plain.yaml" <<YAML
dispatch_interval: 200ms
ack_timeout: 2
heartbeat_interval: 1
YAML
cat "$E2E_DIR/plain.yaml" - >"$E2E_DIR/orchestrator.yaml" <<YAML
alerts: {webhook_url: http://127.0.0.1:$HOOK_PORT/hook, headers: {X-Test: yes}, timeout: 2, max_attempts: 5}
YAML
start_orchestrator --config "$E2E_DIR/plain.yaml"
start_agent worker-1
wait_until 20 "worker-1 connected" all_connected worker-1
for t in lost-task flaky-task; do
  write_task "$E2E_DIR/$t.yaml" "$t" exec "{type: nodes, nodes: [worker-1]}" "{argv: [sleep, '2']}"
  cli task submit --file "$E2E_DIR/$t.yaml" >/dev/null || die "submit $t"
done
for t in lost-task flaky-task; do wait_until 20 "$t RUNNING" node_status_is "$t" worker-1 RUNNING; done
kill_orchestrator
sleep 3  # both runs end: their SUCCEEDED events wait in the agent's WAL
STORE_FILE=restored.db start_orchestrator --config "$E2E_DIR/orchestrator.yaml"
wait_until 20 "worker-1 reconnected" all_connected worker-1

# alerts_of TASK: the dead_letter alerts about TASK, as JSON.
alerts_of() {
  cli -o json alert list --kind dead_letter --limit 1000 | jq -c --arg t "$1" '[.alerts[] | select(.task_id == $t)]'
}
# posts_of TASK: the dead_letter POSTs the receiver got about TASK (the
# agent's snapshot also raises unknown_to_store alerts about the tasks).
posts_of() { jq -c --arg t "$1" 'select(.body.kind? == "dead_letter" and .body.task_id? == $t)' "$HOOKS"; }

# 2 (first, it is the one that changes fast). flaky-task: failing, then
# delivered. The receiver's first answer is 503; the next try comes 1 s
# later (503 again), then 2 s after that (200).
# Both views at one moment: the text table and the JSON say failing.
flaky_failing() {
  cli alert list --kind dead_letter --limit 1000 >"$E2E_DIR/failing.txt" &&
    alerts_of flaky-task >"$E2E_DIR/failing.json" &&
    jq -e 'length >= 1 and all(.delivery == "failing")' "$E2E_DIR/failing.json" >/dev/null &&
    grep -Eq "dead_letter +worker-1 +flaky-task +failing \([12]\): HTTP 503" "$E2E_DIR/failing.txt"
}
wait_until 20 "flaky-task's alert delivery failing (HTTP 503), in alert list text and JSON" flaky_failing
jq -e 'length == 1 and .[0].delivery_attempts >= 1 and (.[0].delivery_detail | test("HTTP 503"))' \
  "$E2E_DIR/failing.json" >/dev/null || fail "failing delivery: $(cat "$E2E_DIR/failing.json")"
flaky_delivered() { alerts_of flaky-task | jq -e 'length >= 1 and all(.delivery == "delivered")' >/dev/null; }
wait_until 15 "flaky-task's alert delivered" flaky_delivered
alerts=$(alerts_of flaky-task)
jq -e 'length == 1 and .[0].delivery_attempts == 3' <<<"$alerts" >/dev/null \
  || fail "want one alert for flaky-task, delivered on its 3rd attempt: $alerts"
codes=$(posts_of flaky-task | jq -r .code | tr '\n' ' ')
[ "$codes" = "503 503 200 " ] || fail "receiver's answers for flaky-task: '$codes', want 503 503 200"
check_pass "a receiver answering 503 twice: delivery failing (HTTP 503), then delivered on the 3rd attempt"

# 1. lost-task: received exactly once per alert, with the fields and header.
lost_delivered() { alerts_of lost-task | jq -e 'length >= 1 and all(.delivery == "delivered")' >/dev/null; }
wait_until 20 "lost-task's alert delivered" lost_delivered
sleep 3  # a second POST would come within this
alerts=$(alerts_of lost-task)
posts=$(posts_of lost-task | jq -sc .)
[ "$(jq length <<<"$alerts")" = 1 ] || fail "want 1 dead_letter alert for lost-task, got: $alerts"
id=$(jq -r '.[0].id' <<<"$alerts")
[ "$(jq --argjson id "$id" '[.[] | select(.body.id == $id)] | length' <<<"$posts")" = 1 ] \
  || fail "alert $id received not exactly once: $posts"
[ "$(jq length <<<"$posts")" = 1 ] || fail "lost-task POSTed $(jq length <<<"$posts") times: $posts"
post=$(jq -c '.[0]' <<<"$posts")
jq -e '.code == 200 and .path == "/hook" and .x_test == "yes" and (.content_type | startswith("application/json"))' \
  <<<"$post" >/dev/null || fail "request: $post"
jq -e '.body | .kind == "dead_letter" and .node_id == "worker-1" and .task_id == "lost-task"
  and (.detail | test("event parked after [0-9]+ deliveries: unknown task lost-task"))
  and (.at | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z$"))' <<<"$post" >/dev/null \
  || fail "body: $post"
jq -e '.[0].delivery == "delivered" and .[0].delivery_attempts == 1' <<<"$alerts" >/dev/null \
  || fail "alert list JSON: $alerts"
cli alert list --kind dead_letter | grep -Eq "dead_letter +worker-1 +lost-task +delivered +event parked after" \
  || fail "alert list text: $(cli alert list --kind dead_letter)"
check_pass "the dead_letter alert reached the webhook exactly once (kind, node_id, task_id, detail, at, X-Test), alert list: delivered"

# Every POST was a known alert: nothing else was sent, none twice.
all_ids=$(cli -o json alert list --limit 1000 | jq -c '[.alerts[].id] | sort')
posted_ids=$(jq -s -c '[.[] | select(.code == 200) | .body.id] | sort' "$HOOKS")
[ "$all_ids" = "$posted_ids" ] || fail "alerts $all_ids, delivered POSTs $posted_ids"
check_pass "each alert of the store delivered once, nothing else posted"
finish
