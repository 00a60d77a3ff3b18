#!/usr/bin/env bash
# Fresh machine → a running nurllamad answering with a model: installs the dependencies, builds,
# starts the daemon (unless one already answers on the control socket) and runs the model once.
#   MODEL=path/to/model.gguf  a local file (works offline)
#   MODEL=hf.co/ORG/REPO:QUANT a model pulled on demand (the default)
#   PROMPT="..."               what to ask
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh
MODEL=${MODEL:-hf.co/bartowski/SmolLM2-360M-Instruct-GGUF:Q4_K_M}
PROMPT=${PROMPT:-Once upon a time}
# One socket path for the daemon and the client, wherever this runs.
export NURLLAMA_SOCKET=${NURLLAMA_SOCKET:-${XDG_RUNTIME_DIR:-/tmp/nurllama-$(id -u)}/nurllama/nurllamad.sock}
mkdir -p .cache
if ! curl -sf --unix-socket "$NURLLAMA_SOCKET" http://localhost/api/version >/dev/null 2>&1; then
  echo "quickstart: starting nurllamad (log: .cache/nurllamad.log, socket: $NURLLAMA_SOCKET)"
  nohup ./build/daemon/nurllamad >.cache/nurllamad.log 2>&1 &
  for _ in $(seq 1 100); do
    curl -sf --unix-socket "$NURLLAMA_SOCKET" http://localhost/api/version >/dev/null 2>&1 && break
    sleep 0.1
  done
  curl -sf --unix-socket "$NURLLAMA_SOCKET" http://localhost/api/version >/dev/null ||
    { echo "quickstart: nurllamad did not start:"; tail -20 .cache/nurllamad.log; exit 1; }
fi
echo "quickstart: nurllama run $MODEL \"$PROMPT\""
./build/client/nurllama run "$MODEL" "$PROMPT"
echo
echo "quickstart: nurllamad keeps running (stop it with: curl -X POST --unix-socket $NURLLAMA_SOCKET http://localhost/control/shutdown)"
