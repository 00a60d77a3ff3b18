// Token sampler: turns one row of logits (n_vocab floats) into the next token id.
// Chain (llama.cpp's default order): an optional mask of allowed tokens (a grammar constraint:
// the others become -inf) → repeat/presence/frequency penalties over the last repeat_last_n
// accepted tokens → top_k → typical_p → top_p → min_p → temperature → draw.
// Temperature <= 0 is greedy: the argmax of the penalised logits (lowest id on ties).
// Each filter keeps at least one token. The RNG is owned per sampler (no globals): a seed >= 0
// gives the same draws on every run and platform (mt19937_64 + our own float conversion).
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "engine/runtime/options.h"

namespace nurl {

struct TokenLogprob {
  int32_t id = 0;
  float logprob = 0.0f;
};

struct TokenProb {
  int32_t id = 0;
  float p = 0.0f;
};

// One sampled token with its log-probability under the distribution it was drawn from (after the
// mask, penalties, truncations and temperature; for greedy decoding, whose draw is the argmax,
// the masked and penalised logits at temperature 1) and, when asked, the top-N alternatives of
// that distribution, most likely first (lower id first on ties). Tokens the distribution excludes
// are never listed.
struct Sample {
  int32_t id = 0;
  float logprob = 0.0f;
  std::vector<TokenLogprob> top;
};

class Sampler {
 public:
  Sampler(const Options& opts, int32_t n_vocab);

  // Picks a token from logits (size n_vocab). `allowed` (n_vocab bits, empty = all) masks the
  // logits first; it must allow at least one token. Does not accept the token: the caller calls
  // accept() once it is really used, so a cancelled draw leaves no trace in the penalties.
  Sample sample(std::span<const float> logits, std::span<const uint64_t> allowed = {});

  // Records a token (prompt or generated) in the penalty window.
  void accept(int32_t id);
  // The distribution the next draw would use: every surviving candidate with its probability
  // after the whole chain (for greedy, the argmax with p = 1). For tests and diagnostics.
  std::vector<TokenProb> distribution(std::span<const float> logits, std::span<const uint64_t> allowed = {});

  void accept(std::span<const int32_t> ids);
  void reset_history();

  const Options& options() const { return opts_; }

 private:
  struct Cand {
    int32_t id;
    float logit;
    float p;
  };

  void run_chain(std::span<const float> logits, std::span<const uint64_t> allowed);  // survivors in cands_
  void apply_mask(std::span<const uint64_t> allowed);
  Sample chain_logprobs(int32_t id) const;
  void apply_penalties();
  void nucleus(float p);
  void typical(float p);
  void top_p(float p);
  void min_p(float p);
  void softmax();     // fills Cand::p over cands_ (sorted or not)
  void sort_desc();   // by logit, lower id first on ties; no-op when already sorted
  int32_t draw();
  double uniform();   // [0, 1)

  Options opts_;
  int32_t n_vocab_;
  int32_t window_;    // repeat_last_n resolved (num_ctx for -1)
  std::vector<int32_t> history_;  // ring of the last window_ accepted ids
  size_t hist_pos_ = 0;
  std::vector<float> work_;  // (n_vocab) logits after penalties
  std::vector<Cand> cands_;
  bool sorted_ = false;
  std::mt19937_64 rng_;
};

// log-softmax of logits at `id`, and the top-n alternatives (n may be 0); -inf logits (masked
// tokens) are never among the alternatives.
Sample logprobs_of(std::span<const float> logits, int32_t id, int32_t n_top);

}  // namespace nurl
