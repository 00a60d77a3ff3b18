// AVX2 variants of the hot kernels. Each reproduces its scalar reference in kernels/cpu/ref
// (same integer sums per block, same block scales), so results differ only by float summation
// order. Integer trick used throughout: maddubs(u8, s8) multiplies unsigned weight levels (or
// |x| with the sign moved onto y) by int8 activations and adds pairs into int16 without
// overflow for our ranges (|q| ≤ 63 or |x| ≤ 127 against |y| ≤ 127).
// Functions carry target attributes instead of file-wide flags so no inline function from a
// shared header is ever emitted with AVX2 code (the binary must run on CPUs without it).
#include "kernels/cpu/x86/avx2-kernels.h"

#include <cmath>
#include <cstring>

#include "engine/quant/blocks.h"
#include "kernels/cpu/gemm-generic.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define NURL_AVX2 __attribute__((target("avx2,fma,f16c")))

namespace nurl {

namespace {

NURL_AVX2 inline float hsum_ps(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

NURL_AVX2 inline int hsum_epi32(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
  return _mm_cvtsi128_si32(s);
}

NURL_AVX2 inline float h2f(f16_bits h) { return _cvtsh_ss(h); }

// Σ x·y over 32 signed int8 pairs, as 8 int32 partial sums.
NURL_AVX2 inline __m256i dot_s8(__m256i x, __m256i y) {
  const __m256i p = _mm256_maddubs_epi16(_mm256_sign_epi8(x, x), _mm256_sign_epi8(y, x));
  return _mm256_madd_epi16(p, _mm256_set1_epi16(1));
}

// 16 bytes of packed nibbles → 32 bytes: low nibbles in the low lane, high nibbles in the high.
NURL_AVX2 inline __m256i unpack_nibbles_32(const uint8_t* p) {
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i m = _mm_set1_epi8(0x0f);
  const __m128i lo = _mm_and_si128(b, m), hi = _mm_and_si128(_mm_srli_epi16(b, 4), m);
  return _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
}

// ---- legacy 32-blocks × q8_0 -------------------------------------------------------------

NURL_AVX2 float vec_dot_q8_0(int64_t n, const void* vx, const void* vy) {
  const auto* x = static_cast<const BlockQ8_0*>(vx);
  const auto* y = static_cast<const BlockQ8_0*>(vy);
  const int64_t nb = n / kQK;
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 1 < nb; i += 2) {
    const __m256i p0 = dot_s8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[i].qs)),
                              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y[i].qs)));
    const __m256i p1 = dot_s8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[i + 1].qs)),
                              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y[i + 1].qs)));
    acc0 = _mm256_fmadd_ps(_mm256_set1_ps(h2f(x[i].d) * h2f(y[i].d)), _mm256_cvtepi32_ps(p0), acc0);
    acc1 = _mm256_fmadd_ps(_mm256_set1_ps(h2f(x[i + 1].d) * h2f(y[i + 1].d)), _mm256_cvtepi32_ps(p1), acc1);
  }
  for (; i < nb; ++i) {
    const __m256i p = dot_s8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[i].qs)),
                             _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y[i].qs)));
    acc0 = _mm256_fmadd_ps(_mm256_set1_ps(h2f(x[i].d) * h2f(y[i].d)), _mm256_cvtepi32_ps(p), acc0);
  }
  return hsum_ps(_mm256_add_ps(acc0, acc1));
}

NURL_AVX2 float vec_dot_q4_0(int64_t n, const void* vx, const void* vy) {
  const auto* x = static_cast<const BlockQ4_0*>(vx);
  const auto* y = static_cast<const BlockQ8_0*>(vy);
  const int64_t nb = n / kQK;
  const __m256i off = _mm256_set1_epi8(8);
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 1 < nb; i += 2) {
    const __m256i q0 = _mm256_sub_epi8(unpack_nibbles_32(x[i].qs), off);
    const __m256i q1 = _mm256_sub_epi8(unpack_nibbles_32(x[i + 1].qs), off);
    const __m256i p0 = dot_s8(q0, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y[i].qs)));
    const __m256i p1 = dot_s8(q1, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y[i + 1].qs)));
    acc0 = _mm256_fmadd_ps(_mm256_set1_ps(h2f(x[i].d) * h2f(y[i].d)), _mm256_cvtepi32_ps(p0), acc0);
    acc1 = _mm256_fmadd_ps(_mm256_set1_ps(h2f(x[i + 1].d) * h2f(y[i + 1].d)), _mm256_cvtepi32_ps(p1), acc1);
  }
  for (; i < nb; ++i) {
    const __m256i q = _mm256_sub_epi8(unpack_nibbles_32(x[i].qs), off);
    const __m256i p = dot_s8(q, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y[i].qs)));
    acc0 = _mm256_fmadd_ps(_mm256_set1_ps(h2f(x[i].d) * h2f(y[i].d)), _mm256_cvtepi32_ps(p), acc0);
  }
  return hsum_ps(_mm256_add_ps(acc0, acc1));
}

// ---- k-quants × q8_K -------------------------------------------------------------------

// The 8 scales (bytes 0..7 of *sc) and 8 mins (*m) of a q4_K/q5_K block.
NURL_AVX2 inline void unpack_scales_k4(const uint8_t* s, uint32_t sc[2], uint32_t m[2]) {
  uint32_t w[3];
  std::memcpy(w, s, 12);
  sc[0] = w[0] & 0x3f3f3f3f;
  m[0] = w[1] & 0x3f3f3f3f;
  sc[1] = (w[2] & 0x0f0f0f0f) | ((w[0] >> 2) & 0x30303030);
  m[1] = ((w[2] >> 4) & 0x0f0f0f0f) | ((w[1] >> 2) & 0x30303030);
}

// Σ_j m[j]·(bsums[2j] + bsums[2j+1]) as 4 int32 lanes.
NURL_AVX2 inline __m128i mins_dot_bsums(const uint32_t m[2], const int16_t* bsums) {
  const __m128i b0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bsums));
  const __m128i b1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bsums + 8));
  const __m128i pairs = _mm_hadd_epi16(b0, b1);  // 8 × (bsums[2j] + bsums[2j+1])
  const __m128i m16 = _mm_cvtepu8_epi16(_mm_set_epi32(0, 0, int(m[1]), int(m[0])));
  return _mm_madd_epi16(m16, pairs);
}

NURL_AVX2 float vec_dot_q4_k(int64_t n, const void* vx, const void* vy) {
  const auto* x = static_cast<const BlockQ4_K*>(vx);
  const auto* y = static_cast<const BlockQ8_K*>(vy);
  const int64_t nb = n / kQK_K;
  const __m256i m4 = _mm256_set1_epi8(0x0f);
  __m256 acc = _mm256_setzero_ps();
  __m128 acc_m = _mm_setzero_ps();
  for (int64_t i = 0; i < nb; ++i) {
    const float d = y[i].d * h2f(x[i].d), dmin = -y[i].d * h2f(x[i].dmin);
    uint32_t sc[2], mn[2];
    unpack_scales_k4(x[i].scales, sc, mn);
    acc_m = _mm_fmadd_ps(_mm_set1_ps(dmin), _mm_cvtepi32_ps(mins_dot_bsums(mn, y[i].bsums)), acc_m);
    uint8_t s8[8];
    std::memcpy(s8, sc, 8);
    __m256i sumi = _mm256_setzero_si256();
    const uint8_t* q4 = x[i].qs;
    const int8_t* q8 = y[i].qs;
    for (int c = 0; c < 4; ++c, q4 += 32, q8 += 64) {
      const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q4));
      const __m256i lo = _mm256_and_si256(b, m4), hi = _mm256_and_si256(_mm256_srli_epi16(b, 4), m4);
      const __m256i plo = _mm256_maddubs_epi16(lo, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q8)));
      const __m256i phi = _mm256_maddubs_epi16(hi, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q8 + 32)));
      sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(plo, _mm256_set1_epi16(s8[2 * c])));
      sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(phi, _mm256_set1_epi16(s8[2 * c + 1])));
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sumi), acc);
  }
  __m128 m = _mm_add_ps(acc_m, _mm_movehl_ps(acc_m, acc_m));
  m = _mm_add_ss(m, _mm_movehdup_ps(m));
  return hsum_ps(acc) + _mm_cvtss_f32(m);
}

NURL_AVX2 float vec_dot_q5_k(int64_t n, const void* vx, const void* vy) {
  const auto* x = static_cast<const BlockQ5_K*>(vx);
  const auto* y = static_cast<const BlockQ8_K*>(vy);
  const int64_t nb = n / kQK_K;
  const __m256i m4 = _mm256_set1_epi8(0x0f);
  const __m256i sixteen = _mm256_set1_epi8(16);
  __m256 acc = _mm256_setzero_ps();
  __m128 acc_m = _mm_setzero_ps();
  for (int64_t i = 0; i < nb; ++i) {
    const float d = y[i].d * h2f(x[i].d), dmin = -y[i].d * h2f(x[i].dmin);
    uint32_t sc[2], mn[2];
    unpack_scales_k4(x[i].scales, sc, mn);
    acc_m = _mm_fmadd_ps(_mm_set1_ps(dmin), _mm_cvtepi32_ps(mins_dot_bsums(mn, y[i].bsums)), acc_m);
    uint8_t s8[8];
    std::memcpy(s8, sc, 8);
    const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[i].qh));
    __m256i sumi = _mm256_setzero_si256();
    const uint8_t* q5 = x[i].qs;
    const int8_t* q8 = y[i].qs;
    for (int c = 0; c < 4; ++c, q5 += 32, q8 += 64) {
      const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q5));
      const __m256i bit_lo = _mm256_set1_epi8(char(1 << (2 * c))), bit_hi = _mm256_set1_epi8(char(2 << (2 * c)));
      const __m256i h_lo = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(qh, bit_lo), bit_lo), sixteen);
      const __m256i h_hi = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(qh, bit_hi), bit_hi), sixteen);
      const __m256i lo = _mm256_or_si256(_mm256_and_si256(b, m4), h_lo);
      const __m256i hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(b, 4), m4), h_hi);
      const __m256i plo = _mm256_maddubs_epi16(lo, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q8)));
      const __m256i phi = _mm256_maddubs_epi16(hi, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q8 + 32)));
      sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(plo, _mm256_set1_epi16(s8[2 * c])));
      sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(phi, _mm256_set1_epi16(s8[2 * c + 1])));
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sumi), acc);
  }
  __m128 m = _mm_add_ps(acc_m, _mm_movehl_ps(acc_m, acc_m));
  m = _mm_add_ss(m, _mm_movehdup_ps(m));
  return hsum_ps(acc) + _mm_cvtss_f32(m);
}

// q6_K: levels q in 0..63 (x = sc·(q − 32)); Σ sc·(q−32)·y = Σ sc·q·y − 32·Σ sc·bsum.
NURL_AVX2 float vec_dot_q6_k(int64_t n, const void* vx, const void* vy) {
  const auto* x = static_cast<const BlockQ6_K*>(vx);
  const auto* y = static_cast<const BlockQ8_K*>(vy);
  const int64_t nb = n / kQK_K;
  const __m256i m4 = _mm256_set1_epi8(0x0f), m2 = _mm256_set1_epi8(0x03);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < nb; ++i) {
    const float d = y[i].d * h2f(x[i].d);
    const __m128i sc8 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x[i].scales));
    const __m256i sc16 = _mm256_cvtepi8_epi16(sc8);  // 16 scales as int16
    const __m256i bs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y[i].bsums));
    __m256i sumi = _mm256_slli_epi32(_mm256_madd_epi16(sc16, bs), 5);  // 32·Σ sc·bsum, subtracted below
    sumi = _mm256_sub_epi32(_mm256_setzero_si256(), sumi);
    alignas(32) int16_t s16[16];
    _mm256_store_si256(reinterpret_cast<__m256i*>(s16), sc16);
    for (int h = 0; h < 2; ++h) {
      const uint8_t* ql = x[i].ql + 64 * h;
      const __m256i l0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql));
      const __m256i l1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql + 32));
      const __m256i hb = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[i].qh + 32 * h));
      const __m256i q[4] = {
          _mm256_or_si256(_mm256_and_si256(l0, m4), _mm256_slli_epi16(_mm256_and_si256(hb, m2), 4)),
          _mm256_or_si256(_mm256_and_si256(l1, m4), _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hb, 2), m2), 4)),
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4),
                          _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hb, 4), m2), 4)),
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m4),
                          _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hb, 6), m2), 4)),
      };
      const int8_t* q8 = y[i].qs + 128 * h;
      const int16_t* s = s16 + 8 * h;
      for (int k = 0; k < 4; ++k) {
        const __m256i p = _mm256_maddubs_epi16(q[k], _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q8 + 32 * k)));
        const __m256i scv = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_set1_epi16(s[2 * k])),
                                                    _mm_set1_epi16(s[2 * k + 1]), 1);
        sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(p, scv));
      }
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sumi), acc);
  }
  return hsum_ps(acc);
}

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

NURL_AVX2 float dot_f16_f32(const uint16_t* x, const float* y, int64_t n) {
  __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    a0 = _mm256_fmadd_ps(NURL_LDH(x + i), _mm256_loadu_ps(y + i), a0);
    a1 = _mm256_fmadd_ps(NURL_LDH(x + i + 8), _mm256_loadu_ps(y + i + 8), a1);
  }
  for (; i + 8 <= n; i += 8) a0 = _mm256_fmadd_ps(NURL_LDH(x + i), _mm256_loadu_ps(y + i), a0);
  float s = hsum_ps(_mm256_add_ps(a0, a1));
  for (; i < n; ++i) s += h2f(x[i]) * y[i];
  return s;
}

NURL_AVX2 void axpy_f16_f32(float* y, float a, const uint16_t* x, int64_t n) {
  const __m256 av = _mm256_set1_ps(a);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_fmadd_ps(av, NURL_LDH(x + i), _mm256_loadu_ps(y + i)));
  for (; i < n; ++i) y[i] += a * h2f(x[i]);
}

NURL_AVX2 void f16_to_f32_row(const uint16_t* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, NURL_LDH(x + i));
  for (; i < n; ++i) y[i] = h2f(x[i]);
}
#undef NURL_LDH

NURL_AVX2 void f32_to_f16_row(const float* x, uint16_t* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
  for (; i < n; ++i) y[i] = _cvtss_sh(x[i], _MM_FROUND_TO_NEAREST_INT);
}

NURL_AVX2 void quantize_f16(const float* x, void* out, int64_t n) { f32_to_f16_row(x, static_cast<uint16_t*>(out), n); }

NURL_AVX2 float dot_f32(const float* a, const float* b, int64_t n) {
  __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    a0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), a0);
    a1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), a1);
  }
  for (; i + 8 <= n; i += 8) a0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), a0);
  float s = hsum_ps(_mm256_add_ps(a0, a1));
  for (; i < n; ++i) s += a[i] * b[i];
  return s;
}

// ---- activation quantisers -------------------------------------------------------------

// 32 int32 in four vectors → 32 int8 in element order (packs interleave 128-bit lanes).
NURL_AVX2 inline __m256i pack_i32x32_to_i8(__m256i a, __m256i b, __m256i c, __m256i d) {
  const __m256i ab = _mm256_packs_epi32(a, b), cd = _mm256_packs_epi32(c, d);
  const __m256i v = _mm256_packs_epi16(ab, cd);
  return _mm256_permutevar8x32_epi32(v, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

NURL_AVX2 inline __m256 abs_ps(__m256 v) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v); }

// q8_0 with d = amax/127. Rounds half to even (the reference rounds half away; the two differ
// only on exact ties, by one level).
NURL_AVX2 void quantize_q8_0(const float* x, void* out, int64_t n) {
  auto* y = static_cast<BlockQ8_0*>(out);
  for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
    __m256 v[4];
    __m256 mx = _mm256_setzero_ps();
    for (int k = 0; k < 4; ++k) {
      v[k] = _mm256_loadu_ps(x + 8 * k);
      mx = _mm256_max_ps(mx, abs_ps(v[k]));
    }
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(mx), _mm256_extractf128_ps(mx, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    const float amax = _mm_cvtss_f32(m);
    const float d = amax / 127, id = d ? 1.0f / d : 0.0f;
    y[i].d = _cvtss_sh(d, _MM_FROUND_TO_NEAREST_INT);
    const __m256 idv = _mm256_set1_ps(id);
    __m256i q[4];
    for (int k = 0; k < 4; ++k)
      q[k] = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v[k], idv), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y[i].qs), pack_i32x32_to_i8(q[0], q[1], q[2], q[3]));
  }
}

// q8_K exactly as the reference (half-to-even rounding there too): scale from the signed extreme.
NURL_AVX2 void quantize_q8_k(const float* x, void* out, int64_t n) {
  auto* y = static_cast<BlockQ8_K*>(out);
  for (int64_t i = 0; i < n / kQK_K; ++i, x += kQK_K) {
    __m256 mx = _mm256_setzero_ps();
    for (int k = 0; k < kQK_K; k += 8) mx = _mm256_max_ps(mx, abs_ps(_mm256_loadu_ps(x + k)));
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(mx), _mm256_extractf128_ps(mx, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    const float amax = _mm_cvtss_f32(m);
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

template <VecDotFn Dot>
MatKernels avx2_entry(GgmlType act, QuantizeRowFn q) {
  return MatKernels{act, q, Dot, gemm_rows_by_vec_dot<Dot>, "avx2"};
}

void set(KernelSet& ks, GgmlType t, MatKernels k) { ks.mat[static_cast<size_t>(t)] = k; }

}  // namespace

void install_avx2_kernels(KernelSet& ks) {
  using G = GgmlType;
  ks.name = "avx2";
  set(ks, G::Q8_0, avx2_entry<vec_dot_q8_0>(G::Q8_0, quantize_q8_0));
  set(ks, G::Q4_0, avx2_entry<vec_dot_q4_0>(G::Q8_0, quantize_q8_0));
  set(ks, G::Q4_K, avx2_entry<vec_dot_q4_k>(G::Q8_K, quantize_q8_k));
  set(ks, G::Q5_K, avx2_entry<vec_dot_q5_k>(G::Q8_K, quantize_q8_k));
  set(ks, G::Q6_K, avx2_entry<vec_dot_q6_k>(G::Q8_K, quantize_q8_k));
  set(ks, G::F16, avx2_entry<vec_dot_f16>(G::F16, quantize_f16));
  // Types without an AVX2 dot still get the faster activation quantiser.
  for (G t : {G::Q5_0, G::IQ4_NL}) ks.mat[static_cast<size_t>(t)].quantize_act = quantize_q8_0;
  for (G t : {G::Q2_K, G::Q3_K, G::IQ4_XS}) ks.mat[static_cast<size_t>(t)].quantize_act = quantize_q8_k;
  ks.dot_f32 = dot_f32;
  ks.dot_f16_f32 = dot_f16_f32;
  ks.axpy_f16_f32 = axpy_f16_f32;
  ks.f32_to_f16_row = f32_to_f16_row;
  ks.f16_to_f32_row = f16_to_f32_row;
}

}  // namespace nurl

#else  // not x86-64: nothing to install

namespace nurl {
void install_avx2_kernels(KernelSet&) {}
}  // namespace nurl

#endif
