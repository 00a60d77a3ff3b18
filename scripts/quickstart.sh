#!/usr/bin/env bash
# A fresh clone → a running nurllamad answering with a model: installs what the build needs,
# builds only nurllamad and nurllama (no tests, in build-quick/), starts the daemon as you unless
# one already answers, and runs the model once.
#   MODEL=path/to/model.gguf    a local file (works offline)
#   MODEL=hf.co/ORG/REPO:QUANT  pulled on demand (the default, when the network is there)
#   PROMPT="..."                what to ask
set -euo pipefail
started=""
cd "$(dirname "$0")/.."
./scripts/install-deps.sh --build
BUILD_DIR=${BUILD_DIR:-build-quick}
# ccache (installed above) keyed on paths relative to the clone, so another clone reuses the objects.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
JOBS=${JOBS:-$(nproc)}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DNURLLAMA_BUILD_TESTS=OFF -DNURLLAMA_CUDA=OFF >/dev/null
cmake --build "$BUILD_DIR" --target nurllamad nurllama -j "$JOBS"
client="$BUILD_DIR/client/nurllama"

PROMPT=${PROMPT:-Once upon a time}
if [ -z "${MODEL:-}" ]; then
  MODEL=hf.co/bartowski/SmolLM2-360M-Instruct-GGUF:Q4_K_M
  if ! curl -sfI --max-time 5 https://huggingface.co >/dev/null 2>&1; then
    local_model=""
    for m in "${NURL_TESTDATA:-../shared/testdata}/models/stories260K.gguf"; do
      [ -f "$m" ] && local_model=$m && break
    done
    if [ -z "$local_model" ]; then
      echo "quickstart: no network (huggingface.co is unreachable) and no local model: run again with MODEL=/path/to/model.gguf" >&2
      exit 1
    fi
    echo "quickstart: no network (huggingface.co is unreachable): using the local model $local_model instead of $MODEL"
    MODEL=$local_model
  fi
fi

# The client finds a daemon with no configuration: yours first, then the system service's.
if ! "$client" ps >/dev/null 2>&1; then
  echo "quickstart: starting nurllamad as $(id -un) (log: nurllama logs)"
  nohup "$BUILD_DIR/daemon/nurllamad" >/dev/null 2>&1 &
  started=$!
  for _ in $(seq 1 100); do
    "$client" ps >/dev/null 2>&1 && break
    sleep 0.1
  done
  "$client" ps >/dev/null || { "$client" logs -n 20 || true; exit 1; }
fi
echo "quickstart: nurllama run $MODEL \"$PROMPT\""
"$client" run "$MODEL" "$PROMPT"
echo
echo "quickstart: nurllamad keeps running ($client ps, $client logs)${started:+; stop it with: kill $started}"
