// AVX2 dot products of the 256-element super-block formats (q2_K … q6_K, iq4_xs) with q8_K
// activations: integer sums per sub-block weighted by the integer sub-block scales, one float
// multiply per super-block; the min terms of q2_K/q4_K/q5_K come from q8_K's 16-element sums.
#include <cstring>

#include "kernels/cpu/x86/avx2-common.h"

#if defined(__x86_64__)

namespace nurl::avx2 {

// ---- k-quants × q8_K -------------------------------------------------------------------

namespace {

// q4_K and q5_K: levels from k4_levels, 8 sub-block scales and mins.
template <class B>
NURL_AVX2 float vec_dot_k4_family(int64_t n, const void* vx, const void* vy) {
  const auto* x = static_cast<const B*>(vx);
  const auto* y = static_cast<const BlockQ8_K*>(vy);
  const int64_t nb = n / kQK_K;
  __m256 acc = _mm256_setzero_ps();
  __m128 acc_m = _mm_setzero_ps();
  for (int64_t i = 0; i < nb; ++i) {
    prefetch_ahead(x + i, sizeof(B));
    const float d = y[i].d * h2f(x[i].d), dmin = -y[i].d * h2f(x[i].dmin);
    uint32_t sc[2], mn[2];
    unpack_scales_k4(x[i].scales, sc, mn);
    acc_m = _mm_fmadd_ps(_mm_set1_ps(dmin), _mm_cvtepi32_ps(mins_dot_bsums(mn, y[i].bsums)), acc_m);
    const __m256i sc16 = scales_k4_i16(sc);
    const __m256i qh = k4_high_bits(x[i]);
    __m256i sumi = _mm256_setzero_si256();
    const int8_t* q8 = y[i].qs;
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c, q8 += 64) {
      __m256i lo, hi;
      k4_levels(x[i], qh, c, lo, hi);
      const __m256i plo = _mm256_maddubs_epi16(lo, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q8)));
      const __m256i phi = _mm256_maddubs_epi16(hi, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q8 + 32)));
      sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(plo, scale_of(sc16, 2 * c)));
      sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(phi, scale_of(sc16, 2 * c + 1)));
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sumi), acc);
  }
  return hsum_ps(acc) + hsum_ps128(acc_m);
}

}  // namespace

NURL_AVX2 float vec_dot_q4_k(int64_t n, const void* vx, const void* vy) {
  return vec_dot_k4_family<BlockQ4_K>(n, vx, vy);
}

NURL_AVX2 float vec_dot_q5_k(int64_t n, const void* vx, const void* vy) {
  return vec_dot_k4_family<BlockQ5_K>(n, vx, vy);
}

// q6_K: levels q in 0..63 (x = sc·(q − 32)); Σ sc·(q−32)·y = Σ sc·q·y − 32·Σ sc·bsum.
NURL_AVX2 float vec_dot_q6_k(int64_t n, const void* vx, const void* vy) {
  const auto* x = static_cast<const BlockQ6_K*>(vx);
  const auto* y = static_cast<const BlockQ8_K*>(vy);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    prefetch_ahead(x + i, sizeof(BlockQ6_K));
    const __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x[i].scales)));
    const __m256i bs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y[i].bsums));
    // Start from −32·Σ sc·bsum (the level offset), then add Σ sc·q·y.
    __m256i sumi = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(_mm256_madd_epi16(sc16, bs), 5));
    for (int h = 0; h < 2; ++h) {
      __m256i q[4];
      q6k_unpack_half(x[i], h, q);
      const int8_t* q8 = y[i].qs + 128 * h;
#pragma GCC unroll 4
      for (int k = 0; k < 4; ++k) {
        const __m256i p = _mm256_maddubs_epi16(q[k], _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q8 + 32 * k)));
        sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(p, q6k_scale_pair(sc16, h, k)));
      }
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(y[i].d * h2f(x[i].d)), _mm256_cvtepi32_ps(sumi), acc);
  }
  return hsum_ps(acc);
}
// Two 16-element sub-block scales as int16: s0 for the low 128-bit lane, s1 for the high one.
NURL_AVX2 static inline __m256i lane_scales(int s0, int s1) {
  return _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_set1_epi16(int16_t(s0))), _mm_set1_epi16(int16_t(s1)), 1);
}

// q2_K: Σ d·sc·q·y − dmin·Σ m·bsum; q = 2-bit fields of qs, 4 per byte (shift 2j for group j).
NURL_AVX2 float vec_dot_q2_k(int64_t n, const void* vx, const void* vy) {
  const auto* x = static_cast<const BlockQ2_K*>(vx);
  const auto* y = static_cast<const BlockQ8_K*>(vy);
  const __m256i m3 = _mm256_set1_epi8(3);
  __m256 acc = _mm256_setzero_ps();
  float acc_m = 0;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const __m128i sc8 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x[i].scales));
    const __m256i mins16 = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(sc8, 4), _mm_set1_epi8(0x0f)));
    const __m256i bs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y[i].bsums));
    const int mins = hsum_epi32(_mm256_madd_epi16(mins16, bs));
    acc_m -= y[i].d * h2f(x[i].dmin) * float(mins);
    __m256i sumi = _mm256_setzero_si256();
    for (int h = 0; h < 2; ++h) {
      const __m256i q2 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[i].qs + 32 * h));
      for (int j = 0; j < 4; ++j) {
        const __m256i q = _mm256_and_si256(_mm256_srli_epi16(q2, 2 * j), m3);
        const __m256i p =
            _mm256_maddubs_epi16(q, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y[i].qs + 128 * h + 32 * j)));
        const int k = 8 * h + 2 * j;
        sumi =
            _mm256_add_epi32(sumi, _mm256_madd_epi16(p, lane_scales(x[i].scales[k] & 0xf, x[i].scales[k + 1] & 0xf)));
      }
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(y[i].d * h2f(x[i].d)), _mm256_cvtepi32_ps(sumi), acc);
  }
  return hsum_ps(acc) + acc_m;
}

// q3_K: q = 2 low bits − 4·(hmask bit clear), signed in −4..3; 16 signed 6-bit scales.
NURL_AVX2 float vec_dot_q3_k(int64_t n, const void* vx, const void* vy) {
  const auto* x = static_cast<const BlockQ3_K*>(vx);
  const auto* y = static_cast<const BlockQ8_K*>(vy);
  const __m256i m3 = _mm256_set1_epi8(3), four = _mm256_set1_epi8(4);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    int sc[16];
    for (int k = 0; k < 16; ++k) {
      const int lo = k < 8 ? (x[i].scales[k] & 0xf) : (x[i].scales[k - 8] >> 4);
      sc[k] = (lo | ((x[i].scales[8 + k % 4] >> (2 * (k / 4))) & 3) << 4) - 32;
    }
    const __m256i hm = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[i].hmask));
    __m256i sumi = _mm256_setzero_si256();
    for (int h = 0; h < 2; ++h) {
      const __m256i q2 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[i].qs + 32 * h));
      for (int j = 0; j < 4; ++j) {
        const __m256i bit = _mm256_set1_epi8(char(1 << (4 * h + j)));
        const __m256i has = _mm256_cmpeq_epi8(_mm256_and_si256(hm, bit), bit);
        const __m256i q =
            _mm256_sub_epi8(_mm256_and_si256(_mm256_srli_epi16(q2, 2 * j), m3), _mm256_andnot_si256(has, four));
        const __m256i yv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y[i].qs + 128 * h + 32 * j));
        const __m256i p = _mm256_maddubs_epi16(_mm256_sign_epi8(q, q), _mm256_sign_epi8(yv, q));
        const int k = 8 * h + 2 * j;
        sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(p, lane_scales(sc[k], sc[k + 1])));
      }
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(y[i].d * h2f(x[i].d)), _mm256_cvtepi32_ps(sumi), acc);
  }
  return hsum_ps(acc);
}

// iq4_xs: per 32-element sub-block a 6-bit scale (stored +32); levels via byte shuffle.
NURL_AVX2 float vec_dot_iq4_xs(int64_t n, const void* vx, const void* vy) {
  const auto* x = static_cast<const BlockIQ4_XS*>(vx);
  const auto* y = static_cast<const BlockQ8_K*>(vy);
  const __m256i table = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIq4nlValues)));
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    __m256i sumi = _mm256_setzero_si256();
    for (int ib = 0; ib < 8; ++ib) {
      const int ls = ((x[i].scales_l[ib / 2] >> (4 * (ib % 2))) & 0xf) | ((x[i].scales_h >> (2 * ib)) & 3) << 4;
      const __m256i q = _mm256_shuffle_epi8(table, unpack_nibbles_32(x[i].qs + 16 * ib));
      const __m256i yv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y[i].qs + 32 * ib));
      const __m256i p = _mm256_maddubs_epi16(_mm256_sign_epi8(q, q), _mm256_sign_epi8(yv, q));
      sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(p, _mm256_set1_epi16(int16_t(ls - 32))));
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(y[i].d * h2f(x[i].d)), _mm256_cvtepi32_ps(sumi), acc);
  }
  return hsum_ps(acc);
}

}  // namespace nurl::avx2

#endif
