#!/usr/bin/env bash
# Issue 16, with real processes: retry tiers, intents checked at submit,
# permanent failures.
#
# 1. A task naming no retry policy gets the default: the fast tier, then
#    the slow one (both shortened by this test's retry_presets), then FAILED
#    for a person. Its handler fails 9 times: retries come at fast spacing,
#    then slow spacing, each named in the history; after the 9th failure
#    nothing runs until `task retry`, and the 10th run succeeds. A task
#    with an explicit `tiers:` list escalates the same way through its own.
# 2. `intent: colect_metrics` is refused at submit with "did you mean
#    'collect_metrics'" at file:line:column, non-zero, nothing stored;
#    with --force it is accepted (and fails on the node, permanently, once).
# 3. A handler reporting invalid params is FAILED after exactly one attempt
#    whatever its retry policy; it is final: its callback fires and
#    `task watch` ends.
source "$(dirname "$0")/lib.sh" "$1"
cd "$(dirname "$0")/../.."

cat >"$E2E_DIR/orchestrator.yaml" <<YAML
dispatch_interval: 200ms
ack_timeout: 2
heartbeat_interval: 1
suspect_after: 3
lost_after: 6
circuit_breaker: {failures: 100, cool_down: 1}
callbacks: {timeout: 2, max_attempts: 3, allowed_hosts: [127.0.0.1]}
retry_presets:
  fast: {max_retries: 3, initial_interval: 1, max_interval: 1, backoff: fixed}
  slow: {max_retries: 5, initial_interval: 2, max_interval: 2, backoff: fixed}
YAML
start_orchestrator --config "$E2E_DIR/orchestrator.yaml"
start_agent edge-1
wait_until 20 "edge-1 connected" all_connected edge-1
events() { cli -o json task events --task-id "$1"; }
JQ_T='def t: (sub("\\.[0-9]+Z$"; "Z") | fromdateiso8601) + ((capture("\\.(?<f>[0-9]+)Z$").f | tonumber) / 1e6);'

python3 tests/tools/callback_sink.py "$E2E_DIR/sink.port" "$E2E_DIR/sink.bodies" 0 \
  >>"$E2E_DIR/sink.log" 2>&1 &
EXTRA_PIDS+=($!)
wait_until 10 "callback sink up" test -s "$E2E_DIR/sink.port"
SINK="http://127.0.0.1:$(cat "$E2E_DIR/sink.port")/hooks/apollo"
posts() { grep '^200 ' "$E2E_DIR/sink.bodies" 2>/dev/null | cut -d' ' -f2- | jq -c --arg t "$1" 'select(.task_id == $t)'; }

# ---- 1. tiers. Each run appends a line to its journal; it succeeds from
# the 10th line on.
RUNS=$E2E_DIR/flaky.runs
cat >"$E2E_DIR/flaky.yaml" <<YAML
task_id: flaky
intent: exec
target_selector: {type: nodes, nodes: [edge-1]}
timeout: 30
params: {argv: [sh, -c, 'echo "\$APOLLO_ATTEMPT" >> $RUNS; [ \$(wc -l < $RUNS) -ge 10 ]']}
YAML
cli task submit --file "$E2E_DIR/flaky.yaml" >/dev/null || die "submit flaky"
# The tiers form, failing for good: fast (the configured preset), then one
# retry of its own 2 s tier.
cat >"$E2E_DIR/tiered.yaml" <<YAML
task_id: tiered
intent: exec
target_selector: {type: nodes, nodes: [edge-1]}
timeout: 30
retry_policy:
  tiers:
    - {preset: fast}
    - {name: patient, max_retries: 1, initial_interval: 2, max_interval: 2, backoff: fixed}
params: {argv: [sh, -c, 'echo x >> $E2E_DIR/tiered.runs; exit 4']}
YAML
cli task submit --file "$E2E_DIR/tiered.yaml" >/dev/null || die "submit tiered"

# ---- 2. (while those retry) a misspelled intent.
cat >"$E2E_DIR/typo.yaml" <<YAML
task_id: typo-task
intent: colect_metrics
target_selector: {type: nodes, nodes: [edge-1]}
timeout: 30
retry_policy: {max_retries: 3, initial_interval: 1, max_interval: 1, backoff: fixed}
YAML
if cli task submit --file "$E2E_DIR/typo.yaml" >"$E2E_DIR/typo.out" 2>"$E2E_DIR/typo.err"; then
  fail "a misspelled intent was accepted: $(cat "$E2E_DIR/typo.out")"
fi
grep -Eq "^$E2E_DIR/typo.yaml:2:9: .*did you mean 'collect_metrics'" "$E2E_DIR/typo.err" ||
  fail "submit error: $(cat "$E2E_DIR/typo.err")"
[ "$(wc -l <"$E2E_DIR/typo.err")" = 1 ] || fail "want one line: $(cat "$E2E_DIR/typo.err")"
if cli task status --task-id typo-task >/dev/null 2>"$E2E_DIR/typo.status"; then
  fail "the refused task was stored"
fi
grep -q "no task 'typo-task'" "$E2E_DIR/typo.status" || fail "task status of the refused task: $(cat "$E2E_DIR/typo.status")"
check_pass "misspelled intent refused at submit: file:2:9, did you mean 'collect_metrics', nothing stored"

out=$(cli task submit --force --file "$E2E_DIR/typo.yaml") || fail "--force submit failed: $out"
grep -q "created" <<<"$out" || fail "--force submit output: $out"
wait_until 20 "typo-task FAILED" task_status_is typo-task FAILED
check_pass "with --force the misspelled intent is accepted"

# ---- 3. invalid params: permanent, one attempt, whatever the policy.
cat >"$E2E_DIR/badparams.yaml" <<YAML
task_id: bad-params
intent: collect_metrics
target_selector: {type: nodes, nodes: [edge-1]}
timeout: 30
retry_policy: {max_retries: 5, initial_interval: 1, max_interval: 1, backoff: fixed}
callback_url: $SINK
params: {sample_ms: not-a-number}
YAML
cli task submit --file "$E2E_DIR/badparams.yaml" >/dev/null || die "submit bad-params"
wait_until 20 "bad-params FAILED" task_status_is bad-params FAILED
sleep 3  # three retry intervals: a retry would have been dispatched by now
for t in bad-params typo-task; do
  json=$(cli -o json task status --task-id "$t")
  [ "$(jq -c '[.nodes[] | [.status, .attempt, .retries]]' <<<"$json")" = '[["FAILED",1,0]]' ] ||
    fail "$t: want FAILED after 1 attempt, 0 retries: $json"
  [ "$(events "$t" | jq '[.entries[] | select(.cause == "retry" or .to == "RETRYING")] | length')" = 0 ] ||
    fail "$t was retried: $(cli task events --task-id "$t")"
  n=$("$BIN/edge-agent" --dump-wal "$E2E_DIR/edge-1/wal" 2>/dev/null |
    jq -c --arg t "$t" 'select(.task_id == $t and .event_type == "ACCEPTED")' | wc -l)
  [ "$n" = 1 ] || fail "$t accepted $n times by the agent"
  kind=$("$BIN/edge-agent" --dump-wal "$E2E_DIR/edge-1/wal" 2>/dev/null |
    jq -r --arg t "$t" 'select(.task_id == $t and .event_type == "FAILED") | .payload.kind')
  [ "$kind" = permanent ] || fail "$t: FAILED kind '$kind', want permanent"
done
jq -e '.nodes[0].last_error | test("sample_ms")' <<<"$(cli -o json task status --task-id bad-params)" >/dev/null ||
  fail "bad-params error does not name the param: $(cli -o json task status --task-id bad-params | jq -c .nodes)"
jq -e '.nodes[0].last_error | test("unknown intent")' <<<"$(cli -o json task status --task-id typo-task)" >/dev/null ||
  fail "typo-task error: $(cli -o json task status --task-id typo-task | jq -c .nodes)"
check_pass "invalid params (and an unknown intent): FAILED permanent after exactly one attempt despite retries left"
# (bounded; a missing callback is one failed check, not the end of the test)
for _ in $(seq 1 50); do [ -n "$(posts bad-params)" ] && break; sleep 0.1; done
[ "$(posts bad-params | head -1 | jq -r .status)" = FAILED ] ||
  fail "no FAILED callback for bad-params 5s after it failed for good: '$(posts bad-params)'"
# `task watch` ends at once on a final task (exit 1: it did not succeed).
cli task watch --task-id bad-params --for 5 >/dev/null 2>"$E2E_DIR/watch.err"
rc=$?
[ "$rc" = 1 ] && ! grep -q "not finished" "$E2E_DIR/watch.err" ||
  fail "task watch of the permanently FAILED bad-params: exit $rc, $(cat "$E2E_DIR/watch.err")"
check_pass "a permanently FAILED task with retries left is final: its callback fires, task watch ends"

# ---- 1, continued.
# FAILED at attempt 9: between a failed run and the center's retry decision
# (a moment) the task also shows FAILED, so the attempt is what says done.
flaky_done() {
  [ "$(cli -o json task status --task-id flaky | jq -c '[.status, .nodes[0].attempt]')" = '["FAILED",9]' ]
}
wait_until 40 "flaky FAILED after 9 runs" flaky_done
sleep 3  # a 10th run would start now if anything still retried it
[ "$(wc -l <"$RUNS")" = 9 ] || fail "flaky ran $(wc -l <"$RUNS") times before the operator, want 9"
json=$(cli -o json task status --task-id flaky)
[ "$(jq -c '[.nodes[] | [.status, .attempt, .retries]]' <<<"$json")" = '[["FAILED",9,8]]' ] ||
  fail "flaky: want FAILED, attempt 9, 8 retries: $json"
h=$(events flaky)
details=$(jq -r '[.entries[] | select(.cause == "retry") | .detail] | .[]' <<<"$h")
want="retry 1 of 8, fast tier 1 of 3, in 1s
retry 2 of 8, fast tier 2 of 3, in 1s
retry 3 of 8, fast tier 3 of 3, in 1s
retry 4 of 8, slow tier 1 of 5, in 2s
retry 5 of 8, slow tier 2 of 5, in 2s
retry 6 of 8, slow tier 3 of 5, in 2s
retry 7 of 8, slow tier 4 of 5, in 2s
retry 8 of 8, slow tier 5 of 5, in 2s"
[ "$details" = "$want" ] || fail "flaky's retry decisions:
$details"
# From each retry decision to the dispatch of the next attempt: the tier's
# interval (dispatch comes within a tick or two of the due time).
gaps=$(jq -r "$JQ_T"' .entries as $e
  | [range(0; $e | length) | select($e[.].cause == "retry")
     | . as $i | ($e[$i + 1:] | map(select(.cause == "dispatch" and .attempt > $e[$i].attempt))[0]) as $d
     | (($d.at | t) - ($e[$i].at | t))] | map(. * 100 | round / 100) | join(" ")' <<<"$h")
read -ra g <<<"$gaps"
[ "${#g[@]}" = 8 ] || fail "want 8 retry gaps, got '$gaps'"
for i in 0 1 2; do
  awk -v x="${g[$i]:-0}" 'BEGIN { exit !(x >= 0.95 && x < 1.6) }' || fail "fast retry $((i + 1)) after ${g[$i]:-?}s, want ~1s (all: $gaps)"
done
for i in 3 4 5 6 7; do
  awk -v x="${g[$i]:-0}" 'BEGIN { exit !(x >= 1.95 && x < 2.6) }' || fail "slow retry $((i + 1)) after ${g[$i]:-?}s, want ~2s (all: $gaps)"
done
echo "     retry spacing (s): $gaps"
check_pass "default policy: 3 fast retries (~1s), then 5 slow (~2s), named in the history, then FAILED"

out=$(cli task retry --task-id flaky) || fail "task retry failed: $out"
wait_until 20 "flaky SUCCEEDED after the operator's retry" task_status_is flaky SUCCEEDED
[ "$(wc -l <"$RUNS")" = 10 ] || fail "flaky ran $(wc -l <"$RUNS") times, want 10"
[ "$(tail -n 1 "$RUNS")" = 10 ] || fail "the 10th run was attempt $(tail -n 1 "$RUNS")"
events flaky | jq -e '[.entries[] | select(.cause == "operator" and .to == "RETRYING")] | length == 1' >/dev/null ||
  fail "no operator retry in the history: $(cli task events --task-id flaky)"
check_pass "task retry: the 10th run (attempt 10) SUCCEEDED"

wait_until 20 "tiered FAILED" task_status_is tiered FAILED
sleep 1
[ "$(wc -l <"$E2E_DIR/tiered.runs")" = 5 ] || fail "tiered ran $(wc -l <"$E2E_DIR/tiered.runs") times, want 5"
details=$(events tiered | jq -r '[.entries[] | select(.cause == "retry") | .detail] | .[]')
want="retry 1 of 4, fast tier 1 of 3, in 1s
retry 2 of 4, fast tier 2 of 3, in 1s
retry 3 of 4, fast tier 3 of 3, in 1s
retry 4 of 4, patient tier 1 of 1, in 2s"
[ "$details" = "$want" ] || fail "tiered's retry decisions:
$details"
check_pass "retry_policy {tiers: [{preset: fast}, {name: patient ...}]}: 3 fast, 1 patient, then FAILED"

finish
