#!/usr/bin/env bash
# Installs every Debian package the build, the tests and the demo need.
# Idempotent: when every package is already installed it does nothing (no
# network, no apt-get update), so `make test` stays fast on a warm machine.
set -euo pipefail

PACKAGES=(
  # toolchain
  build-essential cmake ninja-build ccache pkg-config clang libclang-rt-14-dev
  clang-format clang-tidy
  # libraries
  libyaml-cpp-dev libgrpc++-dev libprotobuf-dev protobuf-compiler
  protobuf-compiler-grpc libsqlite3-dev sqlite3 libpq-dev
  libnats-dev nlohmann-json3-dev libspdlog-dev libfmt-dev libcli11-dev
  libssl-dev libcurl4-openssl-dev libgtest-dev libgmock-dev libbenchmark-dev
  libjemalloc-dev
  # the orchestrator's HTTP server (cpp-httplib, src/orchestrator/http/README.md)
  # and its Prometheus metrics (prometheus-cpp's core library)
  libcpp-httplib-dev prometheus-cpp-dev
  # servers the tests start themselves
  postgresql nats-server
  # process and network tooling used by tests
  procps iproute2 nftables psmisc jq python3
  # HTTP tests: curl, and promtool (package prometheus) to check /metrics
  curl prometheus
  # the dashboard's browser tests (web/): Playwright drives Debian's chromium
  chromium
  # packaging (make package): dpkg-deb, dpkg-shlibdeps; systemd-analyze verify
  dpkg-dev systemd
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

# The dashboard (web/) is built with Node.js and npm: the machine's own when
# it has them (e.g. a newer nodejs that bundles npm), Debian's otherwise.
if ! command -v npm >/dev/null 2>&1; then
  missing+=(nodejs npm)
fi

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "setup-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
