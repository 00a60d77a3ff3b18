#!/usr/bin/env bash
# Side-by-side speed of nurllama and llama.cpp (native llama-bench) on the same files and thread
# count, idle and with one core kept busy by another process. Not a test: it takes a long time.
#
#   tests/bench/side-by-side.sh [BUILD_DIR=build] [THREADS=2] [REPS=3]
#
# Per file and load, ROUNDS (idle, default 3) / BUSY_ROUNDS (default 2) rounds run ours, then
# llama.cpp, close together; the table gives medians over rounds and the median of the per-round
# ratios. Figures: pp512, tg128 (`llama-bench -p 512 -n 128`), pp512 at depth DEPTH (default
# 4096; `llama-bench -p 512 -n 0 -d DEPTH`), TTFT of a ~300-token chat prompt through nurllamad
# against llama.cpp's prompt time for the same token count (`llama-bench -p N -n 0`), total
# tokens/s of 4 parallel streams through nurllamad against one stream, and the peak RSS of the
# pp512/tg128 runs of both. Load averages are printed before and after every round. Each round
# also measures the ceiling of the busy/idle ratio: THREADS independent one-thread generation runs
# at once, their tokens/s summed — what an engine with no synchronisation loss at all could keep
# under the same load, since the machine gives our THREADS threads the same share of its cores
# either way (CEILING=0 skips it).
# Files (MODELS_DIR, default /tmp/nurl-bench-models, never the repo) come from nurl-synth-model:
# Qwen2.5-0.5B-shaped Q4_K_M and Q8_0, Llama-3.2-1B-shaped Q8_0, and a Q4_K_M made by
# llama-quantize from the Qwen2.5-0.5B-shaped f16 master (per-tensor types as llama.cpp picks).
# llama.cpp: LLAMACPP (default ../shared/tools/llama.cpp); its bin/ and lib/ are used as they are,
# or, where the shared copy holds its symlinks as small text files naming their targets, from a
# private copy under /tmp with those links restored. ONLY=<file stem> runs one file; DEPTH=0 and
# DAEMON=0 skip those columns. TIER=avx2 (or avx_vnni) measures an older CPU's code on this one:
# our kernels capped at that tier (nurl-bench --tier, NURLLAMA_CPU_TIER for the daemon) against
# llama.cpp's variant for it alone (haswell, alderlake) in a private bin/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-build}
threads=${2:-2}
reps=${3:-3}
models_dir=${MODELS_DIR:-/tmp/nurl-bench-models}
llamacpp=${LLAMACPP:-$root/../shared/tools/llama.cpp}
testdata=${NURL_TESTDATA:-$root/../shared/testdata}
vocab=$testdata/models/qwen2-F16-embQ4_0.gguf
bench=$root/$build/tests/bench/nurl-bench
synth=$root/$build/tests/bench/nurl-synth-model
daemon=$root/$build/daemon/nurllamad
only=${ONLY:-}
depth=${DEPTH:-4096}
use_daemon=${DAEMON:-1}
use_ceiling=${CEILING:-1}
rounds=${ROUNDS:-3}
busy_rounds=${BUSY_ROUNDS:-2}
n_gen=${TG:-128}   # generation steps (tg128); fewer only to save time on a crowded machine

# llama.cpp's tools, with their library symlinks intact.
llama_bin=$llamacpp/bin
if ! "$llama_bin/llama-bench" --help >/dev/null 2>&1; then
  fixed=/tmp/nurl-llamacpp
  rm -rf "$fixed" && mkdir -p "$fixed"
  cp -r "$llamacpp/bin" "$llamacpp/lib" "$fixed/" && chmod -R u+w "$fixed"
  for f in "$fixed"/bin/* "$fixed"/lib/*; do
    [[ $(stat -c %s "$f") -lt 256 ]] || continue
    target=$(cat "$f")
    [[ -e "$(dirname "$f")/$target" ]] && ln -sf "$target" "$f"
  done
  llama_bin=$fixed/bin
fi
"$llama_bin/llama-bench" --help >/dev/null 2>&1 || { echo "llama-bench does not run from $llama_bin" >&2; exit 1; }

# A capped tier: llama.cpp's own variant for it is the only one its loader can find.
tier=${TIER:-}
tier_args=()
if [[ -n "$tier" ]]; then
  case $tier in
    avx2) variant=haswell ;;
    avx_vnni) variant=alderlake ;;
    avx512) variant=zen4 ;;
    *) echo "TIER must be avx2, avx_vnni or avx512" >&2; exit 2 ;;
  esac
  capped=/tmp/nurl-llamacpp-$variant
  rm -rf "$capped" && mkdir -p "$capped/bin"
  cp "$llama_bin"/llama-bench "$llama_bin"/llama-quantize "$capped/bin/"
  ln -s "$(cd "$llama_bin/../lib" && pwd)" "$capped/lib"
  ln -s "../lib/libggml-cpu-$variant.so" "$capped/bin/libggml-cpu-$variant.so"
  llama_bin=$capped/bin
  tier_args=(--tier "$tier")
  export NURLLAMA_CPU_TIER=$tier
  "$llama_bin/llama-bench" --help 2>&1 | grep -q "libggml-cpu-$variant" || { echo "llama.cpp's $variant variant does not load" >&2; exit 1; }
fi

mkdir -p "$models_dir"
make_file() {  # stem → path (written once)
  local stem=$1 f=$models_dir/$1.gguf
  if [[ ! -f "$f" ]]; then
    case $stem in
      *-llamaquant)
        local master=$models_dir/${stem%-q4_k_m-llamaquant}-f16.gguf
        [[ -f "$master" ]] || "$synth" --shape "${stem%-q4_k_m-llamaquant}" --mix f16 --vocab-from "$vocab" --out "$master" >&2
        "$llama_bin/llama-quantize" "$master" "$f" Q4_K_M 2 >/dev/null 2>&1 ;;
      *) "$synth" --shape "${stem%-*}" --mix "${stem##*-}" --vocab-from "$vocab" --out "$f" >&2 ;;
    esac
  fi
  echo "$f"
}
declare -a files=()
for stem in qwen2.5-0.5b-q4_k_m qwen2.5-0.5b-q4_k_m-llamaquant qwen2.5-0.5b-q8_0 llama-3.2-1b-q8_0; do
  [[ -n "$only" && "$stem" != "$only" ]] && continue
  files+=("$(make_file "$stem")")
done

spin_pid=""
start_spin() { timeout 3600 sh -c 'while :; do :; done' & spin_pid=$!; sleep 0.3; }
stop_spin() { [[ -n "$spin_pid" ]] && kill "$spin_pid" 2>/dev/null; wait "$spin_pid" 2>/dev/null || true; spin_pid=""; }
trap stop_spin EXIT

# Runs a command with its stdout collapsed to one line; the peak RSS (MiB) of the process goes to $rss_file.
rss_file=$(mktemp)
with_rss() {
  /usr/bin/time -f '%M' -o "$rss_file.raw" "$@" | tr '\n' ' '
  echo $(($(tail -n 1 "$rss_file.raw") / 1024)) >"$rss_file"
}
# THREADS independent one-thread tg runs of nurl-bench at once: their tokens/s, summed.
ceiling() {
  local outs=() pids=() i
  for ((i = 0; i < threads; i++)); do
    outs+=("$(mktemp)")
    "$bench" "$1" --threads 1 --reps 1 --n-gen "$n_gen" --skip-pp --skip-ttft --json "${tier_args[@]}" >"${outs[i]}" &
    pids+=($!)
  done
  wait "${pids[@]}"  # these runs only, never the spinner
  python3 -c 'import json,sys; print(sum(json.loads(open(p).read().splitlines()[-1])["tg"] for p in sys.argv[1:]))' "${outs[@]}"
  rm -f "${outs[@]}"
}
lbench() { "$llama_bin/llama-bench" -m "$1" -t "$threads" -o json "${@:2}" 2>/dev/null | tr '\n' ' '; }

results=()
for f in "${files[@]}"; do
  for load in idle busy1; do
    n=$rounds
    [[ $load == busy1 ]] && n=$busy_rounds
    for ((round = 1; round <= n; round++)); do
      [[ $load == busy1 ]] && start_spin
      la0=$(cut -d' ' -f1-3 /proc/loadavg)
      ours=$(with_rss "$bench" "$f" --threads "$threads" --reps "$reps" --n-gen "$n_gen" --json --skip-ttft "${tier_args[@]}" | grep -o '{.*}')
      ours_rss=$(cat "$rss_file")
      theirs=$(with_rss "$llama_bin/llama-bench" -m "$f" -t "$threads" -r "$reps" -o json -p 512 -n "$n_gen" 2>/dev/null)
      theirs_rss=$(cat "$rss_file")
      ours_d='{}' theirs_d='[]'
      if ((depth > 0)); then
        ours_d=$("$bench" "$f" --threads "$threads" --reps 1 --depth "$depth" --skip-pp --skip-tg --skip-ttft --json "${tier_args[@]}" | tail -n 1)
        theirs_d=$(lbench "$f" -r 1 -p 512 -n 0 -d "$depth")
      fi
      ours_s='{}' theirs_p='[]'
      if ((use_daemon)); then
        ours_s=$(python3 "$here/daemon-bench.py" --nurllamad "$daemon" --model "$f" | tail -n 1)
        n_tok=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["prompt_tokens"])' "$ours_s")
        theirs_p=$(lbench "$f" -r "$reps" -p "$n_tok" -n 0)
      fi
      ceil=0
      ((use_ceiling)) && ceil=$(ceiling "$f")
      stop_spin
      la1=$(cut -d' ' -f1-3 /proc/loadavg)
      echo "== $(basename "$f") $load round $round/$n, load average before $la0, after $la1" >&2
      results+=("$(python3 -c 'import json,sys; k=["file","load","la0","la1","ours","ours_rss","theirs","theirs_rss","ours_d","theirs_d","ours_s","theirs_p","ceiling"]; print(json.dumps(dict(zip(k, sys.argv[1:]))))' \
        "$(basename "$f" .gguf)" "$load" "$la0" "$la1" "$ours" "$ours_rss" "$theirs" "$theirs_rss" "$ours_d" "$theirs_d" "$ours_s" "$theirs_p" "$ceil")")
    done
  done
done
rm -f "$rss_file" "$rss_file.raw"

python3 "$here/side-by-side-table.py" "${results[@]}"
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); our kernels: ${tier:-best of this CPU}; llama.cpp: $(cd "$(dirname "$0")" && "$llama_bin/llama-bench" --help 2>&1 | grep -o 'libggml-cpu-[a-z0-9]*' | head -n 1)"
