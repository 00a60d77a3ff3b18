// Generation options, mirroring ollama's request `options` (names and defaults as ollama
// documents them), so the daemon can fill this struct field by field from JSON.
// Invariant after validate(): every field is in its documented range; "disabled" values are
// normalised by the sampler (top_k <= 0, top_p >= 1, min_p <= 0, typical_p >= 1, penalties 1/0).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"

namespace nurl {

struct Options {
  // Context and length.
  int32_t num_ctx = 4096;     // tokens of context requested; bounded by the model's context length
  int32_t num_predict = -1;   // max tokens to generate; -1 = until the context is full
  int32_t num_keep = 0;       // reserved for context shifting; generation never shifts silently
  int32_t num_batch = 512;    // prompt tokens per prefill chunk
  bool truncate = true;       // a prompt too long for num_ctx: drop its oldest tokens (reported)
                              // after the first num_keep; false: an error instead

  // Sampling (llama.cpp chain order: penalties → top_k → typical_p → top_p → min_p → temperature).
  float temperature = 0.8f;   // <= 0: greedy (argmax of the penalised logits)
  int32_t top_k = 40;         // <= 0: off
  float top_p = 0.9f;         // >= 1: off
  float min_p = 0.0f;         // <= 0: off
  float typical_p = 1.0f;     // >= 1: off
  int32_t repeat_last_n = 64; // window of recent tokens the penalties look at; 0 off, -1 = num_ctx
  float repeat_penalty = 1.1f;  // 1: off
  float presence_penalty = 0.0f;
  float frequency_penalty = 0.0f;
  int64_t seed = -1;          // < 0: a random seed per request; otherwise the same seed → the same text

  // Stops.
  std::vector<std::string> stop;  // text that ends generation, never emitted

  // Log-probabilities of each generated token (from the distribution it was drawn from, see Sample).
  bool logprobs = false;
  int32_t top_logprobs = 0;   // also the N most likely alternatives (0..20)

  // Range checks; the message names the offending option.
  Result<void> validate() const;
};

// Options for greedy decoding with no penalties: what the goldens record.
Options greedy_options();

}  // namespace nurl
