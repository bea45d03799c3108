#!/usr/bin/env bash
# Release artefacts from built binaries (issue 22; docs/operations.md).
#
#   package.sh package BIN_DIR OUT_DIR
#       OUT_DIR/apollo-orchestrator_<v>_<arch>.deb, apollo-edge-agent_..., apollo-cli_...
#       and OUT_DIR/apollo-11-v<v>-linux-<arch>.tar.gz (bin/, config/, schema.sql, systemd/).
#   package.sh install BIN_DIR PREFIX
#       PREFIX/bin/apollo-{orchestrator,edge-agent,cli}, PREFIX/etc/apollo/*.yaml (kept if
#       present), PREFIX/share/apollo/{schema.sql,docs}, PREFIX/lib/systemd/system/*.service
#       (ExecStart pointing into PREFIX/bin). $DESTDIR is honoured.
#
# The release is CMake's project(VERSION) (read from CMakeLists.txt); the
# binaries must be from this tree. The packaged configuration files are
# config/*.yaml with only their state paths moved under /var/lib; every
# substitution is checked, so a reworded config fails here, not on a server.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "package.sh: $*" >&2; exit 1; }

VERSION=$(sed -n 's/^project(apollo11 VERSION \([0-9][0-9.]*\).*/\1/p' "$ROOT/CMakeLists.txt")
[ -n "$VERSION" ] || die "no project(apollo11 VERSION x.y.z) in CMakeLists.txt"
ARCH=$(dpkg --print-architecture 2>/dev/null || uname -m)

# sub FILE FROM TO: replace a whole line, which must be there exactly once.
sub() {
  local n; n=$(grep -cxF -- "$2" "$1" || true)
  [ "$n" = 1 ] || die "$1: expected the line '$2' once, found it $n time(s)"
  FROM=$2 TO=$3 perl -0pi -e 's/^\Q$ENV{FROM}\E$/$ENV{TO}/m' "$1"
}

# packaged_configs DIR STATE_ROOT UI_DIR: orchestrator.yaml and edge-agent.yaml
# as shipped in /etc/apollo, state under STATE_ROOT (/var/lib for the .debs),
# the dashboard's files in UI_DIR.
packaged_configs() {
  local dir=$1 state=$2 ui=$3
  mkdir -p "$dir"
  cp "$ROOT/config/orchestrator.yaml" "$ROOT/config/edge-agent.yaml" "$dir/"
  sub "$dir/orchestrator.yaml" "#   bin/orchestrator --config config/orchestrator.yaml" \
    "#   apollo-orchestrator --config /etc/apollo/orchestrator.yaml   (apollo-orchestrator.service)"
  sub "$dir/orchestrator.yaml" "store: sqlite://./var/apollo.db" \
    "store: sqlite://$state/apollo-orchestrator/apollo.db"
  sub "$dir/orchestrator.yaml" \
    '  ui_dir: ""                 # the dashboard'"'"'s files; "": ../web/dist beside the binary'"'"'s directory' \
    "  ui_dir: $ui   # the dashboard's files"
  sub "$dir/edge-agent.yaml" "#   bin/edge-agent --config config/edge-agent.yaml" \
    "#   apollo-edge-agent --config /etc/apollo/edge-agent.yaml   (apollo-edge-agent.service)"
  sub "$dir/edge-agent.yaml" "state_dir: ./var/agent" "state_dir: $state/apollo-edge-agent"
  sub "$dir/edge-agent.yaml" "# wal_path: ./var/agent/wal" "# wal_path: $state/apollo-edge-agent/wal"
}

check_bins() {
  local b
  for b in orchestrator edge-agent apollo-cli; do
    [ -x "$1/$b" ] || die "$1/$b is missing (make build)"
  done
}

# deb NAME BIN UNIT CONFIG DESCRIPTION: one .deb into $OUT.
deb() {
  local name=$1 bin=$2 unit=$3 config=$4 desc=$5
  local stage=$WORK/$name
  mkdir -p "$stage/DEBIAN" "$stage/usr/bin" "$stage/usr/share/doc/$name"
  install -m 0755 "$BIN_DIR/$bin" "$stage/usr/bin/$name"
  strip --strip-unneeded "$stage/usr/bin/$name" 2>/dev/null || true
  install -m 0644 "$ROOT/docs/operations.md" "$ROOT/docs/security.md" "$stage/usr/share/doc/$name/"
  if [ -n "$unit" ]; then
    mkdir -p "$stage/lib/systemd/system" "$stage/etc/apollo"
    install -m 0644 "$ROOT/packaging/systemd/$unit" "$stage/lib/systemd/system/"
    install -m 0644 "$WORK/etc/$config" "$stage/etc/apollo/"
    echo "/etc/apollo/$config" >"$stage/DEBIAN/conffiles"
    install -m 0755 "$ROOT/packaging/deb/postinst" "$ROOT/packaging/deb/postrm" "$stage/DEBIAN/"
    sed "s/@UNIT@/$unit/" "$ROOT/packaging/deb/prerm" >"$stage/DEBIAN/prerm"
    chmod 0755 "$stage/DEBIAN/prerm"
  fi
  if [ "$name" = apollo-orchestrator ]; then
    mkdir -p "$stage/usr/share/apollo"
    install -m 0644 "$ROOT/schema.sql" "$stage/usr/share/apollo/"
    cp -r "$ROOT/web/dist" "$stage/usr/share/apollo/ui"
  fi
  local depends
  depends=$(cd "$WORK/shlibs" && dpkg-shlibdeps -O -e "$stage/usr/bin/$name" 2>/dev/null |
            sed -n 's/^shlibs:Depends=//p')
  [ -n "$depends" ] || die "dpkg-shlibdeps found no dependencies of $name"
  [ -z "$unit" ] || depends="$depends, passwd"
  cat >"$stage/DEBIAN/control" <<CONTROL
Package: $name
Version: $VERSION
Architecture: $ARCH
Maintainer: Apollo-11 maintainers <apollo-11@localhost>
Section: admin
Priority: optional
Depends: $depends
Installed-Size: $(du -sk "$stage" | cut -f1)
Description: Apollo-11 $desc
 Apollo-11 is a task orchestration and state synchronisation framework:
 an orchestrator dispatches intents to edge agents and keeps every step of
 every task in its store. See /usr/share/doc/$name/operations.md.
CONTROL
  dpkg-deb --root-owner-group -Zxz --build "$stage" "$OUT/${name}_${VERSION}_${ARCH}.deb" >/dev/null
  echo "package.sh: $OUT/${name}_${VERSION}_${ARCH}.deb"
}

tarball() {
  local top=$WORK/tar/apollo-11
  mkdir -p "$top/bin" "$top/config" "$top/systemd"
  install -m 0755 "$BIN_DIR/orchestrator" "$BIN_DIR/edge-agent" "$BIN_DIR/apollo-cli" "$top/bin/"
  strip --strip-unneeded "$top"/bin/* 2>/dev/null || true
  install -m 0644 "$ROOT/config/orchestrator.yaml" "$ROOT/config/edge-agent.yaml" "$top/config/"
  install -m 0644 "$ROOT/schema.sql" "$ROOT/README.md" "$top/"
  install -m 0644 "$ROOT"/packaging/systemd/*.service "$top/systemd/"
  cp -r "$ROOT/docs" "$ROOT/examples" "$top/"
  mkdir -p "$top/web"
  cp -r "$ROOT/web/dist" "$top/web/dist"  # bin/../web/dist: where the orchestrator looks
  local tgz="$OUT/apollo-11-v$VERSION-linux-$ARCH.tar.gz"
  tar -C "$WORK/tar" --owner=0 --group=0 --sort=name -czf "$tgz" apollo-11
  echo "package.sh: $tgz"
}

do_install() {
  local prefix=$1 dest=${DESTDIR:-}
  local root=$dest$prefix
  mkdir -p "$root/bin" "$root/etc/apollo" "$root/share/apollo" "$root/lib/systemd/system"
  install -m 0755 "$BIN_DIR/orchestrator" "$root/bin/apollo-orchestrator"
  install -m 0755 "$BIN_DIR/edge-agent" "$root/bin/apollo-edge-agent"
  install -m 0755 "$BIN_DIR/apollo-cli" "$root/bin/apollo-cli"
  packaged_configs "$WORK/etc" /var/lib "$prefix/share/apollo/ui"
  local f
  for f in orchestrator.yaml edge-agent.yaml; do
    if [ -e "$root/etc/apollo/$f" ]; then
      echo "package.sh: keeping $root/etc/apollo/$f"
    else
      install -m 0644 "$WORK/etc/$f" "$root/etc/apollo/$f"
    fi
  done
  install -m 0644 "$ROOT/schema.sql" "$root/share/apollo/"
  cp -r "$ROOT/docs" "$root/share/apollo/"
  rm -rf "$root/share/apollo/ui"
  cp -r "$ROOT/web/dist" "$root/share/apollo/ui"
  for f in apollo-orchestrator.service apollo-edge-agent.service; do
    sed -e "s|/usr/bin/|$prefix/bin/|" -e "s|/etc/apollo/|$prefix/etc/apollo/|" \
      "$ROOT/packaging/systemd/$f" >"$root/lib/systemd/system/$f"
  done
  echo "package.sh: installed into $root"
}

[ $# = 3 ] || die "usage: package.sh package BIN_DIR OUT_DIR | install BIN_DIR PREFIX"
BIN_DIR=$(cd "$2" && pwd)
check_bins "$BIN_DIR"
[ -f "$ROOT/web/dist/index.html" ] || die "web/dist is missing: the dashboard is not built (make ui)"
WORK=$(mktemp -d /tmp/apollo-package.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
case $1 in
  package)
    OUT=$(mkdir -p "$3" && cd "$3" && pwd)
    rm -f "$OUT"/apollo-*.deb "$OUT"/apollo-11-v*.tar.gz
    command -v dpkg-deb >/dev/null || die "dpkg-deb is missing (apt-get install dpkg-dev)"
    mkdir -p "$WORK/shlibs/debian"
    printf 'Source: apollo-11\n\nPackage: apollo-11\nArchitecture: any\n' >"$WORK/shlibs/debian/control"
    packaged_configs "$WORK/etc" /var/lib /usr/share/apollo/ui
    deb apollo-orchestrator orchestrator apollo-orchestrator.service orchestrator.yaml \
      "orchestrator: the center that dispatches tasks"
    deb apollo-edge-agent edge-agent apollo-edge-agent.service edge-agent.yaml \
      "edge agent: carries out intents on a node"
    deb apollo-cli apollo-cli "" "" "command-line tool for operators"
    tarball
    ;;
  install)
    case $3 in /*) ;; *) die "PREFIX must be an absolute path, got '$3'" ;; esac
    do_install "$3"
    ;;
  *) die "unknown command '$1' (package or install)" ;;
esac
