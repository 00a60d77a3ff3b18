// Generation on top of a Context: prompt in, streamed text out.
//
// Generation is the per-sequence state machine shared by Session (one sequence, synchronous)
// and BatchRunner (many sequences, one batched forward per step): it plans the prompt (context
// bound, truncation, reuse of a cached prefix), then turns each logits row into a token through
// the Sampler, checks end-of-generation ids, num_predict and the context bound, and streams text
// through the tokenizer's StreamDecoder and the StopMatcher (stop strings are never emitted).
//
// Streaming contract: on_token(event) is called for every generated token (its text may be
// empty while a stop string or a UTF-8 character is unresolved), once between prefill chunks
// with token == -1 (a progress ping), and, when text was held back and is not part of a stop
// string, once at the end with token == -1 carrying it. Returning false stops at once; the
// result then says done_reason cancelled (not an error).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/error.h"
#include "engine/runtime/context.h"
#include "engine/runtime/options.h"
#include "engine/runtime/sampler.h"
#include "engine/runtime/stop.h"
#include "engine/tokenizer/tokenizer.h"

namespace nurl {

struct TokenEvent {
  int32_t token = -1;          // generated id; -1 for a prefill ping or the final flush
  std::string_view text;       // text to show now (may be empty)
  const Sample* sample = nullptr;  // logprob and top alternatives when asked for, else null
  int32_t n_prompt_done = 0;   // prompt tokens evaluated so far
  int32_t n_prompt = 0;        // prompt tokens to evaluate in this request
};
using OnToken = std::function<bool(const TokenEvent&)>;

// Durations in nanoseconds, as ollama's *_duration fields.
struct Timings {
  int64_t load_ns = 0;         // filled by whoever loaded the model
  int64_t prompt_eval_ns = 0;  // prefill, up to the first logits
  int64_t eval_ns = 0;         // generation steps after the first token
  int64_t total_ns = 0;
  int32_t prompt_eval_count = 0;  // prompt tokens evaluated (cached prefix tokens excluded)
  int32_t prompt_cached = 0;      // prompt tokens reused from the cache
  int32_t eval_count = 0;         // tokens generated
};

struct GenerateResult {
  DoneReason done_reason = DoneReason::stop;
  Timings timings;
  std::vector<int32_t> tokens;  // generated ids (an end-of-generation id is not included)
  std::string text;             // everything emitted through on_token
  int32_t n_ctx = 0;            // context length in effect
  bool truncated = false;       // the prompt did not fit: tokens were dropped (see n_dropped)
  int32_t n_dropped = 0;
};

// Prompt placement inside a context of n_ctx positions. A prompt fits when it leaves at least
// one position free. Otherwise the first num_keep tokens are kept and the oldest ones after them
// dropped so that `reserve` positions stay free for the answer (num_predict when set, else a
// quarter of the context; between 1 and half of it); the plan says how many were dropped.
// With opts.truncate == false a prompt that does not fit is an error instead.
struct PromptPlan {
  std::vector<int32_t> tokens;
  int32_t n_dropped = 0;
};
Result<PromptPlan> plan_prompt(std::span<const int32_t> prompt, int32_t n_ctx, const Options& opts);

class Generation {
 public:
  using Clock = std::chrono::steady_clock;

  // n_ctx: the context length in effect (min of the request, the Context and the model);
  // n_vocab: the length of the logits rows (the model's).
  Generation(const Tokenizer& tok, const Options& opts, std::vector<int32_t> prompt, int32_t n_ctx, int32_t n_vocab,
             OnToken on_token);

  // Prompt tokens still to be fed to the model (after skipping a cached prefix of n_cached).
  void skip_cached(int32_t n_cached);
  std::span<const int32_t> pending_prompt() const;
  // Marks the next n prompt tokens as fed. Returns false when on_token asked to stop (ping).
  bool prompt_fed(int32_t n);
  bool prefilling() const { return prompt_pos_ < static_cast<int32_t>(prompt_.size()); }

  // Takes the logits after the last fed token. Samples, streams, decides whether to go on.
  // Returns the token to feed next, or nullopt when finished (see result()).
  std::optional<int32_t> on_logits(std::span<const float> logits);

  // Ends the generation early (cancel from outside); idempotent.
  void cancel();
  bool done() const { return done_; }
  const GenerateResult& result() const { return result_; }
  GenerateResult take_result() { return std::move(result_); }
  // Position the next fed token will occupy (prompt + generated so far).
  int32_t n_past() const { return prompt_pos_ + static_cast<int32_t>(result_.tokens.size()); }
  const std::vector<int32_t>& prompt() const { return prompt_; }
  int32_t num_batch() const { return opts_.num_batch; }

 private:
  void finish(DoneReason why);
  bool emit(int32_t token, std::string_view text, const Sample* s);

  const Tokenizer* tok_;
  Options opts_;
  std::vector<int32_t> prompt_;
  int32_t n_ctx_;
  OnToken on_token_;
  Sampler sampler_;
  StreamDecoder stream_;
  StopMatcher stop_;
  int32_t prompt_pos_ = 0;
  int32_t n_cached_ = 0;
  bool done_ = false;
  bool cancelled_ = false;
  GenerateResult result_;
  Clock::time_point t_start_, t_first_;
};

// One sequence on a Context, with the cache kept between calls so a follow-up prompt that
// starts with the previous prompt + answer only evaluates the new tokens.
class Session {
 public:
  explicit Session(Context& ctx, const Tokenizer& tok, int seq = 0) : ctx_(&ctx), tok_(&tok), seq_(seq) {}

  // Errors: invalid options, a prompt that does not fit with truncate off, an empty prompt.
  // Cancellation (on_token returning false) is not an error: done_reason says cancelled.
  Result<GenerateResult> generate(std::span<const int32_t> prompt, const Options& opts, const OnToken& on_token);

  // Forgets the cached tokens (the next generate evaluates its whole prompt).
  void reset();
  const std::vector<int32_t>& cached_tokens() const { return cached_; }

 private:
  Context* ctx_;
  const Tokenizer* tok_;
  int seq_;
  std::vector<int32_t> cached_;  // tokens whose K/V sit in the cache, positions 0..
  std::vector<BatchEntry> batch_;
};

}  // namespace nurl
