#!/usr/bin/env bash
# Builds every libFuzzer target with clang in its own build directory and runs each one for a
# bounded time on a seed corpus generated into a temporary directory. Fails on any crash,
# sanitizer report, leak or timeout; exits 77 (ctest: skipped) only when clang++ is absent.
#
#   tests/fuzz/run-fuzzers.sh <fuzz-build-dir> [fuzzer-name...]
#   NURL_FUZZ_SECONDS     seconds per fuzzer (default 30)
#   NURL_FUZZ_TOTAL       cap on all fuzzers together, seconds (default 80): the per-fuzzer time
#                         shrinks when many fuzzers exist
#   NURL_FUZZ_JOBS        build parallelism (default: nproc)
#   NURL_TESTDATA         the shared test data (seed sources); default ../shared/testdata
# Crash inputs are kept in <fuzz-build-dir>/artifacts/<name>/ (reproduce: <binary> <crash-file>).
set -euo pipefail

src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:?usage: run-fuzzers.sh <fuzz-build-dir> [fuzzer-name...]}
shift
mkdir -p "$build"
build=$(cd "$build" && pwd)
seconds=${NURL_FUZZ_SECONDS:-30}
total=${NURL_FUZZ_TOTAL:-80}
jobs=${NURL_FUZZ_JOBS:-$(nproc)}
testdata=${NURL_TESTDATA:-$src/../shared/testdata}

cxx=${NURL_FUZZ_CXX:-clang++}
cc=${NURL_FUZZ_CC:-clang}
if ! command -v "$cxx" >/dev/null 2>&1; then
  echo "SKIPPED: $cxx not found; the fuzzers need clang (scripts/install-deps.sh installs it)."
  exit 77
fi

# 1. A clang build with only the fuzz targets (tests off: no GoogleTest), reusing ccache.
if [ ! -f "$build/CMakeCache.txt" ]; then
  echo "== configuring $build with $cxx"
  CC=$cc CXX=$cxx cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_CXX_FLAGS_DEBUG="-g -O1" -DCMAKE_C_FLAGS_DEBUG="-g -O1" \
    -DNURLLAMA_BUILD_FUZZERS=ON -DNURLLAMA_BUILD_TESTS=OFF -DNURLLAMA_CUDA=OFF \
    -DNURLLAMA_TESTDATA="$testdata" >"$build/configure.log" 2>&1 || {
    cat "$build/configure.log"
    echo "FAILED: configuring the fuzz build"
    exit 1
  }
fi
echo "== building fuzz targets"
start=$(date +%s)
cmake --build "$build" --target nurl_fuzzers -j "$jobs" >"$build/build.log" 2>&1 || {
  tail -50 "$build/build.log"
  echo "FAILED: building the fuzz targets (log: $build/build.log)"
  exit 1
}
echo "   built in $(($(date +%s) - start)) s"

# 2. Which fuzzers: every fuzzers/<name>.txt, or the names given.
shopt -s nullglob
manifests=("$build"/fuzzers/*.txt)
if [ $# -gt 0 ]; then
  manifests=()
  for n in "$@"; do manifests+=("$build/fuzzers/$n.txt"); done
fi
if [ ${#manifests[@]} -eq 0 ]; then
  echo "FAILED: no fuzz targets registered (nurl_add_fuzzer)"
  exit 1
fi
per=$seconds
if [ $((per * ${#manifests[@]})) -gt "$total" ]; then per=$((total / ${#manifests[@]})); fi
[ "$per" -ge 1 ] || per=1

work=$(mktemp -d "${TMPDIR:-/tmp}/nurl-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
failed=()
for m in "${manifests[@]}"; do
  name=$(basename "$m" .txt)
  [ -f "$m" ] || { echo "FAILED: unknown fuzzer $name"; failed+=("$name"); continue; }
  bin=$(sed -n 1p "$m")
  seeder=$(sed -n 2p "$m")
  corpus="$work/$name"
  artifacts="$build/artifacts/$name"
  mkdir -p "$corpus" "$artifacts"
  if [ -n "$seeder" ]; then
    "$seeder" "$corpus" "$testdata" || { echo "FAILED: $name seed generator"; failed+=("$name"); continue; }
  fi
  echo "== $name: ${per}s, $(ls "$corpus" | wc -l) seeds"
  log="$work/$name.log"
  # -timeout: one input taking 10 s is a hang; -rss_limit_mb: a blow-up is a failure, not swap.
  if "$bin" "$corpus" -max_total_time="$per" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
       -print_final_stats=1 -artifact_prefix="$artifacts/" >"$log" 2>&1; then
    grep -E '^stat::(number_of_executed_units|new_units_added|peak_rss_mb)|^#[0-9]+ +DONE' "$log" | sed 's/^/   /'
    echo "   corpus: $(ls "$corpus" | wc -l) inputs"
  else
    tail -60 "$log"
    echo "FAILED: $name (crash input in $artifacts/)"
    failed+=("$name")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED fuzzers: ${failed[*]}"
  exit 1
fi
echo "all ${#manifests[@]} fuzzers ran clean"
