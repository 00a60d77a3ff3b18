// The attention kernel's contract: one query token, a group of query heads that share one KV
// head (grouped-query attention), over a contiguous run of cache positions.
//
//   for each query head g: s_p = scale · (q_g rounded to the cache type) · k_p   (p in [0, n_kv))
//                          s_p = softcap · tanh(s_p / softcap)   when softcap > 0
//                          out_g = Σ_p softmax(s)_p · v_p
//
// q is rounded to the cache's element type before the dot product, as llama.cpp's flash
// attention does, so an f16 cache gives the same products whichever kernel runs.
#pragma once

#include <cstddef>
#include <cstdint>

namespace nurl {

struct AttnArgs {
  bool f16 = true;               // cache element type: f16 (true) or f32
  const float* q = nullptr;      // n_q rows of head_dim floats, q_stride apart
  int64_t q_stride = 0;
  const uint8_t* k = nullptr;    // n_kv rows of head_dim elements, k_stride bytes apart
  size_t k_stride = 0;
  const uint8_t* v = nullptr;    // n_kv rows of head_dim_v elements, v_stride bytes apart
  size_t v_stride = 0;
  int n_q = 0, n_kv = 0, head_dim = 0, head_dim_v = 0;
  float scale = 1.0f, softcap = 0.0f;
  float* out = nullptr;          // n_q rows of head_dim_v floats, out_stride apart
  int64_t out_stride = 0;
};

using AttendFn = void (*)(const AttnArgs& a);

namespace ref {
void attend(const AttnArgs& a);
}

}  // namespace nurl
