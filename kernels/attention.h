// The attention kernel's contract: a group of query heads that share one KV head (grouped-query
// attention), for one query token or a block of consecutive query tokens of one sequence, over a
// contiguous run of cache positions.
//
//   keys seen by query token t:  [first_key(t), end_key(t)) with end_key(t) = n_kv − (n_tok − 1 − t)
//                                (causal: the last token sees all n_kv keys, each earlier one a key
//                                less) and first_key(t) = max(0, end_key(t) − window) when
//                                window > 0 (a sliding window of `window` keys, the token's own
//                                included), else 0
//   for each query head g:  s_p = scale · (q_{t,g} rounded to the cache type) · k_p
//                           s_p = softcap · tanh(s_p / softcap)   when softcap > 0
//                           out_{t,g} = Σ_p softmax(s)_p · v_p    over the keys token t sees
//
// q is rounded to the cache's element type before the dot product, as llama.cpp's flash
// attention does, so an f16 cache gives the same products whichever kernel runs. n_tok ≤ n_kv.
#pragma once

#include <cstddef>
#include <cstdint>

namespace nurl {

struct AttnArgs {
  bool f16 = true;           // cache element type: f16 (true) or f32
  const float* q = nullptr;  // query token t, head g at q + t·q_tok_stride + g·q_stride
  int64_t q_stride = 0;      // (head_dim floats each)
  int64_t q_tok_stride = 0;
  const uint8_t* k = nullptr;  // n_kv rows of head_dim elements, k_stride bytes apart
  size_t k_stride = 0;
  const uint8_t* v = nullptr;  // n_kv rows of head_dim_v elements, v_stride bytes apart
  size_t v_stride = 0;
  int n_q = 0, n_kv = 0, head_dim = 0, head_dim_v = 0;
  int n_tok = 1;   // query tokens (consecutive positions, the last at key n_kv − 1)
  int window = 0;  // sliding window in keys; 0: none
  float scale = 1.0f, softcap = 0.0f;
  float* out = nullptr;    // token t, head g at out + t·out_tok_stride + g·out_stride
  int64_t out_stride = 0;  // (head_dim_v floats each)
  int64_t out_tok_stride = 0;
};

// The keys query token t of a call sees: [attn_first_key(a, t), attn_end_key(a, t)).
inline int attn_end_key(const AttnArgs& a, int t) {
  return a.n_kv - (a.n_tok - 1 - t);
}
inline int attn_first_key(const AttnArgs& a, int t) {
  const int first = attn_end_key(a, t) - a.window;
  return a.window > 0 && first > 0 ? first : 0;
}

// A prompt chunk's attention is cut into calls of about this many query rows (tokens × heads)
// each: the block kernels keep that many rows' scores, running softmax and outputs in cache
// while they walk the keys in blocks of kAttnKeyBlock, so each key and value row is read once
// per block of rows instead of once per query token. Key blocks start at multiples of
// kAttnKeyBlock from key 0, so a row's result does not depend on the other rows of its call.
inline constexpr int kAttnBlockRows = 128;
inline constexpr int kAttnKeyBlock = 64;

using AttendFn = void (*)(const AttnArgs& a);

namespace ref {
void attend(const AttnArgs& a);
}

}  // namespace nurl
