// Sentence embeddings for /api/embed: the final (normed) hidden state of every prompt position,
// mean-pooled over the positions and L2-normalised, so the dot product of two embeddings is
// their cosine similarity. Needs a Context created with embedding_context_options().
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/error.h"
#include "engine/runtime/context.h"

namespace nurl {

// Options for a Context that computes embeddings: hidden states for every entry, no logits.
ContextOptions embedding_context_options(int n_ctx, int n_batch = 512, int n_threads = 0);

struct Embedding {
  std::vector<float> values;  // (n_embd), unit length
  int32_t n_tokens = 0;       // tokens pooled (after truncation)
  bool truncated = false;
};

// Evaluates `tokens` from position 0 of `seq` (clearing it first). A text longer than the context
// is cut to its first n_ctx tokens when `truncate`, else it is an error (ollama's `truncate`).
Result<Embedding> embed(Context& ctx, std::span<const int32_t> tokens, bool truncate = true, int seq = 0);

}  // namespace nurl
