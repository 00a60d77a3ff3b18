#!/usr/bin/env bash
# Fresh machine → a running nurllamad chatting with a model.
# MODEL=path/to/model.gguf uses a local file (works offline).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh
MODEL=${MODEL:-../shared/testdata/models/stories260K.gguf}
echo "quickstart: the daemon and the chat arrive with their issues; for now, the model's header:"
./build/daemon/nurllamad inspect "$MODEL" | head -40
