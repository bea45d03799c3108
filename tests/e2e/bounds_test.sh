#!/usr/bin/env bash
# Bounded resources at the center (issue 17), real processes:
#  1. 1,000 agent streams that never say Hello are all closed by the center
#     at the Hello deadline (DEADLINE_EXCEEDED), while real agents connect
#     and run a task meanwhile and afterwards;
#  2. a peer that says Hello and then stops reading, while tasks with large
#     params are dispatched to its node, is cut off once its outbound queue
#     passes the byte cap (again at every reconnect), a session_cut_off
#     alert is listed, and the orchestrator's RSS stays flat (figures
#     printed) while a real agent keeps running tasks;
#  3. with limits.max_watchers: 1, a second concurrent watch is refused.
source "$(dirname "$0")/lib.sh" "$1"
cd "$(dirname "$0")/../.."

rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$ORCH_PID/status"; }

cat >"$E2E_DIR/orchestrator.yaml" <<YAML
ack_timeout: 1
limits:
  hello_timeout: 3s
  session_outbound_mib: 2
  max_watchers: 1
YAML
start_orchestrator --config "$E2E_DIR/orchestrator.yaml"
start_agent edge-1
wait_until 20 "edge-1 connected" all_connected edge-1

# ---- 1: 1,000 silent streams
"$BIN/apollo-e2e-tool" silent-streams "127.0.0.1:$ORCH_PORT" 1000 30 \
  >"$E2E_DIR/silent.json" 2>"$E2E_DIR/silent.err" &
SILENT_PID=$!
EXTRA_PIDS+=("$SILENT_PID")
sleep 1  # the streams are open, their deadline not yet passed
start_agent edge-2
wait_until 20 "edge-2 connected while 1,000 silent streams are open" all_connected edge-2
write_task "$E2E_DIR/during.yaml" during noop "{type: nodes, nodes: [edge-1, edge-2]}" "{}"
cli task submit --file "$E2E_DIR/during.yaml" >/dev/null || die "submit during"
wait_until 20 "task 'during' SUCCEEDED" task_status_is during SUCCEEDED
for _ in $(seq 1 400); do kill -0 "$SILENT_PID" 2>/dev/null || break; sleep 0.1; done
kill -0 "$SILENT_PID" 2>/dev/null && die "silent-streams still running after 40 s"
wait "$SILENT_PID" || die "silent-streams failed: $(cat "$E2E_DIR/silent.err")"
echo "silent streams: $(cat "$E2E_DIR/silent.json")"
s=$(cat "$E2E_DIR/silent.json")
[ "$(jq .deadline_exceeded <<<"$s")" = 1000 ] \
  || fail "want all 1000 streams ended with DEADLINE_EXCEEDED: $s $(cat "$E2E_DIR/silent.err")"
[ "$(jq .still_open <<<"$s")" = 0 ] || fail "streams still open: $s"
jq -e '.seconds >= 2.5 and .seconds < 15' <<<"$s" >/dev/null \
  || fail "streams not ended around the 3 s deadline: $s"
closed=$(grep -o 'closed [0-9]* agent stream(s) that sent no Hello within 3s' "$E2E_DIR/orchestrator.log" \
  | awk '{n += $2} END {print n + 0}')
[ "$closed" = 1000 ] || fail "the orchestrator log counts $closed streams closed for no Hello, want 1000"
start_agent edge-3
wait_until 20 "edge-3 connected after the silent streams" all_connected edge-3
write_task "$E2E_DIR/after.yaml" after noop "{type: nodes, nodes: [edge-1, edge-3]}" "{}"
cli task submit --file "$E2E_DIR/after.yaml" >/dev/null || die "submit after"
wait_until 20 "task 'after' SUCCEEDED" task_status_is after SUCCEEDED
check_pass "1,000 streams without Hello closed at the 3 s deadline ($(jq .seconds <<<"$s") s); agents connected and ran tasks meanwhile and after"

# ---- 2: a peer that stops reading
"$BIN/apollo-e2e-tool" stalled-reader "127.0.0.1:$ORCH_PORT" stalled-1 45 \
  >"$E2E_DIR/stalled.json" 2>"$E2E_DIR/stalled.err" &
STALLED_PID=$!
EXTRA_PIDS+=("$STALLED_PID")
wait_until 20 "stalled-1 connected" all_connected stalled-1
# 300 tasks with 40 KB of params each (~12 MB of intents) for its node, in
# files under the 1 MiB task-file limit.
blob=$(head -c 40000 /dev/zero | tr '\0' x)
for f in $(seq 1 15); do
  { echo "tasks:"
    for i in $(seq 1 20); do
      printf '  - task_id: big-%s-%s\n    intent: noop\n    target_selector: {type: nodes, nodes: [stalled-1]}\n    timeout: 60\n    params: {blob: "%s"}\n' \
        "$f" "$i" "$blob"
    done; } >"$E2E_DIR/big-$f.yaml"
  cli task submit --file "$E2E_DIR/big-$f.yaml" >/dev/null || die "submit big-$f"
done
cut_offs() { grep -c 'the peer stopped reading' "$E2E_DIR/orchestrator.log"; }
wait_until 30 "stalled-1 cut off" bash -c "[ \$(grep -c 'the peer stopped reading' '$E2E_DIR/orchestrator.log') -ge 1 ]"
rss0=$(rss_kib)
first=$(cut_offs)
peak=$rss0
echo "orchestrator RSS after the first cut-off: $rss0 KiB"
for i in $(seq 1 10); do
  sleep 2
  r=$(rss_kib)
  [ "$r" -gt "$peak" ] && peak=$r
  echo "  t+$((i * 2))s: RSS $r KiB, cut-offs so far $(cut_offs)"
done
rss1=$(rss_kib)
last=$(cut_offs)
echo "orchestrator RSS: start $rss0 KiB, end $rss1 KiB, peak $peak KiB (growth $(( (rss1 - rss0) / 1024 )) MiB); cut-offs during the window: $((last - first))"
# Cut off again after reconnecting (each cycle takes a few seconds: the
# retry budget paces the resends, the peer's transport absorbs some first).
[ "$((last - first))" -ge 1 ] && [ "$last" -ge 2 ] \
  || fail "the stalled peer was cut off $last time(s) in all, $((last - first)) in the 20 s window"
[ "$((rss1 - rss0))" -lt $((24 * 1024)) ] || fail "RSS grew by $(( (rss1 - rss0) / 1024 )) MiB"
[ "$((peak - rss0))" -lt $((32 * 1024)) ] || fail "RSS peaked $(( (peak - rss0) / 1024 )) MiB above the start"
line=$(grep -m1 'the peer stopped reading' "$E2E_DIR/orchestrator.log")
echo "$line"
grep -q 'over the cap of 2097152 (limits.session_outbound_mib); stream cut off' <<<"$line" \
  || fail "cut-off line does not name the cap: $line"
n=$(cli -o json alert list --kind session_cut_off --node stalled-1 --limit 1000 | jq '.alerts | length')
[ "$n" -ge 2 ] || fail "want session_cut_off alerts for stalled-1, got $n"
write_task "$E2E_DIR/meanwhile.yaml" meanwhile noop "{type: nodes, nodes: [edge-1]}" "{}"
cli task submit --file "$E2E_DIR/meanwhile.yaml" >/dev/null || die "submit meanwhile"
wait_until 20 "task 'meanwhile' SUCCEEDED" task_status_is meanwhile SUCCEEDED
# Its rows are left as they were: waiting for an agent that acknowledges.
st=$(node_status big-1-1 stalled-1)
[ "$st" = DISPATCHED ] || fail "big-1-1 on stalled-1 is $st, want DISPATCHED (rows untouched)"
for _ in $(seq 1 300); do kill -0 "$STALLED_PID" 2>/dev/null || break; sleep 0.1; done
wait "$STALLED_PID" || fail "stalled-reader failed: $(cat "$E2E_DIR/stalled.err")"
echo "stalled reader: $(cat "$E2E_DIR/stalled.json")"
check_pass "a peer that stopped reading was cut off $last times at the 2 MiB cap; RSS $rss0 -> $rss1 KiB; other agents unaffected"

# ---- 3: watchers are capped too (limits.max_watchers: 1): a second watch is
# refused while the first holds its slot, and accepted once it is gone.
"$BIN/apollo-cli" --server "127.0.0.1:$ORCH_PORT" task watch --task-id big-1-1 --for 30 >/dev/null 2>&1 &
WATCH_PID=$!  # the CLI itself, so killing it ends the watch
EXTRA_PIDS+=("$WATCH_PID")
sleep 1
# (Watching a task that stays DISPATCHED: the CLI opens the watch stream.)
out=$(cli task watch --task-id big-1-2 --for 3 2>&1)
grep -q "too many watchers: 1 at once (limits.max_watchers)" <<<"$out" || fail "second watcher: $out"
kill "$WATCH_PID"; wait "$WATCH_PID" 2>/dev/null
sleep 1  # the server notices the first watch went (it polls every 200 ms)
out=$(cli task watch --task-id big-1-2 --for 2 2>&1)
grep -q "not finished after 2s" <<<"$out" || fail "a watcher after the first left: $out"
check_pass "a second concurrent watcher is refused (RESOURCE_EXHAUSTED), then accepted once the first is gone"

finish
