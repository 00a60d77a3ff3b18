#!/usr/bin/env bash
# The whole test suite: install dependencies, build, run every test (unit, golden, end-to-end, fuzz smoke).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh
# The npm clients of the end-to-end tests (pinned by tests/e2e/package-lock.json).
(cd tests/e2e && npm ci --ignore-scripts --no-audit --no-fund >/dev/null)
cd "${BUILD_DIR:-build}"
ctest --output-on-failure -j "${JOBS:-$(nproc)}" --timeout 900
