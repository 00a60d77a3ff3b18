#!/usr/bin/env bash
# The whole test suite: install dependencies, build, run every test (unit, golden, end-to-end, fuzz smoke).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh
cd "${BUILD_DIR:-build}"
ctest --output-on-failure -j "${JOBS:-$(nproc)}" --timeout 900
