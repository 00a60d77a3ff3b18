// AVX2 dot products of the 32-element formats (q4_0, q4_1, q5_0, q5_1, q8_0, iq4_nl) with
// q8_0/q8_1 activations: per block an int32 sum from maddubs, then one FMA by the block scales.

#include "kernels/cpu/x86/avx2-common.h"

#if defined(__x86_64__)

namespace nurl::avx2 {

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
// q4_1 × q8_1: Σ (d·q + m)·y = d·dy·Σ q·qy + m·s (s = dy·Σ qy, stored by q8_1).
NURL_AVX2 float vec_dot_q4_1(int64_t n, const void* vx, const void* vy) {
  const auto* x = static_cast<const BlockQ4_1*>(vx);
  const auto* y = static_cast<const BlockQ8_1*>(vy);
  const __m256i ones = _mm256_set1_epi16(1);
  __m256 acc = _mm256_setzero_ps();
  float acc_m = 0;
  for (int64_t i = 0; i < n / kQK; ++i) {
    const __m256i p16 =
        _mm256_maddubs_epi16(unpack_nibbles_32(x[i].qs), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y[i].qs)));
    acc = _mm256_fmadd_ps(_mm256_set1_ps(h2f(x[i].d) * h2f(y[i].d)), _mm256_cvtepi32_ps(_mm256_madd_epi16(p16, ones)),
                          acc);
    acc_m += h2f(x[i].m) * h2f(y[i].s);
  }
  return hsum_ps(acc) + acc_m;
}

// q5_0: levels (nibble | bit4·16) − 16, signed, against q8_0. Where bit 4 is clear the level is
// nibble − 16 = nibble | 0xF0 as a signed byte, so one and-not gives the signed levels directly.
// Two blocks per step with two accumulators keep the FMA chains independent.
NURL_AVX2 static inline __m256i q5_0_levels(const BlockQ5_0& b) {
  return _mm256_or_si256(unpack_nibbles_32(b.qs),
                         _mm256_andnot_si256(bits_to_bytes_32(b.qh), _mm256_set1_epi8(char(0xF0))));
}

NURL_AVX2 float vec_dot_q5_0(int64_t n, const void* vx, const void* vy) {
  const auto* x = static_cast<const BlockQ5_0*>(vx);
  const auto* y = static_cast<const BlockQ8_0*>(vy);
  const int64_t nb = n / kQK;
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 1 < nb; i += 2) {
    const __m256i p0 = dot_s8(q5_0_levels(x[i]), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y[i].qs)));
    const __m256i p1 = dot_s8(q5_0_levels(x[i + 1]), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y[i + 1].qs)));
    acc0 = _mm256_fmadd_ps(_mm256_set1_ps(h2f(x[i].d) * h2f(y[i].d)), _mm256_cvtepi32_ps(p0), acc0);
    acc1 = _mm256_fmadd_ps(_mm256_set1_ps(h2f(x[i + 1].d) * h2f(y[i + 1].d)), _mm256_cvtepi32_ps(p1), acc1);
  }
  for (; i < nb; ++i) {
    const __m256i p = dot_s8(q5_0_levels(x[i]), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y[i].qs)));
    acc0 = _mm256_fmadd_ps(_mm256_set1_ps(h2f(x[i].d) * h2f(y[i].d)), _mm256_cvtepi32_ps(p), acc0);
  }
  return hsum_ps(_mm256_add_ps(acc0, acc1));
}

NURL_AVX2 float vec_dot_q5_1(int64_t n, const void* vx, const void* vy) {
  const auto* x = static_cast<const BlockQ5_1*>(vx);
  const auto* y = static_cast<const BlockQ8_1*>(vy);
  const __m256i sixteen = _mm256_set1_epi8(16), ones = _mm256_set1_epi16(1);
  __m256 acc = _mm256_setzero_ps();
  float acc_m = 0;
  for (int64_t i = 0; i < n / kQK; ++i) {
    const __m256i q = _mm256_or_si256(unpack_nibbles_32(x[i].qs), _mm256_and_si256(bits_to_bytes_32(x[i].qh), sixteen));
    const __m256i p16 = _mm256_maddubs_epi16(q, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y[i].qs)));
    acc = _mm256_fmadd_ps(_mm256_set1_ps(h2f(x[i].d) * h2f(y[i].d)), _mm256_cvtepi32_ps(_mm256_madd_epi16(p16, ones)),
                          acc);
    acc_m += h2f(x[i].m) * h2f(y[i].s);
  }
  return hsum_ps(acc) + acc_m;
}

// iq4_nl: nibbles index the 16 non-uniform levels through a byte shuffle.
NURL_AVX2 float vec_dot_iq4_nl(int64_t n, const void* vx, const void* vy) {
  const auto* x = static_cast<const BlockIQ4_NL*>(vx);
  const auto* y = static_cast<const BlockQ8_0*>(vy);
  const __m256i table = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIq4nlValues)));
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < n / kQK; ++i) {
    const __m256i q = _mm256_shuffle_epi8(table, unpack_nibbles_32(x[i].qs));
    const __m256i p = dot_s8(q, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y[i].qs)));
    acc = _mm256_fmadd_ps(_mm256_set1_ps(h2f(x[i].d) * h2f(y[i].d)), _mm256_cvtepi32_ps(p), acc);
  }
  return hsum_ps(acc);
}

}  // namespace nurl::avx2

#endif
