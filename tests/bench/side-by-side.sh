#!/usr/bin/env bash
# Side-by-side speed of nurllama and llama.cpp on the same synthetic files and thread count,
# idle and with one core kept busy by another process. Not a test: it takes minutes.
#
#   tests/bench/side-by-side.sh [BUILD_DIR=build] [THREADS=2] [REPS=3]
#
# ROUNDS (default 3) and BUSY_ROUNDS (default 1): how many times the pair (ours, then llama.cpp)
# is run per file, idle and busy. A shared machine slows down for minutes at a time, so each
# round's ratio compares runs made close together; the table gives the medians over rounds.
# Needs: the nurl-bench and nurl-synth-model targets built in BUILD_DIR; node-llama-cpp installed
# outside the repo (LLAMACPP_DIR, default /tmp/bench-llamacpp: `npm install node-llama-cpp` there).
# Synthetic models are written to MODELS_DIR (default /tmp/nurl-bench-models), never the repo.
# llama.cpp's tg128 comes from a per-token JavaScript loop, which understates its native
# generation speed by about a third; the table says so.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-build}
threads=${2:-2}
reps=${3:-3}
models_dir=${MODELS_DIR:-/tmp/nurl-bench-models}
llamacpp_dir=${LLAMACPP_DIR:-/tmp/bench-llamacpp}
testdata=${NURL_TESTDATA:-$root/../shared/testdata}
vocab=$testdata/models/qwen2-F16-embQ4_0.gguf
bench=$root/$build/tests/bench/nurl-bench
synth=$root/$build/tests/bench/nurl-synth-model
only=${ONLY:-}   # e.g. ONLY=qwen2.5-0.5b-q8_0 to run one file

mkdir -p "$models_dir"
declare -a files=()
for spec in qwen2.5-0.5b:q4_k_m qwen2.5-0.5b:q8_0 llama-3.2-1b:q8_0; do
  shape=${spec%%:*} mix=${spec##*:}
  f=$models_dir/$shape-$mix.gguf
  [[ -n "$only" && "$shape-$mix" != "$only" ]] && continue
  [[ -f "$f" ]] || "$synth" --shape "$shape" --mix "$mix" --vocab-from "$vocab" --out "$f"
  files+=("$f")
done

spin_pid=""
start_spin() { timeout 900 sh -c 'while :; do :; done' & spin_pid=$!; sleep 0.3; }
stop_spin() { [[ -n "$spin_pid" ]] && kill "$spin_pid" 2>/dev/null; wait "$spin_pid" 2>/dev/null || true; spin_pid=""; }
trap stop_spin EXIT

json_of() { tail -n 1; }
rounds=${ROUNDS:-3}
busy_rounds=${BUSY_ROUNDS:-1}
results=()
for f in "${files[@]}"; do
  for load in idle busy1; do
    n=$rounds
    [[ $load == busy1 ]] && n=$busy_rounds
    for ((round = 1; round <= n; round++)); do
      [[ $load == busy1 ]] && start_spin
      echo "== $(basename "$f") $load round $round/$n (load average: $(cut -d' ' -f1-3 /proc/loadavg))" >&2
      ours=$("$bench" "$f" --threads "$threads" --reps "$reps" --json | json_of)
      theirs=$(LLAMACPP_DIR=$llamacpp_dir node "$here/llamacpp-bench.mjs" "$f" "$threads" "$reps" | json_of)
      stop_spin
      echo "   nurllama  $ours" >&2
      echo "   llama.cpp $theirs" >&2
      results+=("$(basename "$f")|$load|$ours|$theirs")
    done
  done
done

python3 - "${results[@]}" <<'EOF'
import json, statistics, sys
from collections import OrderedDict
groups = OrderedDict()
for row in sys.argv[1:]:
    name, load, a, b = row.split("|", 3)
    groups.setdefault((name, load), []).append((json.loads(a), json.loads(b)))
med = statistics.median
print("| file | load | rounds | pp512 ours | pp512 llama.cpp | ratio | tg128 ours | tg128 llama.cpp* | ratio | ttft300 ours ms | ttft300 llama.cpp ms | peak RSS ours MiB | peak RSS llama.cpp MiB |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for (name, load), runs in groups.items():
    m = lambda side, k: med(r[side][k] for r in runs)
    ratio = lambda k: med(r[0][k] / r[1][k] for r in runs if r[1][k])
    print(f"| {name} | {load} | {len(runs)} | {m(0, 'pp512'):.1f} | {m(1, 'pp512'):.1f} | {ratio('pp512'):.2f}x | "
          f"{m(0, 'tg128'):.1f} | {m(1, 'tg128'):.1f} | {ratio('tg128'):.2f}x | {m(0, 'ttft300_ms'):.0f} | "
          f"{m(1, 'ttft300_ms'):.0f} | {m(0, 'peak_rss_mib'):.0f} | {m(1, 'peak_rss_mib'):.0f} |")
print("\nFigures are medians over the rounds; each ratio is the median of the per-round ratios.")
print("*llama.cpp's tg128 is measured through node-llama-cpp's per-token JavaScript loop, which understates "
      "its native generation speed by about a third. Its RSS is the whole node process.")
EOF
