// Inspection taps behind `nurllama tokenize|detok|vocab|logits`: POST /api/tokenize,
// /api/detokenize, /api/vocab and /api/logits. They read the model's file directly (tokenizer from
// the GGUF metadata; logits from a private one-sequence context on a background thread), so they
// answer exactly what the engine computes, independent of the resident models. POST /tokenize
// and /detokenize are llama-server's names for the same taps (its defaults: add_special false;
// with_pieces gives {"id","piece"}; without a "model", the one resident model).
#pragma once

#include "http/router.h"
#include "routes/context.h"

namespace nurl {
void add_inspect_routes(http::Router& r, RouteContext& ctx);
}
