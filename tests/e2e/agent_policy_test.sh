#!/usr/bin/env bash
# Intents a node refuses, with real processes. With the shipped agent config
# (config/edge-agent.yaml, only id, address and state dir given as flags)
# exec is disabled and ensure_file may write nowhere. On a node whose config
# allows one directory (and exec by --enable-intent, limited to printf),
# writes outside it, with a setuid mode or through a symlink, and commands
# not allowed, are refused. Every refusal is FAILED with its reason, marked
# "kind": "permanent" in the agent's event, and changes nothing on disk.
#
# Tasks here have max_retries 0, so the outcome does not depend on whether
# the center already honours "permanent".
source "$(dirname "$0")/lib.sh" "$1"
cd "$(dirname "$0")/../.."

ROOT=$(realpath "$E2E_DIR")  # the agent never follows symlinks: real paths only
ALLOWED=$ROOT/allowed
OUTSIDE=$ROOT/outside
mkdir -p "$ALLOWED" "$OUTSIDE"
ln -s "$OUTSIDE" "$ALLOWED/link"                       # a symlinked directory
echo original >"$OUTSIDE/target"
ln -s "$OUTSIDE/target" "$ALLOWED/file-link"           # a symlink as the file

start_orchestrator
start_agent default-node --config config/edge-agent.yaml
cat >"$E2E_DIR/policy-agent.yaml" <<YAML
reconnect: {initial_backoff_ms: 200, max_backoff_ms: 2000}
exec: {allowed_commands: [/usr/bin/printf]}
ensure_file: {allowed_dirs: ["$ALLOWED"]}
YAML
start_agent policy-node --config "$E2E_DIR/policy-agent.yaml" --enable-intent exec
wait_until 30 "both agents connected" all_connected default-node policy-node

# submit ID INTENT NODE PARAMS: one task on one node, never retried.
submit() {
  write_task "$E2E_DIR/$1.yaml" "$1" "$2" "{type: nodes, nodes: [$3]}" "$4"
  sed -i 's/^retry_policy: .*/retry_policy: {max_retries: 0}/' "$E2E_DIR/$1.yaml"
  cli task submit --file "$E2E_DIR/$1.yaml" ${FORCE:+--force} >/dev/null || die "submit $1"
}
last_error() {
  cli -o json task status --task-id "$1" | jq -r --arg n "$2" '.nodes[] | select(.node_id == $n) | .last_error'
}
# refused ID NODE REASON: FAILED on NODE with REASON in its error, and the
# agent's FAILED event says "kind": "permanent".
refused() {
  wait_until 30 "$1 FAILED on $2" node_status_is "$1" "$2" FAILED
  local err kind
  err=$(last_error "$1" "$2")
  [[ "$err" == *"$3"* ]] || fail "$1: error '$err' does not say '$3'"
  kind=$("$BIN/edge-agent" --dump-wal "$E2E_DIR/$2/wal" 2>/dev/null |
    jq -r --arg t "$1" 'select(.task_id == $t and .event_type == "FAILED") | .payload.kind')
  [ "$kind" = permanent ] || fail "$1: the FAILED event's kind is '$kind', want permanent"
}

# 1. The shipped config: exec is off and the node says so; nothing runs.
intents=$(cli -o json node list | jq -c '.nodes[] | select(.node_id == "default-node") | .intents')
[ "$intents" = '["collect_metrics","ensure_file","noop","sleep"]' ] ||
  fail "default-node advertises $intents"
grep -q "disabled here: exec" "$E2E_DIR/default-node.log" || fail "the agent did not log exec as disabled"
disabled=$(cli -o json node list | jq -c '.nodes[] | select(.node_id == "default-node") | .disabled_intents')
[ "$disabled" = '["exec"]' ] || fail "default-node's disabled intents: $disabled"
# The center knows: refused at submit, at the intent's line:column...
write_task "$E2E_DIR/exec-refused.yaml" exec-refused exec "{type: nodes, nodes: [default-node]}" "{argv: [/bin/true]}"
out=$(cli task submit --file "$E2E_DIR/exec-refused.yaml" 2>&1) && fail "exec on default-node was accepted"
echo "$out" | grep -Eq "exec-refused.yaml:[0-9]+:[0-9]+: .*intent 'exec' is disabled on default-node" ||
  fail "submit refusal: $out"
# ...and the agent refuses it too when it is forced through.
FORCE=1 submit exec-off exec default-node "{argv: [/bin/sh, -c, 'touch $ROOT/exec-ran']}"
refused exec-off default-node "exec is disabled on this node"
[ ! -e "$ROOT/exec-ran" ] || fail "the disabled exec ran"
check_pass "default config: exec FAILED 'exec is disabled on this node', permanent, nothing ran"

submit write-default ensure_file default-node "{path: $ALLOWED/default.conf, content: x}"
refused write-default default-node "ensure_file.allowed_dirs"
[ ! -e "$ALLOWED/default.conf" ] || fail "ensure_file wrote with no allowed_dirs"
check_pass "default config: ensure_file FAILED saying how to allow a directory, nothing written"

# 2. A node allowing $ALLOWED: a write there works (so the refusals below
# are the policy's, not a broken node)...
submit write-ok ensure_file policy-node "{path: $ALLOWED/app.conf, content: 'port=80', mode: '0640'}"
wait_until 30 "write-ok SUCCEEDED" task_status_is write-ok SUCCEEDED
[ "$(cat "$ALLOWED/app.conf" 2>/dev/null)" = port=80 ] || fail "app.conf not written"
[ "$(stat -c %a "$ALLOWED/app.conf" 2>/dev/null)" = 640 ] || fail "app.conf mode not 640"
check_pass "ensure_file inside allowed_dirs SUCCEEDED"

# ...and each of these is refused, writing nothing.
submit write-outside ensure_file policy-node "{path: $OUTSIDE/evil.conf, content: x}"
refused write-outside policy-node "is outside this node's allowed_dirs"
submit write-setuid ensure_file policy-node "{path: $ALLOWED/tool, content: x, mode: '4755'}"
refused write-setuid policy-node "setuid"
submit write-via-link ensure_file policy-node "{path: $ALLOWED/link/evil.conf, content: x}"
refused write-via-link policy-node "$ALLOWED/link is a symbolic link"
submit write-file-link ensure_file policy-node "{path: $ALLOWED/file-link, content: evil}"
refused write-file-link policy-node "is a symbolic link"
[ ! -e "$OUTSIDE/evil.conf" ] || fail "a refused ensure_file wrote $OUTSIDE/evil.conf"
[ ! -e "$ALLOWED/tool" ] || fail "a setuid ensure_file wrote $ALLOWED/tool"
[ "$(cat "$OUTSIDE/target")" = original ] || fail "the symlink's target was overwritten"
[ -L "$ALLOWED/file-link" ] || fail "the symlink was replaced"
left=$(cd "$ROOT" && find allowed outside | sort | tr '\n' ' ')
[ "$left" = "allowed allowed/app.conf allowed/file-link allowed/link outside outside/target " ] ||
  fail "files changed: $left"
check_pass "ensure_file outside allowed_dirs, setuid, through a symlinked dir, onto a symlink: FAILED, permanent, nothing written"

# 3. exec enabled by flag, limited to printf: other commands are refused;
# printf runs, and its ::progress:: line stays out of the output.
submit exec-denied exec policy-node "{argv: [/bin/sh, -c, 'touch $ROOT/denied-ran']}"
refused exec-denied policy-node "/bin/sh is not allowed on this node"
[ ! -e "$ROOT/denied-ran" ] || fail "a command not allowed ran"
submit exec-ok exec policy-node "{argv: [printf, '::progress:: 50%% half\nhello %s\n', \$HOME]}"
wait_until 30 "exec-ok SUCCEEDED" task_status_is exec-ok SUCCEEDED
out=$(cli -o json task status --task-id exec-ok | jq -r '.nodes[0].result.stdout_tail')
[ "$out" = 'hello $HOME' ] || fail "exec-ok output: '$out'"
check_pass "exec --enable-intent with allowed_commands: sh refused (permanent, nothing ran), printf ran, progress line hidden"

# 4. A command that fails is FAILED but transient: the center may retry it.
submit exec-fails exec policy-node "{argv: [printf, '%d', not-a-number]}"
wait_until 30 "exec-fails FAILED" node_status_is exec-fails policy-node FAILED
kind=$("$BIN/edge-agent" --dump-wal "$E2E_DIR/policy-node/wal" 2>/dev/null |
  jq -r 'select(.task_id == "exec-fails" and .event_type == "FAILED") | .payload.kind')
[ "$kind" = transient ] || fail "a failing command's kind is '$kind', want transient"
check_pass "a command exiting non-zero is FAILED with kind transient"

finish
