#!/usr/bin/env bash
# Several orchestrators (docs/replicas.md): three replicas on one PostgreSQL
# 15 and one nats-server, four agents given all three addresses, exec tasks
# that write a journal. (1) kill -9 the leader mid-run: every task ends
# SUCCEEDED, no (task, node, attempt) runs twice, and new work is dispatched
# within lease + 5 s of the kill (printed). (2) SIGSTOP the new leader for
# three lease lengths: another takes over and finishes the work; after
# SIGCONT the old leader steps down (log, cluster status), nothing it wrote
# after it was superseded is in the store (history epochs), nothing ran
# twice. (3) An operator's cancel made through a follower stops the run on
# the agent, which only the leader reaches.
source "$(dirname "$0")/lib.sh" "$1"
cd "$(dirname "$0")/../.."

LEASE_S=5  # the default lease
start_postgres
start_nats

for r in 1 2 3; do RPORT[$r]=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'); done
SERVERS=$(replica_servers)
cli() { "$BIN/apollo-cli" --server "$SERVERS" "$@"; }
# follower N: replica rN is listed and does not lead.
follower() {
  cluster_status | jq -e --arg r "r$1" '.replicas[] | select(.replica_id == $r and .leader == false)'
}

cat >"$E2E_DIR/orchestrator.yaml" <<YAML
ack_timeout: 2
dispatch_interval: 200ms
YAML
for r in 1 2 3; do start_replica $r "$PG_URL"; done
wait_until 20 "a leader" has_leader
first=$(leader)
echo "leader: r$first (epoch $(leader_epoch))"
[ "$(cli -o json cluster status | jq '.replicas | length')" = 3 ] || fail "cluster status does not list 3 replicas"
check_pass "three replicas, one leader"

# A second orchestrator on one SQLite file is refused, naming the first.
"$BIN/orchestrator" --listen 127.0.0.1:0 --http-listen off --store "sqlite://$E2E_DIR/one.db" \
  >>"$E2E_DIR/sqlite1.log" 2>&1 &
SQLITE_PID=$!
EXTRA_PIDS+=("$SQLITE_PID")
wait_until 20 "the SQLite orchestrator listening" grep -q "listening on" "$E2E_DIR/sqlite1.log"
out=$("$BIN/orchestrator" --listen 127.0.0.1:0 --http-listen off --store "sqlite://$E2E_DIR/one.db" 2>&1)
rc=$?
[ "$rc" = 2 ] || fail "a second orchestrator on one SQLite store exited $rc, want 2"
grep -q "in use by another orchestrator (pid $SQLITE_PID" <<<"$out" || fail "refusal does not name the holder: $out"
kill "$SQLITE_PID"
check_pass "a second orchestrator on one SQLite file is refused: $(tail -n 1 <<<"$out" | cut -c1-140)"

for n in 1 2 3 4; do
  start_agent "a$n" --orchestrator "$SERVERS"
done
wait_until 30 "agents connected" all_connected a1 a2 a3 a4

JOURNAL_CMD="echo \$APOLLO_TASK_ID \$APOLLO_NODE_ID \$APOLLO_ATTEMPT >> $E2E_DIR/journal"
# jobs FILE PREFIX COUNT SLEEP: COUNT exec tasks spread over the 4 agents.
jobs() {
  {
    echo "tasks:"
    for i in $(seq 1 "$3"); do
      cat <<YAML
  - task_id: $2-$i
    intent: exec
    target_selector: {type: nodes, nodes: [a$(( i % 4 + 1 ))]}
    timeout: 60
    retry_policy: {max_retries: 3, initial_interval: 1, max_interval: 2, backoff: fixed}
    params: {argv: [sh, -c, '$JOURNAL_CMD; sleep $4']}
YAML
    done
  } >"$1"
}
succeeded() { cli -o json task list --status SUCCEEDED --limit 1000 | jq '.tasks | length'; }
at_least_succeeded() { [ "$(succeeded)" -ge "$1" ]; }
no_reruns() {
  local dups
  dups=$(sort "$E2E_DIR/journal" | uniq -d)
  [ -z "$dups" ] || fail "ran twice (task node attempt): $dups"
}

# 1. kill -9 the leader mid-run.
jobs "$E2E_DIR/jobs.yaml" job 200 0.1
cli task submit --file "$E2E_DIR/jobs.yaml" >/dev/null || die "submit jobs"
wait_until 60 "40 jobs done" at_least_succeeded 40
{ kill -9 "${RPID[$first]}"; wait "${RPID[$first]}"; } 2>/dev/null
killed_at=$(date +%s.%N)
echo "killed the leader r$first"
# New work, submitted through a surviving replica right after the kill.
write_task "$E2E_DIR/probe.yaml" probe-1 exec "{type: nodes, nodes: [a1]}" "{argv: [sh, -c, '$JOURNAL_CMD']}"
cli task submit --file "$E2E_DIR/probe.yaml" >/dev/null || die "submit the probe through a follower"
wait_until $((LEASE_S + 25)) "probe-1 SUCCEEDED" task_status_is probe-1 SUCCEEDED
done_s=$(python3 -c "import time; print(f'{time.time() - $killed_at:.1f}')")
# When the new leader dispatched it: the probe's DISPATCHED entry, in the
# store's clock (this machine's), not when this script saw it succeed.
dispatched_at=$(cli -o json task events --task-id probe-1 |
  jq -r '[.entries[] | select(.to == "DISPATCHED")][0].at')
resumed=$(python3 -c "
from datetime import datetime
t = datetime.fromisoformat('$dispatched_at'.replace('Z', '+00:00')).timestamp()
print(f'{t - $killed_at:.1f}')")
echo "dispatch resumed ${resumed}s after kill -9 of the leader (lease ${LEASE_S}s; the probe SUCCEEDED after ${done_s}s): new leader r$(leader), epoch $(leader_epoch)"
python3 -c "import sys; sys.exit(0 if $resumed <= $LEASE_S + 5 else 1)" ||
  fail "dispatch resumed ${resumed}s after the kill, more than lease + 5 s"
wait_until 120 "all 201 tasks SUCCEEDED" at_least_succeeded 201
no_reruns
[ "$(wc -l <"$E2E_DIR/journal")" -ge 201 ] || fail "journal has $(wc -l <"$E2E_DIR/journal") lines, want >= 201"
check_pass "leader killed mid-run: 201 tasks SUCCEEDED, none ran twice, dispatch resumed in ${resumed}s"

# The killed replica comes back as a follower.
start_replica "$first" "$PG_URL"
wait_until 20 "r$first listed again as a follower" follower "$first"

# 2. SIGSTOP the leader for three lease lengths (a long GC-like pause).
paused=$(leader)
old_epoch=$(leader_epoch)
jobs "$E2E_DIR/more.yaml" more 60 0.3
cli task submit --file "$E2E_DIR/more.yaml" >/dev/null || die "submit more"
wait_until 60 "some of the next jobs done" at_least_succeeded 211
kill -STOP "${RPID[$paused]}"
stopped_at=$(date +%s)
echo "paused the leader r$paused (epoch $old_epoch)"
took_over() { local l; l=$(leader); [ -n "$l" ] && [ "$l" != "$paused" ]; }
wait_until $((LEASE_S + 15)) "another replica leads" took_over
echo "r$(leader) took over at epoch $(leader_epoch)"
wait_until 120 "all 261 tasks SUCCEEDED while r$paused is stopped" at_least_succeeded 261
while [ $(( $(date +%s) - stopped_at )) -lt $((3 * LEASE_S)) ]; do sleep 0.5; done
kill -CONT "${RPID[$paused]}"
wait_until 30 "r$paused steps down" grep -q "stepping down" "$E2E_DIR/r$paused.log"
grep "stepping down" "$E2E_DIR/r$paused.log" | tail -n 1
grep -q "store refused this replica's dispatch writes: fenced" "$E2E_DIR/r$paused.log" &&
  echo "r$paused's stale dispatch writes were refused by the store:" &&
  grep "store refused" "$E2E_DIR/r$paused.log" | tail -n 1 | cut -c1-220
wait_until 20 "r$paused listed as a follower" follower "$paused"
[ "$(leader)" != "$paused" ] || fail "r$paused leads again"
new_epoch=$(leader_epoch)
[ "$new_epoch" -gt "$old_epoch" ] || fail "epoch did not grow: $old_epoch -> $new_epoch"
# Nothing r$paused wrote (epoch old_epoch) comes after a write of a later
# epoch: its history rows all have smaller ids than the new leader's.
for i in $(seq 1 60); do cli -o json task events --task-id "more-$i"; done |
  jq -s --argjson e "$old_epoch" '
    [.[].entries[]] as $all
    | ([$all[] | select(.epoch == $e) | .id] | max) as $last_old
    | ([$all[] | select(.epoch > $e) | .id] | min) as $first_new
    | if $last_old == null or $first_new == null or $last_old < $first_new then empty
      else "epoch \($e) wrote id \($last_old) after epoch >\($e) wrote id \($first_new)" end' \
  >"$E2E_DIR/fence_violations"
[ ! -s "$E2E_DIR/fence_violations" ] || fail "a superseded leader's write is in the store: $(cat "$E2E_DIR/fence_violations")"
no_reruns
check_pass "leader paused for 3 leases: r$(leader) took over (epoch $old_epoch -> $new_epoch), r$paused stepped down, no stale write stored, none ran twice"

# 3. An operator's cancel through a follower reaches the agent, which is
# connected to the leader only: the leader tells it at its next pass.
write_task "$E2E_DIR/long.yaml" long-1 exec "{type: nodes, nodes: [a2]}" "{argv: [sleep, '60']}"
cli task submit --file "$E2E_DIR/long.yaml" >/dev/null || die "submit long-1"
wait_until 30 "long-1 RUNNING" task_status_is long-1 RUNNING
via=$(( $(leader) % 3 + 1 ))
"$BIN/apollo-cli" --server "127.0.0.1:${RPORT[$via]}" task cancel --task-id long-1 --reason "through r$via" \
  >/dev/null || die "cancel long-1 through the follower r$via"
wait_until 15 "a2 stops long-1" grep -q "task long-1 attempt 1: exec CANCELLED" "$E2E_DIR/a2.log"
grep "task long-1 attempt 1: exec CANCELLED" "$E2E_DIR/a2.log" | tail -n 1
cli -o json task events --task-id long-1 | jq -e '.entries[] | select(.detail | startswith("cancel sent to a2"))' \
  >/dev/null || fail "no 'cancel sent' entry in long-1's history"
check_pass "a cancel made through the follower r$via reached a2 through the leader r$(leader)"

finish
