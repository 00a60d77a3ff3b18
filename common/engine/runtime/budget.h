// A constrained document that must end within a token budget (num_predict, the context's room).
//
// `draws` counts the tokens still to be sampled, this one included; the last of them can only end
// the generation. A draw is kept when the document can still be completed after it within the
// draws left, at one byte per token (the matcher's distance; every vocabulary has tokens for
// the single bytes that shortest completions use); otherwise the token is drawn again among
// those that start a shortest completion (TokenFilter::fill_shortest), so the model's own text
// stays as long as there is room, and the document then closes by the shortest way that the
// schema allows (required properties, minItems and minLength included). With room to spare no
// draw is ever replaced.
#pragma once

#include <cstdint>
#include <span>

#include "engine/grammar/token-filter.h"
#include "engine/runtime/sampler.h"

namespace nurl {

// Draws from `mask` (the constraint's mask for this step), keeping the budget as above; draws < 0
// is no budget. `scratch`: n_vocab bits of working space.
Sample sample_within(Sampler& sampler, grammar::Constraint& c, std::span<const float> logits,
                     std::span<const uint64_t> mask, std::span<uint64_t> scratch, int64_t draws);

// The tokens a shortest document takes from the state of `c` (a copy, so the caller's is kept),
// taking the longest token that starts a shortest completion each time; counting stops after
// `cap`. -1 if this vocabulary cannot spell a shortest completion.
int64_t shortest_document_tokens(grammar::Constraint c, int64_t cap);

}  // namespace nurl
