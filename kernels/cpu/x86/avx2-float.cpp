// AVX2 float kernels (f16/bf16 dots, f32 → f16 rows for the KV cache) and the
// activation quantisers (f32 → q8_0, q8_1, q8_K, f16, bf16).
#include <cmath>
#include <cstring>

#include "kernels/cpu/x86/avx2-common.h"

#if defined(__x86_64__)

namespace nurl::avx2 {

// ---- f16 ---------------------------------------------------------------------------------

NURL_AVX2 float vec_dot_f16(int64_t n, const void* vx, const void* vy) {
  const auto* x = static_cast<const f16_bits*>(vx);
  const auto* y = static_cast<const f16_bits*>(vy);
  __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
  int64_t i = 0;
#define NURL_LDH(p) _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)))
  for (; i + 32 <= n; i += 32) {
    a0 = _mm256_fmadd_ps(NURL_LDH(x + i), NURL_LDH(y + i), a0);
    a1 = _mm256_fmadd_ps(NURL_LDH(x + i + 8), NURL_LDH(y + i + 8), a1);
    a2 = _mm256_fmadd_ps(NURL_LDH(x + i + 16), NURL_LDH(y + i + 16), a2);
    a3 = _mm256_fmadd_ps(NURL_LDH(x + i + 24), NURL_LDH(y + i + 24), a3);
  }
  for (; i + 8 <= n; i += 8) a0 = _mm256_fmadd_ps(NURL_LDH(x + i), NURL_LDH(y + i), a0);
  float s = hsum_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
  for (; i < n; ++i) s += h2f(x[i]) * h2f(y[i]);
  return s;
}
#undef NURL_LDH

// silu(g)·u with the vectorised e^x. Below g = −88 silu(g) = g·e^g is below 1e-36: 0 there (e^−g
// would overflow), as the scalar form's g / ∞.
NURL_AVX2 void silu_mul(float* g, const float* u, int64_t n) {
  const __m256 one = _mm256_set1_ps(1.0f), lim = _mm256_set1_ps(88.0f), neg_lim = _mm256_set1_ps(-88.0f);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_loadu_ps(g + i);
    const __m256 e = exp_ps(_mm256_min_ps(_mm256_sub_ps(_mm256_setzero_ps(), x), lim));
    const __m256 s = _mm256_andnot_ps(_mm256_cmp_ps(x, neg_lim, _CMP_LT_OQ), _mm256_div_ps(x, _mm256_add_ps(one, e)));
    _mm256_storeu_ps(g + i, _mm256_mul_ps(s, _mm256_loadu_ps(u + i)));
  }
  for (; i < n; ++i) g[i] = g[i] / (1.0f + std::exp(-g[i])) * u[i];
}

NURL_AVX2 void f32_to_f16_row(const float* x, uint16_t* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
  for (; i < n; ++i) y[i] = _cvtss_sh(x[i], _MM_FROUND_TO_NEAREST_INT);
}

NURL_AVX2 void quantize_f16(const float* x, void* out, int64_t n) {
  f32_to_f16_row(x, static_cast<uint16_t*>(out), n);
}

// ---- activation quantisers -------------------------------------------------------------

// 32 int32 in four vectors → 32 int8 in element order (packs interleave 128-bit lanes).
NURL_AVX2 static inline __m256i pack_i32x32_to_i8(__m256i a, __m256i b, __m256i c, __m256i d) {
  const __m256i ab = _mm256_packs_epi32(a, b), cd = _mm256_packs_epi32(c, d);
  const __m256i v = _mm256_packs_epi16(ab, cd);
  return _mm256_permutevar8x32_epi32(v, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

NURL_AVX2 static inline __m256 abs_ps(__m256 v) {
  return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v);
}

NURL_AVX2 static inline float hmax_ps(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

// One 32-element block as q8_0/q8_1 quantise it: d = amax/127 (returned before its f16
// rounding) and the 32 levels, rounded half to even (the reference rounds half away; the two
// differ only on exact ties, by one level).
NURL_AVX2 static inline float quantize_block_32(const float* x, __m256i q[4]) {
  __m256 v[4];
  __m256 mx = _mm256_setzero_ps();
  for (int k = 0; k < 4; ++k) {
    v[k] = _mm256_loadu_ps(x + 8 * k);
    mx = _mm256_max_ps(mx, abs_ps(v[k]));
  }
  const float d = hmax_ps(mx) / 127, id = d ? 1.0f / d : 0.0f;
  const __m256 idv = _mm256_set1_ps(id);
  for (int k = 0; k < 4; ++k)
    q[k] = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v[k], idv), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  return d;
}

NURL_AVX2 void quantize_q8_0(const float* x, void* out, int64_t n) {
  auto* y = static_cast<BlockQ8_0*>(out);
  for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
    __m256i q[4];
    y[i].d = _cvtss_sh(quantize_block_32(x, q), _MM_FROUND_TO_NEAREST_INT);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y[i].qs), pack_i32x32_to_i8(q[0], q[1], q[2], q[3]));
  }
}

// q8_K exactly as the reference (half-to-even rounding there too): scale from the signed extreme.
NURL_AVX2 void quantize_q8_k(const float* x, void* out, int64_t n) {
  auto* y = static_cast<BlockQ8_K*>(out);
  for (int64_t i = 0; i < n / kQK_K; ++i, x += kQK_K) {
    __m256 mx = _mm256_setzero_ps();
    for (int k = 0; k < kQK_K; k += 8) mx = _mm256_max_ps(mx, abs_ps(_mm256_loadu_ps(x + k)));
    const float amax = hmax_ps(mx);
    if (!amax) {
      std::memset(&y[i], 0, sizeof y[i]);
      continue;
    }
    float signed_max = amax;
    for (int j = 0; j < kQK_K; ++j)
      if (std::fabs(x[j]) == amax) {
        signed_max = x[j];
        break;
      }
    const float iscale = -127.f / signed_max;
    const __m256 is = _mm256_set1_ps(iscale);
    const __m256i lim = _mm256_set1_epi32(127);
    for (int g = 0; g < kQK_K; g += 32) {
      __m256i q[4];
      for (int k = 0; k < 4; ++k) {
        const __m256 r = _mm256_round_ps(_mm256_mul_ps(_mm256_loadu_ps(x + g + 8 * k), is),
                                         _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        q[k] = _mm256_min_epi32(_mm256_cvtps_epi32(r), lim);
      }
      y[i].bsums[g / 16] = int16_t(hsum_epi32(_mm256_add_epi32(q[0], q[1])));
      y[i].bsums[g / 16 + 1] = int16_t(hsum_epi32(_mm256_add_epi32(q[2], q[3])));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(y[i].qs + g), pack_i32x32_to_i8(q[0], q[1], q[2], q[3]));
    }
    y[i].d = 1 / iscale;
  }
}
// q8_1: q8_0 plus s = d·Σ q (d before its f16 rounding, as the reference).
NURL_AVX2 void quantize_q8_1(const float* x, void* out, int64_t n) {
  auto* y = static_cast<BlockQ8_1*>(out);
  for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
    __m256i q[4];
    const float d = quantize_block_32(x, q);
    y[i].d = _cvtss_sh(d, _MM_FROUND_TO_NEAREST_INT);
    const int sum = hsum_epi32(_mm256_add_epi32(_mm256_add_epi32(q[0], q[1]), _mm256_add_epi32(q[2], q[3])));
    y[i].s = _cvtss_sh(float(sum) * d, _MM_FROUND_TO_NEAREST_INT);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y[i].qs), pack_i32x32_to_i8(q[0], q[1], q[2], q[3]));
  }
}

NURL_AVX2 static inline __m256 load_bf16x8(const uint16_t* p) {
  const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
}

NURL_AVX2 float vec_dot_bf16(int64_t n, const void* vx, const void* vy) {
  const auto* x = static_cast<const uint16_t*>(vx);
  const auto* y = static_cast<const uint16_t*>(vy);
  __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    a0 = _mm256_fmadd_ps(load_bf16x8(x + i), load_bf16x8(y + i), a0);
    a1 = _mm256_fmadd_ps(load_bf16x8(x + i + 8), load_bf16x8(y + i + 8), a1);
  }
  for (; i + 8 <= n; i += 8) a0 = _mm256_fmadd_ps(load_bf16x8(x + i), load_bf16x8(y + i), a0);
  float s = hsum_ps(_mm256_add_ps(a0, a1));
  for (; i < n; ++i) s += bf16_to_f32(x[i]) * bf16_to_f32(y[i]);
  return s;
}

// f32 → bf16, round to nearest even; nan kept quiet (as the reference).
NURL_AVX2 void quantize_bf16(const float* x, void* out, int64_t n) {
  auto* y = static_cast<uint16_t*>(out);
  int64_t i = 0;
  const __m256i exp_mask = _mm256_set1_epi32(0x7fffffff), inf = _mm256_set1_epi32(0x7f800000);
  for (; i + 8 <= n; i += 8) {
    const __m256i u = _mm256_castps_si256(_mm256_loadu_ps(x + i));
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    const __m256i rounded =
        _mm256_srli_epi32(_mm256_add_epi32(u, _mm256_add_epi32(_mm256_set1_epi32(0x7fff), lsb)), 16);
    const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, exp_mask), inf);
    const __m256i quiet = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(64));
    const __m256i r = _mm256_blendv_epi8(rounded, quiet, nan);
    const __m128i packed = _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), packed);
  }
  for (; i < n; ++i) y[i] = f32_to_bf16(x[i]);
}

}  // namespace nurl::avx2

#endif
