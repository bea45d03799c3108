#!/usr/bin/env bash
# Issue 21, with real processes: selectors that follow the fleet and DAG
# changes at run time.
#
# 1. follow: true — a node registering after the submit with a matching
#    label gets the task within 5 s (heartbeat 1 s), exactly once even when it
#    registers again; a static task with the same selector does not reach it.
# 2. task deps --add delays a task not started until the new upstream
#    SUCCEEDED; a cycle is refused with the cycle named; --remove releases
#    a task at once.
# 3. task hold keeps a task from starting (blocked_reason held_by) until
#    task release.
source "$(dirname "$0")/lib.sh" "$1"
cd "$(dirname "$0")/../.."

cat >"$E2E_DIR/orchestrator.yaml" <<YAML
dispatch_interval: 200ms
heartbeat_interval: 1
YAML
start_orchestrator --config "$E2E_DIR/orchestrator.yaml"
# agent_config NODE ROLE: a config with that label.
agent_config() {
  printf 'reconnect: {initial_backoff_ms: 200, max_backoff_ms: 2000}\n%s\n%s\n%s\n' \
    'enabled_intents: [exec, noop, sleep]' "labels: {role: $2}" 'heartbeat_interval: 1' >"$E2E_DIR/$1.yaml"
  echo "$E2E_DIR/$1.yaml"
}
start_agent w1 --config "$(agent_config w1 web)"
start_agent d1 --config "$(agent_config d1 db)"
wait_until 20 "agents connected" all_connected w1 d1
events() { cli -o json task events --task-id "$1"; }
RUNS=$E2E_DIR/runs
# run_task FILE ID SELECTOR ARGV_SHELL [extra lines]: an exec task.
run_task() {
  local file=$1 id=$2 sel=$3 sh=$4; shift 4
  write_task "$file" "$id" exec "$sel" "{argv: [sh, -c, '$sh']}" "$@"
}

# ---- 1. follow
run_task "$E2E_DIR/follow.yaml" web-agent "{type: label, key: role, value: web, follow: true}" \
  "echo \$APOLLO_NODE_ID >> $RUNS.follow"
run_task "$E2E_DIR/static.yaml" web-static "{type: label, key: role, value: web}" \
  "echo \$APOLLO_NODE_ID >> $RUNS.static"
dry=$(cli task submit --dry-run --file "$E2E_DIR/follow.yaml")
grep -q 'follow: nodes that match later get it too' <<<"$dry" || fail "dry run of a following task: $dry"
dry=$(cli task submit --dry-run --file "$E2E_DIR/static.yaml")
grep -q 'static: the nodes matched now' <<<"$dry" || fail "dry run of a static task: $dry"
cli task submit --file "$E2E_DIR/follow.yaml" >/dev/null || die "submit web-agent"
cli task submit --file "$E2E_DIR/static.yaml" >/dev/null || die "submit web-static"
wait_until 20 "web-agent on w1" node_status_is web-agent w1 SUCCEEDED
wait_until 20 "web-static on w1" node_status_is web-static w1 SUCCEEDED
check_pass "--dry-run says follow or static; both tasks ran on the one web node"

start_agent w2 --config "$(agent_config w2 web)"
wait_until 20 "w2 connected" all_connected w2
t0=$(date +%s.%N)
wait_until 10 "web-agent reached w2" node_status_is web-agent w2 SUCCEEDED
t1=$(date +%s.%N)
# A heartbeat is 1 s; the bound leaves a loaded machine room and still fails
# anything that finds new nodes by a periodic sweep.
awk -v a="$t0" -v b="$t1" 'BEGIN { exit !(b - a < 5) }' || fail "w2 got the task $(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')s after it connected (heartbeat 1s)"
events web-agent | jq -e '[.entries[] | select(.node_id == "w2" and .cause == "follow")] | length >= 1' >/dev/null ||
  fail "no follow entry for w2: $(cli task events --task-id web-agent)"
kill_agent w2
start_agent w2 --config "$(agent_config w2 web)"
wait_until 20 "w2 back" all_connected w2
sleep 3  # a second row or run would come now
[ "$(grep -c '^w2$' "$RUNS.follow")" = 1 ] || fail "web-agent ran $(grep -c '^w2$' "$RUNS.follow") times on w2"
[ "$(cli -o json task status --task-id web-agent | jq '[.nodes[] | select(.node_id == "w2")] | length')" = 1 ] ||
  fail "w2 has more than one row of web-agent"
[ "$(cli -o json task status --task-id web-static | jq -c '[.nodes[].node_id]')" = '["w1"]' ] ||
  fail "the static task reached: $(cli -o json task status --task-id web-static | jq -c '[.nodes[].node_id]')"
! grep -q '^d1$' "$RUNS.follow" || fail "the db node got the web task"
check_pass "follow: w2, registering later, got the task within 5 s (heartbeat 1 s), once (also after registering again); the static task did not reach it"

# ---- 2. dependencies changed at run time
# The gates end only once the test has made its change (lib.sh: gate_sh).
run_task "$E2E_DIR/gate.yaml" gate "{type: nodes, nodes: [w1]}" "$(gate_sh "$RUNS.gate-open")"
run_task "$E2E_DIR/up.yaml" up "{type: nodes, nodes: [w1]}" "sleep 5; date +%s.%N > $RUNS.up-done"
run_task "$E2E_DIR/down.yaml" down "{type: nodes, nodes: [d1]}" "date +%s.%N > $RUNS.down-start" "depends_on: [gate]"
for f in gate up down; do cli task submit --file "$E2E_DIR/$f.yaml" >/dev/null || die "submit $f"; done
out=$(cli task deps --task-id down --add up --reason "up must finish first") || die "deps --add: $out"
touch "$RUNS.gate-open"
wait_until 20 "down SUCCEEDED" node_status_is down d1 SUCCEEDED
awk -v u="$(cat "$RUNS.up-done")" -v d="$(cat "$RUNS.down-start")" 'BEGIN { exit !(d > u) }' ||
  fail "down started at $(cat "$RUNS.down-start"), before up ended at $(cat "$RUNS.up-done")"
events down | jq -e '[.entries[] | select(.node_id == "" and (.detail | test("^dependency on up added by an operator at .*: up must finish first$")))] | length == 1' >/dev/null ||
  fail "the history does not record the change: $(cli task events --task-id down)"
check_pass "a dependency added at run time held down until the new upstream SUCCEEDED"

run_task "$E2E_DIR/slow.yaml" slow "{type: nodes, nodes: [w1]}" "sleep 30"
run_task "$E2E_DIR/a.yaml" a "{type: nodes, nodes: [d1]}" "true" "depends_on: [slow]"
run_task "$E2E_DIR/b.yaml" b "{type: nodes, nodes: [d1]}" "true" "depends_on: [a]"
for f in slow a b; do cli task submit --file "$E2E_DIR/$f.yaml" >/dev/null || die "submit $f"; done
out=$(cli task deps --task-id a --add b 2>&1) && fail "a cycle was accepted: $out"
grep -q 'would make a cycle: a -> b -> a' <<<"$out" || fail "the refusal does not name the cycle: $out"
cli -o json task status --task-id a | jq -e '.nodes[0].blocked_reason == "deps_pending [slow]"' >/dev/null ||
  fail "a waits for: $(cli -o json task status --task-id a | jq -r '.nodes[0].blocked_reason')"
cli task deps --task-id a --remove slow >/dev/null || die "deps --remove"
wait_until 10 "a released" node_status_is a d1 SUCCEEDED
wait_until 10 "b after a" node_status_is b d1 SUCCEEDED
node_status_is slow w1 RUNNING || fail "slow is $(node_status slow w1)"
check_pass "a cycle is refused with the cycle named; removing a dependency releases the task at once"

# ---- 3. hold and release
run_task "$E2E_DIR/gate2.yaml" gate2 "{type: nodes, nodes: [w1]}" "$(gate_sh "$RUNS.gate2-open")"
run_task "$E2E_DIR/held.yaml" held "{type: nodes, nodes: [d1]}" "echo ran >> $RUNS.held" "depends_on: [gate2]"
for f in gate2 held; do cli task submit --file "$E2E_DIR/$f.yaml" >/dev/null || die "submit $f"; done
cli task hold --task-id held --reason "change freeze" >/dev/null || die "hold"
touch "$RUNS.gate2-open"
wait_until 10 "gate2 done" node_status_is gate2 w1 SUCCEEDED
sleep 2  # a held task would start now
node_status_is held d1 PENDING || fail "held is $(node_status held d1)"
cli -o json task status --task-id held | jq -e '.nodes[0].blocked_reason | startswith("held_by an operator at ")' >/dev/null ||
  fail "blocked_reason: $(cli -o json task status --task-id held | jq -r '.nodes[0].blocked_reason')"
[ ! -e "$RUNS.held" ] || fail "the held task ran"
cli task release --task-id held >/dev/null || die "release"
wait_until 10 "held ran after release" node_status_is held d1 SUCCEEDED
out=$(cli task release --task-id held 2>&1) && fail "a second release succeeded: $out"
check_pass "task hold keeps it PENDING (held_by) past its dependency; task release runs it"

cli task cancel --task-id slow >/dev/null || true
finish
