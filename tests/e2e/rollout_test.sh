#!/usr/bin/env bash
# Issue 21, with real processes: rollouts.
#
# 1. Ten agents, batch_size 2, max_fail_percentage 20 (2 failures
#    tolerated), on_breach abort, a change that fails on r03, r05 and r06:
#    the rollout aborts in batch 3 (the third failure), every node not
#    started (r07..r10) is CANCELLED rollout_aborted and never ran, the
#    rollback intent ran exactly once on each node that had run the change
#    (r01..r06), and `task events` tells it in order.
# 2. canary 1 with manual approval: only the canary runs until `task
#    approve`; `task pause` holds the next batch across an orchestrator
#    kill -9 and restart; `task resume` finishes it.
source "$(dirname "$0")/lib.sh" "$1"
cd "$(dirname "$0")/../.."

cat >"$E2E_DIR/orchestrator.yaml" <<YAML
dispatch_interval: 200ms
ack_timeout: 2
circuit_breaker: {failures: 100, cool_down: 1}
YAML
start_orchestrator --config "$E2E_DIR/orchestrator.yaml"
NODES=(r01 r02 r03 r04 r05 r06 r07 r08 r09 r10)
for n in "${NODES[@]}"; do start_agent "$n"; done
wait_until 30 "agents connected" all_connected "${NODES[@]}"
events() { cli -o json task events --task-id "$1"; }
rollout() { cli -o json task status --task-id "$1" | jq -r ".rollout.$2"; }
rollout_is() { [ "$(rollout "$1" state)" = "$2" ]; }

# ---- 1. a breached budget aborts and rolls back
RUNS=$E2E_DIR/runs ROLLBACKS=$E2E_DIR/rollbacks
cat >"$E2E_DIR/abort.yaml" <<YAML
task_id: upgrade
intent: exec
target_selector: {type: nodes, nodes: [r10, r09, r08, r07, r06, r05, r04, r03, r02, r01]}
timeout: 30
retry_policy: {preset: none}
params: {argv: [sh, -c, 'echo \$APOLLO_NODE_ID >> $RUNS; sleep 0.3; case \$APOLLO_NODE_ID in r03|r05|r06) exit 1;; esac']}
on_failure: {intent: exec, params: {argv: [sh, -c, 'echo \$APOLLO_NODE_ID >> $ROLLBACKS']}, timeout: 20}
rollout: {batch_size: 2, max_fail_percentage: 20, on_breach: abort}
YAML
dry=$(cli task submit --dry-run --file "$E2E_DIR/abort.yaml") || die "dry run: $dry"
grep -q '^  rollout batch 1 of 5: r01, r02$' <<<"$dry" && grep -q '^  rollout batch 5 of 5: r09, r10$' <<<"$dry" ||
  fail "dry run does not show the batches in node order: $dry"
check_pass "--dry-run shows the 5 batches in node_id order"

cli task submit --file "$E2E_DIR/abort.yaml" >/dev/null || die "submit upgrade"
wait_until 60 "upgrade's rollout aborted" rollout_is upgrade aborted
json=$(cli -o json task status --task-id upgrade)
for n in r07 r08 r09 r10; do
  [ "$(jq -r --arg n $n '.nodes[] | select(.node_id == $n) | .status' <<<"$json")" = CANCELLED ] ||
    fail "$n is not CANCELLED: $(jq -c --arg n $n '.nodes[] | select(.node_id == $n)' <<<"$json")"
  [ "$(events upgrade | jq --arg n $n '[.entries[] | select(.node_id == $n and .to == "CANCELLED" and (.cause | startswith("rollout_aborted")))] | length')" = 1 ] ||
    fail "$n: no CANCELLED with cause rollout_aborted: $(events upgrade | jq -c --arg n $n '[.entries[] | select(.node_id == $n)]')"
  [ "$(events upgrade | jq --arg n $n '[.entries[] | select(.node_id == $n and .to == "DISPATCHED")] | length')" = 0 ] ||
    fail "$n was dispatched"
done
[ "$(sort "$RUNS" | tr '\n' ' ')" = "r01 r02 r03 r04 r05 r06 " ] || fail "the change ran on: $(sort "$RUNS" | tr '\n' ' ')"
check_pass "aborted in batch 3 at the third failure: r07..r10 CANCELLED rollout_aborted, never sent, never ran"

for n in r01 r02 r03 r04 r05 r06; do
  done_rollback() { [ "$(grep -c "^$1\$" "$ROLLBACKS" 2>/dev/null)" -ge 1 ]; }
  wait_until 20 "rollback on $n" done_rollback $n
done
sleep 2  # a second rollback would come now
[ "$(sort "$ROLLBACKS" | tr '\n' ' ')" = "r01 r02 r03 r04 r05 r06 " ] ||
  fail "rollbacks ran on: $(sort "$ROLLBACKS" | tr '\n' ' ') (want r01..r06 once each)"
for n in r01 r02 r04; do
  events upgrade | jq -e --arg n $n '[.entries[] | select(.node_id == $n and .cause == "compensation" and (.detail | test("rollback task upgrade-compensate-")))] | length == 1' >/dev/null ||
    fail "$n: the history does not link its rollback task"
done
check_pass "the rollback intent ran exactly once on each node that had run the change (r01..r06)"

# The story, in history order: batches 2 and 3 opened, the breach, the
# cancellations, the end.
story=$(events upgrade | jq -r '.entries[] |
  if .node_id == "" then "task: " + .detail
  elif (.cause | startswith("rollout_aborted")) then "cancel " + .node_id
  elif .cause == "rollout" then "open " + .node_id
  else empty end')
order=$(awk '/^open r03/{o2=NR} /^open r05/{o3=NR} /^task: rollout aborted at batch 3 of 5: failure budget breached, 3 of 10/{b=NR}
  /^cancel r07/{c=NR} /^task: rollout aborted: every node ended/{e=NR}
  END { print (o2 && o3 && b && c && e && o2 < o3 && o3 < b && b < c && c < e) ? "ok" : "bad" }' <<<"$story")
[ "$order" = ok ] || fail "task events does not tell the story in order: $story"
grep -q '^rollout: aborted, batch 3 of 5, 3 of 10 node(s) failed, 2 tolerated (max_fail_percentage 20), aborted by failure budget' \
  <(cli task status --task-id upgrade) || fail "task status: $(cli task status --task-id upgrade)"
cli alert list 2>/dev/null | grep -q 'rollout_breached' || fail "no rollout_breached alert: $(cli alert list)"
check_pass "task events tells it in order (batch 2, batch 3, breach, cancellations, end); status and an alert say why"

# ---- 2. a canary waiting for approval, a pause across a restart
CANARY=$E2E_DIR/canary-runs
# Past the canary, a run waits (lib.sh: gate_sh) for GATE, which the test
# opens only after its pause: batch 2 cannot end before the pause lands,
# however slow the machine.
GATE=$E2E_DIR/canary-gate
cat >"$E2E_DIR/canary.yaml" <<YAML
task_id: canary
intent: exec
target_selector: {type: nodes, nodes: [r01, r02, r03, r04, r05]}
timeout: 30
retry_policy: {preset: none}
params: {argv: [sh, -c, 'echo \$APOLLO_NODE_ID >> $CANARY; [ \$APOLLO_NODE_ID = r01 ] || { $(gate_sh "$GATE"); }']}
rollout: {canary: 1, canary_wait: approve, batch_size: 2}
YAML
cli task submit --file "$E2E_DIR/canary.yaml" >/dev/null || die "submit canary"
wait_until 20 "the canary ran and waits for approval" rollout_is canary awaiting_approval
sleep 2  # nothing else may start meanwhile
[ "$(sort "$CANARY" | tr '\n' ' ')" = "r01 " ] || fail "before approval, ran on: $(sort "$CANARY" | tr '\n' ' ')"
[ "$(node_status canary r02)" = PENDING ] || fail "r02 is $(node_status canary r02) before the approval"
cli -o json task status --task-id canary | jq -e '.nodes[] | select(.node_id == "r02") | .blocked_reason == "rollout_waiting batch 2"' >/dev/null ||
  fail "r02 does not say why it waits: $(cli -o json task status --task-id canary | jq -c '.nodes[1]')"
out=$(cli task resume --task-id canary 2>&1) && fail "resume of a rollout awaiting approval succeeded: $out"
grep -q 'approve it' <<<"$out" || fail "resume refusal does not point at approve: $out"
check_pass "canary 1: only the canary ran; the rollout waits for an approval and says so"

cli task approve --task-id canary --reason "canary looks fine" >/dev/null || die "approve"
batch2_running() { [ "$(node_status canary r02)" = RUNNING ] || [ "$(node_status canary r02)" = SUCCEEDED ]; }
wait_until 10 "batch 2 started" batch2_running
cli task pause --task-id canary --reason "hold before the last batches" >/dev/null || die "pause"
touch "$GATE"
wait_until 10 "batch 2 ended" node_status_is canary r03 SUCCEEDED
kill_orchestrator
start_orchestrator --config "$E2E_DIR/orchestrator.yaml"
wait_until 30 "agents back" all_connected r01 r02 r03 r04 r05
sleep 3  # a lost pause would let batch 3 start now
rollout_is canary paused || fail "after the restart the rollout is $(rollout canary state)"
[ "$(rollout canary paused_by | cut -c1-15)" = "an operator at " ] || fail "paused_by: $(rollout canary paused_by)"
[ "$(node_status canary r04)" = PENDING ] || fail "r04 is $(node_status canary r04) while paused"
[ "$(sort "$CANARY" | tr '\n' ' ')" = "r01 r02 r03 " ] || fail "while paused, ran on: $(sort "$CANARY" | tr '\n' ' ')"
check_pass "task approve starts batch 2; task pause holds batch 3 across an orchestrator kill -9 and restart"

cli task resume --task-id canary >/dev/null || die "resume"
wait_until 30 "canary completed" rollout_is canary completed
task_status_is canary SUCCEEDED || fail "canary ended $(cli -o json task status --task-id canary | jq -r .status)"
[ "$(sort "$CANARY" | tr '\n' ' ')" = "r01 r02 r03 r04 r05 " ] || fail "ran on: $(sort "$CANARY" | tr '\n' ' ')"
h=$(events canary | jq -r '.entries[] | select(.node_id == "") | .detail')
grep -q '^canary approved by an operator at .*: canary looks fine$' <<<"$h" &&
  grep -q '^rollout paused by an operator at .*: hold before the last batches$' <<<"$h" &&
  grep -q '^rollout resumed by ' <<<"$h" || fail "the history does not record who and why: $h"
out=$(cli task pause --task-id canary 2>&1) && fail "pausing a completed rollout succeeded: $out"
grep -q 'it is completed' <<<"$out" || fail "refusal: $out"
check_pass "task resume finishes it; approve, pause and resume are in the history with who and why"

finish
