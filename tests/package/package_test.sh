#!/usr/bin/env bash
# `make package` and `make install` (issue 22), end to end:
#  1. scripts/package.sh builds the three .debs and the release tarball from
#     BIN_DIR;
#  2. the .debs, unpacked with dpkg -x into a throwaway root, hold the
#     binaries, the units, /etc/apollo/*.yaml (as conffiles) and schema.sql;
#  3. systemd-analyze verify accepts both units with no warning at all (it
#     exits 0 on unknown keys, so its output must be empty), pointed at the
#     unpacked binaries; and the units carry the hardening they promise;
#  4. the installed binaries run against each other on 127.0.0.1 with the
#     installed configuration files (only the store path, state dirs, node
#     ids and the port given as flags): the seed's task file, which selects
#     role=worker, succeeds on both agents;
#  5. the tarball is laid out as bin/, config/, schema.sql, and its
#     orchestrator says the release;
#  6. `package.sh install` into DESTDIR+PREFIX lays out bin/, etc/apollo,
#     share/apollo and units whose ExecStart points into PREFIX;
#  7. the three machines of docs/operations.md, in network namespaces, from
#     the unpacked packages with TLS and tokens (three_machines.sh; root).
# Usage: package_test.sh BIN_DIR
set -uo pipefail
BIN=$(cd "${1:?bin dir}" && pwd)
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
T=$(mktemp -d /tmp/apollo-package-test.XXXXXX)
PIDS=()
FAILURES=0
cleanup() {
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
  wait 2>/dev/null
  if [ "$FAILURES" = 0 ]; then rm -rf "$T"; else echo "kept $T"; fi
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; FAILURES=$((FAILURES + 1)); }
die() { fail "$*"; for f in "$T"/*.log; do [ -f "$f" ] && { echo "--- $f"; tail -20 "$f"; }; done; exit 1; }
ok() { echo "ok   $*"; }
VERSION=$(sed -n 's/^project(apollo11 VERSION \([0-9][0-9.]*\).*/\1/p' CMakeLists.txt)
ARCH=$(dpkg --print-architecture)

bash scripts/package.sh package "$BIN" "$T/out" >"$T/package.log" 2>&1 || die "package.sh package failed"
for p in apollo-orchestrator apollo-edge-agent apollo-cli; do
  [ -f "$T/out/${p}_${VERSION}_${ARCH}.deb" ] || die "no $T/out/${p}_${VERSION}_${ARCH}.deb"
  dpkg-deb -x "$T/out/${p}_${VERSION}_${ARCH}.deb" "$T/root" || die "dpkg -x $p"
done
R=$T/root
for f in usr/bin/apollo-orchestrator usr/bin/apollo-edge-agent usr/bin/apollo-cli \
         lib/systemd/system/apollo-orchestrator.service lib/systemd/system/apollo-edge-agent.service \
         etc/apollo/orchestrator.yaml etc/apollo/edge-agent.yaml usr/share/apollo/schema.sql; do
  [ -e "$R/$f" ] || fail "the packages do not install /$f"
done
[ "$(dpkg-deb -f "$T/out/apollo-orchestrator_${VERSION}_${ARCH}.deb" Version)" = "$VERSION" ] || fail "Version field"
dpkg-deb --ctrl-tarfile "$T/out/apollo-orchestrator_${VERSION}_${ARCH}.deb" | tar -xO ./conffiles |
  grep -qx /etc/apollo/orchestrator.yaml || fail "orchestrator.yaml is not a conffile"
dpkg-deb -f "$T/out/apollo-edge-agent_${VERSION}_${ARCH}.deb" Depends | grep -q 'libgrpc++' ||
  fail "apollo-edge-agent does not depend on its libraries"
cmp -s "$R/usr/share/apollo/schema.sql" schema.sql || fail "the packaged schema.sql differs"
cmp -s "$R/usr/share/apollo/ui/index.html" web/dist/index.html || fail "the dashboard is not in /usr/share/apollo/ui"
grep -q '^  ui_dir: /usr/share/apollo/ui ' "$R/etc/apollo/orchestrator.yaml" ||
  fail "the packaged orchestrator.yaml does not point http.ui_dir at /usr/share/apollo/ui"
grep -qx 'store: sqlite:///var/lib/apollo-orchestrator/apollo.db' "$R/etc/apollo/orchestrator.yaml" ||
  fail "the packaged orchestrator.yaml does not keep its store in the state directory"
grep -qx 'state_dir: /var/lib/apollo-edge-agent' "$R/etc/apollo/edge-agent.yaml" ||
  fail "the packaged edge-agent.yaml does not keep its state in the state directory"
[ $FAILURES = 0 ] && ok "three .debs with binaries, units, conffiles in /etc/apollo, schema.sql"

command -v systemd-analyze >/dev/null || die "systemd-analyze is missing (apt-get install systemd)"
mkdir -p "$T/units"
for u in apollo-orchestrator apollo-edge-agent; do
  unit=$R/lib/systemd/system/$u.service
  sed "s|^ExecStart=/usr/bin/|ExecStart=$R/usr/bin/|" "$unit" >"$T/units/$u.service"
  for want in User=apollo StateDirectory=$u NoNewPrivileges=yes ProtectSystem=strict \
              "ExecStart=/usr/bin/$u --config /etc/apollo/${u#apollo-}.yaml" PrivateTmp=yes; do
    grep -qxF "$want" "$unit" || fail "$u.service lacks '$want'"
  done
done
out=$(systemd-analyze verify --man=no "$T"/units/*.service 2>&1); rc=$?
[ "$rc" = 0 ] && [ -z "$out" ] || fail "systemd-analyze verify (exit $rc): $out"
# The check itself: a unit with an unknown key must not pass.
printf '[Service]\nExecStart=/bin/true\nProtectSystem=stricter\n' >"$T/units/bad.service"
[ -n "$(systemd-analyze verify --man=no "$T/units/bad.service" 2>&1)" ] ||
  fail "systemd-analyze verify says nothing about a bad unit: the check above proves nothing"
[ $FAILURES = 0 ] && ok "systemd-analyze verify: both units clean, with user, state dir and hardening"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
PORT=$(free_port)
"$R/usr/bin/apollo-orchestrator" --config "$R/etc/apollo/orchestrator.yaml" --listen "127.0.0.1:$PORT" \
  --store "sqlite://$T/apollo.db" >"$T/orchestrator.log" 2>&1 &
PIDS+=($!)
for n in edge-1 edge-2; do
  "$R/usr/bin/apollo-edge-agent" --config "$R/etc/apollo/edge-agent.yaml" --node-id "$n" \
    --orchestrator "127.0.0.1:$PORT" --state-dir "$T/$n" >"$T/$n.log" 2>&1 &
  PIDS+=($!)
done
cli() { "$R/usr/bin/apollo-cli" --server "127.0.0.1:$PORT" "$@"; }
connected() { [ "$(cli -o json node list | jq '[.nodes[] | select(.connected)] | length')" = 2 ]; }
for _ in $(seq 1 150); do connected 2>/dev/null && break; sleep 0.2; done
connected || die "the installed agents did not connect to the installed orchestrator in 30 s"
cli task submit --file examples/collect_metrics.yaml >"$T/submit.log" 2>&1 || die "submit the seed's task"
TASK=collect-metrics-1712345678-b7e2
done_on_both() {
  [ "$(cli -o json task status --task-id $TASK | jq -c '[.status, ([.nodes[].node_id] | sort)]')" = \
    '["SUCCEEDED",["edge-1","edge-2"]]' ]
}
for _ in $(seq 1 150); do done_on_both 2>/dev/null && break; sleep 0.2; done
done_on_both || die "the seed's task did not succeed on edge-1 and edge-2: $(cli task status --task-id $TASK 2>&1)"
ok "installed binaries and configs: the seed's task (role=worker) succeeded on edge-1 and edge-2"

TGZ=$T/out/apollo-11-v$VERSION-linux-$ARCH.tar.gz
mkdir -p "$T/tar" && tar -C "$T/tar" -xzf "$TGZ" || die "untar $TGZ"
for f in bin/orchestrator bin/edge-agent bin/apollo-cli config/orchestrator.yaml config/edge-agent.yaml schema.sql web/dist/index.html; do
  [ -e "$T/tar/apollo-11/$f" ] || fail "the tarball has no apollo-11/$f"
done
"$T/tar/apollo-11/bin/orchestrator" --version | grep -q "^orchestrator $VERSION (commit " ||
  fail "the tarball's orchestrator --version: $("$T/tar/apollo-11/bin/orchestrator" --version)"
[ $FAILURES = 0 ] && ok "tarball: apollo-11/{bin,config,schema.sql}"

DESTDIR=$T/dest bash scripts/package.sh install "$BIN" /opt/apollo >"$T/install.log" 2>&1 || die "package.sh install"
I=$T/dest/opt/apollo
for f in bin/apollo-orchestrator bin/apollo-edge-agent bin/apollo-cli etc/apollo/orchestrator.yaml \
         etc/apollo/edge-agent.yaml share/apollo/schema.sql lib/systemd/system/apollo-edge-agent.service; do
  [ -e "$I/$f" ] || fail "install: no \$PREFIX/$f"
done
grep -qx 'ExecStart=/opt/apollo/bin/apollo-edge-agent --config /opt/apollo/etc/apollo/edge-agent.yaml' \
  "$I/lib/systemd/system/apollo-edge-agent.service" || fail "install: the unit does not run from PREFIX"
echo "# edited" >>"$I/etc/apollo/edge-agent.yaml"
DESTDIR=$T/dest bash scripts/package.sh install "$BIN" /opt/apollo >>"$T/install.log" 2>&1 || die "install again"
tail -1 "$I/etc/apollo/edge-agent.yaml" | grep -qx '# edited' || fail "install again overwrote an edited config"
bash scripts/package.sh install "$BIN" relative/path >/dev/null 2>&1 && fail "install accepted a relative PREFIX"
[ $FAILURES = 0 ] && ok "install PREFIX: layout, units from PREFIX, edited configs kept"

# 7. The three machines of docs/operations.md in network namespaces, from
# the unpacked .debs and their configuration files (three_machines.sh).
bash tests/package/three_machines.sh "$R" "$T/3m" || fail "three machines in network namespaces"

[ $FAILURES = 0 ] && echo "all checks passed" || echo "$FAILURES check(s) failed"
[ $FAILURES = 0 ]
