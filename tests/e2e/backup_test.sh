#!/usr/bin/env bash
# apollo-cli store backup / restore (issue 22), with real processes:
#  1. tasks with varied histories (succeeded on two nodes, cancelled, one
#     waiting for a node that never came) on a running orchestrator;
#  2. `store backup --out F` while it runs and the agents keep reporting;
#     a task submitted after the backup;
#  3. `store restore` into a fresh store file, and a fresh orchestrator on
#     it: the same tasks with the same histories (task events, byte for
#     byte), and not the task submitted after the backup;
#  4. refusals: backup onto an existing file, restore onto an existing store
#     without --force, restore of a file that is not a store, restore to a
#     PostgreSQL URL;
#  5. with operator tokens on: a backup needs an admin token (none and an
#     operator's are refused) and is in the audit trail.
source "$(dirname "$0")/lib.sh" "$1"
cd "$(dirname "$0")/../.."

start_orchestrator
start_agent b-1 --label role=worker
start_agent b-2 --label role=worker
wait_until 30 "both agents connected" all_connected b-1 b-2
write_task "$E2E_DIR/ok.yaml" bk-ok noop "{type: label, key: role, value: worker}" "{}"
write_task "$E2E_DIR/gone.yaml" bk-gone noop "{type: nodes, nodes: [never-seen]}" "{}"
write_task "$E2E_DIR/slow.yaml" bk-slow sleep "{type: nodes, nodes: [b-1]}" "{seconds: 60}"
for t in ok gone slow; do cli task submit --file "$E2E_DIR/$t.yaml" --force >/dev/null || die "submit $t"; done
wait_until 30 "bk-ok succeeded" task_status_is bk-ok SUCCEEDED
wait_until 30 "bk-slow running" node_status_is bk-slow b-1 RUNNING
cli task cancel --task-id bk-slow --reason "backup test" >/dev/null || die "cancel"
wait_until 30 "bk-slow cancelled" task_status_is bk-slow CANCELLED

cli store backup --out "$E2E_DIR/backup.db" >"$E2E_DIR/backup.out" 2>&1 || die "store backup: $(cat "$E2E_DIR/backup.out")"
grep -q "^backed up the store (schema [0-9]*, [0-9]* bytes) to $E2E_DIR/backup.db$" "$E2E_DIR/backup.out" ||
  fail "backup output: $(cat "$E2E_DIR/backup.out")"
ls "$E2E_DIR"/apollo.db.backup-* >/dev/null 2>&1 && fail "the orchestrator left its temporary copy behind"
cli store backup --out "$E2E_DIR/backup.db" >/dev/null 2>"$E2E_DIR/again.err" && fail "a backup overwrote a file"
grep -q 'already exists' "$E2E_DIR/again.err" || fail "backup onto a file: $(cat "$E2E_DIR/again.err")"
for t in bk-ok bk-gone bk-slow; do cli -o json task events --task-id $t >"$E2E_DIR/$t.before" || die "events $t"; done
cli -o json task list | jq -c '[.tasks[] | {task_id, status}] | sort_by(.task_id)' >"$E2E_DIR/list.before"
write_task "$E2E_DIR/late.yaml" bk-late noop "{type: label, key: role, value: worker}" "{}"
cli task submit --file "$E2E_DIR/late.yaml" >/dev/null || die "submit late"
check_pass "backup of a running orchestrator"

kill_orchestrator
for n in b-1 b-2; do kill_agent $n; done
RESTORED=$E2E_DIR/restored.db
"$BIN/apollo-cli" store restore --from "$E2E_DIR/backup.db" --store "sqlite://$RESTORED" >"$E2E_DIR/restore.out" 2>&1 ||
  die "store restore: $(cat "$E2E_DIR/restore.out")"
"$BIN/apollo-cli" store restore --from "$E2E_DIR/backup.db" --store "sqlite://$RESTORED" >/dev/null 2>"$E2E_DIR/r2.err" &&
  fail "restore replaced an existing store without --force"
grep -q 'already exists' "$E2E_DIR/r2.err" || fail "restore onto a store: $(cat "$E2E_DIR/r2.err")"
echo "not a store" >"$E2E_DIR/junk.db"
"$BIN/apollo-cli" store restore --from "$E2E_DIR/junk.db" --store "sqlite://$E2E_DIR/x.db" >/dev/null 2>"$E2E_DIR/r3.err" &&
  fail "restore accepted a file that is not a store"
grep -q -- "--from: .*junk.db" "$E2E_DIR/r3.err" || fail "restore of junk: $(cat "$E2E_DIR/r3.err")"
[ -e "$E2E_DIR/x.db" ] && fail "a refused restore left a file"
"$BIN/apollo-cli" store restore --from "$E2E_DIR/backup.db" --store postgresql://x/y >/dev/null 2>"$E2E_DIR/r4.err" &&
  fail "restore to PostgreSQL did something"
grep -q 'pg_restore' "$E2E_DIR/r4.err" || fail "restore to PostgreSQL: $(cat "$E2E_DIR/r4.err")"
check_pass "restore: refusals leave nothing behind"

ORCH_PORT=""
STORE_FILE=restored.db start_orchestrator
for t in bk-ok bk-gone bk-slow; do
  cli -o json task events --task-id $t >"$E2E_DIR/$t.after" || fail "events $t after restore"
  cmp -s "$E2E_DIR/$t.before" "$E2E_DIR/$t.after" || fail "$t: history differs after restore: $(diff "$E2E_DIR/$t.before" "$E2E_DIR/$t.after" | head -5)"
  [ "$(jq '.entries | length' "$E2E_DIR/$t.after")" -ge 1 ] || fail "$t: no history to compare"
done
# bk-gone still waits for its node: a center started on the store writes no
# second "node_not_registered" entry for it (its row says so already), even
# after its dispatcher looked at the row (it runs at once, then every second).
sleep 3
cli -o json task events --task-id bk-gone >"$E2E_DIR/bk-gone.later" || fail "events bk-gone later"
cmp -s "$E2E_DIR/bk-gone.before" "$E2E_DIR/bk-gone.later" ||
  fail "bk-gone: the restarted center added to its history: $(diff "$E2E_DIR/bk-gone.before" "$E2E_DIR/bk-gone.later" | head -12)"
cli -o json task list | jq -c '[.tasks[] | {task_id, status}] | sort_by(.task_id)' >"$E2E_DIR/list.after"
cmp -s "$E2E_DIR/list.before" "$E2E_DIR/list.after" || fail "task list differs: $(cat "$E2E_DIR/list.before") vs $(cat "$E2E_DIR/list.after")"
cli task status --task-id bk-late >/dev/null 2>&1 && fail "the task submitted after the backup is in the restored store"
check_pass "a fresh orchestrator on the restored store: same tasks, same histories"

kill_orchestrator
start_orchestrator --acl
admin=$(cli -o json acl bootstrap | jq -r .token)
[ -n "$admin" ] && [ "$admin" != null ] || die "acl bootstrap"
operator=$(cli --token "$admin" -o json token create --name op --role operator | jq -r .token)
cli store backup --out "$E2E_DIR/none.db" >/dev/null 2>"$E2E_DIR/none.err" && fail "a backup without a token"
cli --token "$operator" store backup --out "$E2E_DIR/op.db" >/dev/null 2>"$E2E_DIR/op.err" &&
  fail "a backup with an operator token"
grep -q admin "$E2E_DIR/op.err" || fail "operator refusal: $(cat "$E2E_DIR/op.err")"
[ -e "$E2E_DIR/none.db" ] || [ -e "$E2E_DIR/op.db" ] || [ -e "$E2E_DIR/op.db.part" ] && fail "a refused backup left a file"
cli --token "$admin" store backup --out "$E2E_DIR/admin.db" >/dev/null || fail "an admin's backup"
[ "$(cli --token "$admin" -o json audit list | jq '[.entries[] | select(.action == "store.backup")] | length')" -ge 2 ] ||
  fail "store.backup calls are not in the audit trail: $(cli --token "$admin" audit list)"
check_pass "with tokens: only an admin backs up, and it is audited"
finish
