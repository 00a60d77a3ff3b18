// AVX2 attention (contract in kernels/attention.h) of one query token; blocks of tokens go to
// attend_block (avx2-attention-block.cpp). Cache rows are converted to f32 a chunk at a time,
// once for the whole group of query heads; scores come eight keys at a time (eight
// accumulators reduced together, no horizontal sum per key); the softmax exponentials are
// vectorised; the value rows are accumulated with the output kept in registers.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/attention.h"
#include "kernels/cpu/x86/avx2-common.h"

#if defined(__x86_64__)

namespace nurl::avx2 {

namespace {

constexpr int kChunk = 32;  // cache rows converted per step (a multiple of 8)

// Eight vectors → one vector of their eight horizontal sums.
NURL_AVX2 inline __m256 reduce8(const __m256 a[8]) {
  const __m256 t0 = _mm256_hadd_ps(a[0], a[1]), t1 = _mm256_hadd_ps(a[2], a[3]);
  const __m256 t2 = _mm256_hadd_ps(a[4], a[5]), t3 = _mm256_hadd_ps(a[6], a[7]);
  const __m256 u0 = _mm256_hadd_ps(t0, t1), u1 = _mm256_hadd_ps(t2, t3);
  return _mm256_add_ps(_mm256_permute2f128_ps(u0, u1, 0x20), _mm256_permute2f128_ps(u0, u1, 0x31));
}

template <bool F16>
NURL_AVX2 void attend_impl(const AttnArgs& a) {
  const int hd = a.head_dim, hdv = a.head_dim_v, nq = a.n_q, n_kv = a.n_kv;
  const int lds = (n_kv + 7) / 8 * 8;
  // Scratch: q rounded (nq × hd), scores/weights (nq × lds), converted cache rows (kChunk ×
  // max(hd, hdv)), output accumulators (nq × hdv), softmax sums (nq).
  float* qr = thread_scratch<float, ScratchTag::attention>(
      size_t(nq) * hd + size_t(nq) * lds + size_t(kChunk) * std::max(hd, hdv) + size_t(nq) * hdv + size_t(nq));
  float* s = qr + size_t(nq) * hd;
  float* rows = s + size_t(nq) * lds;
  float* acc = rows + size_t(kChunk) * std::max(hd, hdv);
  float* sum = acc + size_t(nq) * hdv;

  for (int g = 0; g < nq; ++g)
    for (int d = 0; d < hd; d += 8) {
      __m256 v = _mm256_loadu_ps(a.q + g * a.q_stride + d);
      if constexpr (F16) v = _mm256_cvtph_ps(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
      _mm256_storeu_ps(qr + size_t(g) * hd + d, v);
    }

  // Scores, a chunk of keys at a time, eight keys per step.
  const __m256 scale = _mm256_set1_ps(a.scale);
  for (int c0 = 0; c0 < n_kv; c0 += kChunk) {
    const int n = std::min(kChunk, n_kv - c0), n8 = (n + 7) / 8 * 8;
    cache_rows_to_f32<F16>(a.k + size_t(c0) * a.k_stride, a.k_stride, n, n8, hd, rows);
    for (int g = 0; g < nq; ++g) {
      const float* q = qr + size_t(g) * hd;
      for (int k8 = 0; k8 < n8; k8 += 8) {
        __m256 dot[8];
#pragma GCC unroll 8
        for (int k = 0; k < 8; ++k) dot[k] = _mm256_setzero_ps();
        const float* kr = rows + size_t(k8) * hd;
        for (int d = 0; d < hd; d += 8) {
          const __m256 qv = _mm256_loadu_ps(q + d);
#pragma GCC unroll 8
          for (int k = 0; k < 8; ++k) dot[k] = _mm256_fmadd_ps(qv, _mm256_loadu_ps(kr + size_t(k) * hd + d), dot[k]);
        }
        _mm256_storeu_ps(s + size_t(g) * lds + c0 + k8, _mm256_mul_ps(reduce8(dot), scale));
      }
    }
  }

  // Softmax weights (unnormalised) and their sums.
  for (int g = 0; g < nq; ++g) {
    float* sg = s + size_t(g) * lds;
    if (a.softcap > 0)
      for (int p = 0; p < n_kv; ++p) sg[p] = a.softcap * std::tanh(sg[p] / a.softcap);
    float mx = -INFINITY;
    for (int p = 0; p < n_kv; ++p) mx = std::max(mx, sg[p]);
    const __m256 mxv = _mm256_set1_ps(mx);
    __m256 sv = _mm256_setzero_ps();
    int p = 0;
    for (; p + 8 <= n_kv; p += 8) {
      const __m256 e = exp_ps(_mm256_sub_ps(_mm256_loadu_ps(sg + p), mxv));
      _mm256_storeu_ps(sg + p, e);
      sv = _mm256_add_ps(sv, e);
    }
    float tail = 0;
    for (; p < n_kv; ++p) {
      sg[p] = std::exp(sg[p] - mx);
      tail += sg[p];
    }
    sum[g] = hsum_ps(sv) + tail;
  }

  // Weighted sum of the value rows.
  std::fill(acc, acc + size_t(nq) * hdv, 0.0f);
  for (int c0 = 0; c0 < n_kv; c0 += kChunk) {
    const int n = std::min(kChunk, n_kv - c0);
    cache_rows_to_f32<F16>(a.v + size_t(c0) * a.v_stride, a.v_stride, n, n, hdv, rows);
    for (int g = 0; g < nq; ++g) {
      const float* e = s + size_t(g) * lds + c0;
      float* ag = acc + size_t(g) * hdv;
      int d0 = 0;
      for (; d0 + 64 <= hdv; d0 += 64) {
        __m256 o[8];
#pragma GCC unroll 8
        for (int v = 0; v < 8; ++v) o[v] = _mm256_loadu_ps(ag + d0 + 8 * v);
        for (int p = 0; p < n; ++p) {
          const __m256 ev = _mm256_broadcast_ss(e + p);
          const float* vr = rows + size_t(p) * hdv + d0;
#pragma GCC unroll 8
          for (int v = 0; v < 8; ++v) o[v] = _mm256_fmadd_ps(ev, _mm256_loadu_ps(vr + 8 * v), o[v]);
        }
#pragma GCC unroll 8
        for (int v = 0; v < 8; ++v) _mm256_storeu_ps(ag + d0 + 8 * v, o[v]);
      }
      for (; d0 < hdv; d0 += 8) {
        __m256 o = _mm256_loadu_ps(ag + d0);
        for (int p = 0; p < n; ++p)
          o = _mm256_fmadd_ps(_mm256_broadcast_ss(e + p), _mm256_loadu_ps(rows + size_t(p) * hdv + d0), o);
        _mm256_storeu_ps(ag + d0, o);
      }
    }
  }
  for (int g = 0; g < nq; ++g) {
    const __m256 inv = _mm256_set1_ps(1.0f / sum[g]);
    for (int d = 0; d < hdv; d += 8)
      _mm256_storeu_ps(a.out + g * a.out_stride + d, _mm256_mul_ps(_mm256_loadu_ps(acc + size_t(g) * hdv + d), inv));
  }
}

}  // namespace

void attend(const AttnArgs& a) {
  if (a.head_dim % 8 != 0 || a.head_dim_v % 8 != 0 || a.n_kv <= 0) return ref::attend(a);
  if (a.n_tok > 1) return attend_block(a);
  // One token: the keys of its window only.
  AttnArgs one = a;
  const int first = attn_first_key(a, 0);
  one.k += size_t(first) * a.k_stride;
  one.v += size_t(first) * a.v_stride;
  one.n_kv = a.n_kv - first;
  one.window = 0;
  if (a.f16)
    attend_impl<true>(one);
  else
    attend_impl<false>(one);
}

}  // namespace nurl::avx2

#endif
