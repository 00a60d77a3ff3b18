#!/usr/bin/env bash
# Installs every build and test dependency from Debian packages (run as root, or with sudo);
# with --build only what building the daemon and the client needs.
set -euo pipefail
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
pkgs=(
  build-essential cmake ninja-build ccache pkg-config git
  libboost1.81-dev nlohmann-json3-dev libsqlite3-dev libssl-dev libsystemd-dev
  libgtest-dev libgmock-dev libbenchmark-dev libomp-dev
  libpcre2-dev libicu-dev libcurl4-openssl-dev libcli11-dev libedit-dev
  clang libclang-rt-dev lld
  curl python3
  prometheus
  debhelper lintian rpm rpmlint cpio systemd systemd-container bash-completion groff-base man-db
  chromium  # the web chat's browser test (headless, driven by playwright-core)
  python3-numpy
  python3-jsonschema
)
# --build: only what building nurllamad and nurllama needs (scripts/quickstart.sh).
if [ "${1:-}" = --build ]; then
  pkgs=(build-essential cmake ninja-build ccache pkg-config libboost1.81-dev nlohmann-json3-dev libsqlite3-dev
        libssl-dev libsystemd-dev libomp-dev libpcre2-dev libicu-dev libcurl4-openssl-dev libcli11-dev libedit-dev curl)
fi
# Node.js (for the end-to-end tests with the npm clients): Debian's, unless one is already there.
[ "${1:-}" = --build ] || command -v npm >/dev/null 2>&1 || pkgs+=(nodejs npm)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
