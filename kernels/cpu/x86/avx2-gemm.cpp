// AVX2 gemm_rows micro-kernels that unpack each weight block once and apply it to a tile of
// 4 tokens (prompt chunks), instead of one vec_dot per (row, token). Per token the integer sums
// and block scales are exactly those of the matching vec_dot; only the float accumulation
// order differs. Leftover tokens (n_tokens % 4) and single-token calls go through vec_dot.
#include "kernels/cpu/x86/avx2-common.h"

#include <algorithm>

#if defined(__x86_64__)

namespace nurl::avx2 {

namespace {

constexpr int kTile = 4;

template <typename T>
const T* row_at(const void* base, size_t stride, int64_t r) {
  return reinterpret_cast<const T*>(static_cast<const uint8_t*>(base) + size_t(r) * stride);
}

// The legacy 32-blocks against q8_0: Unpack(w block) → 32 signed levels. Rows are taken in
// blocks of kRowBlock (a few hundred KB of weights, L2-resident) and each 4-token tile runs over
// the whole row block, so the activation scales of a tile are converted to f32 once per row
// block instead of once per row, and every weight byte still comes from memory once per call.
constexpr int64_t kRowBlock = 32;
constexpr int64_t kMaxBlocks = 1024;  // rows up to 32768 elements take the tiled path

template <typename WBlock, __m256i (*Unpack)(const WBlock&)>
NURL_AVX2 void gemm_legacy_q8_0(const void* W, size_t rs, int64_t r0, int64_t r1, int64_t n_cols, const void* X,
                                size_t xs, int nt, float* y, int64_t ys, VecDotFnAvx2 dot) {
  const int64_t nb = n_cols / kQK;
  const int n_tiled = nb <= kMaxBlocks ? nt / kTile * kTile : 0;
  alignas(32) float xd[kTile][kMaxBlocks];
  for (int64_t rb0 = r0; rb0 < r1; rb0 += kRowBlock) {
    const int64_t rb1 = std::min(rb0 + kRowBlock, r1);
    for (int t = 0; t < n_tiled; t += kTile) {
      const BlockQ8_0* x[kTile];
      for (int k = 0; k < kTile; ++k) {
        x[k] = row_at<BlockQ8_0>(X, xs, t + k);
        for (int64_t i = 0; i < nb; ++i) xd[k][i] = h2f(x[k][i].d);
      }
      for (int64_t r = rb0; r < rb1; ++r) {
        const WBlock* w = row_at<WBlock>(W, rs, r);
        __m256 acc[kTile];
        for (int k = 0; k < kTile; ++k) acc[k] = _mm256_setzero_ps();
        for (int64_t i = 0; i < nb; ++i) {
          const __m256i q = Unpack(w[i]);
          const __m256i aq = _mm256_sign_epi8(q, q);
          const __m256 wd = _mm256_set1_ps(h2f(w[i].d));
          for (int k = 0; k < kTile; ++k) {
            const __m256i yv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[k][i].qs));
            const __m256i p = _mm256_madd_epi16(_mm256_maddubs_epi16(aq, _mm256_sign_epi8(yv, q)), _mm256_set1_epi16(1));
            acc[k] = _mm256_fmadd_ps(_mm256_mul_ps(wd, _mm256_broadcast_ss(&xd[k][i])), _mm256_cvtepi32_ps(p), acc[k]);
          }
        }
        for (int k = 0; k < kTile; ++k) y[(t + k) * ys + r] = hsum_ps(acc[k]);
      }
    }
    for (int64_t r = rb0; r < rb1; ++r)
      for (int t = n_tiled; t < nt; ++t) y[t * ys + r] = dot(n_cols, row_at<uint8_t>(W, rs, r), row_at<uint8_t>(X, xs, t));
  }
}

NURL_AVX2 __m256i unpack_q8_0(const BlockQ8_0& b) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs)); }
NURL_AVX2 __m256i unpack_q4_0(const BlockQ4_0& b) { return _mm256_sub_epi8(unpack_nibbles_32(b.qs), _mm256_set1_epi8(8)); }

}  // namespace

NURL_AVX2 void gemm_q8_0(const void* W, size_t rs, int64_t r0, int64_t r1, int64_t n_cols, const void* X, size_t xs,
                         int nt, float* y, int64_t ys) {
  gemm_legacy_q8_0<BlockQ8_0, unpack_q8_0>(W, rs, r0, r1, n_cols, X, xs, nt, y, ys, vec_dot_q8_0);
}

NURL_AVX2 void gemm_q4_0(const void* W, size_t rs, int64_t r0, int64_t r1, int64_t n_cols, const void* X, size_t xs,
                         int nt, float* y, int64_t ys) {
  gemm_legacy_q8_0<BlockQ4_0, unpack_q4_0>(W, rs, r0, r1, n_cols, X, xs, nt, y, ys, vec_dot_q4_0);
}

// q4_K × q8_K over 4 tokens: scales, mins and nibbles of a block are unpacked once.
NURL_AVX2 void gemm_q4_k(const void* W, size_t rs, int64_t r0, int64_t r1, int64_t n_cols, const void* X, size_t xs,
                         int nt, float* y, int64_t ys) {
  const int64_t nb = n_cols / kQK_K;
  const __m256i m4 = _mm256_set1_epi8(0x0f);
  for (int64_t r = r0; r < r1; ++r) {
    const BlockQ4_K* w = row_at<BlockQ4_K>(W, rs, r);
    int t = 0;
    for (; t + kTile <= nt; t += kTile) {
      const BlockQ8_K* x[kTile];
      __m256 acc[kTile];
      __m128 acc_m[kTile];
      for (int k = 0; k < kTile; ++k) {
        x[k] = row_at<BlockQ8_K>(X, xs, t + k);
        acc[k] = _mm256_setzero_ps();
        acc_m[k] = _mm_setzero_ps();
      }
      for (int64_t i = 0; i < nb; ++i) {
        uint32_t sc[2], mn[2];
        unpack_scales_k4(w[i].scales, sc, mn);
        const __m256i sc16 = scales_k4_i16(sc);
        const float wd = h2f(w[i].d), wdmin = h2f(w[i].dmin);
        __m256i sumi[kTile];
        for (int k = 0; k < kTile; ++k) {
          sumi[k] = _mm256_setzero_si256();
          acc_m[k] = _mm_fmadd_ps(_mm_set1_ps(-x[k][i].d * wdmin), _mm_cvtepi32_ps(mins_dot_bsums(mn, x[k][i].bsums)),
                                  acc_m[k]);
        }
#pragma GCC unroll 4
        for (int c = 0; c < 4; ++c) {
          const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w[i].qs + 32 * c));
          const __m256i lo = _mm256_and_si256(b, m4), hi = _mm256_and_si256(_mm256_srli_epi16(b, 4), m4);
          const __m256i slo = scale_of(sc16, 2 * c), shi = scale_of(sc16, 2 * c + 1);
          for (int k = 0; k < kTile; ++k) {
            const int8_t* q8 = x[k][i].qs + 64 * c;
            const __m256i plo = _mm256_maddubs_epi16(lo, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q8)));
            const __m256i phi = _mm256_maddubs_epi16(hi, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q8 + 32)));
            sumi[k] = _mm256_add_epi32(sumi[k], _mm256_add_epi32(_mm256_madd_epi16(plo, slo), _mm256_madd_epi16(phi, shi)));
          }
        }
        for (int k = 0; k < kTile; ++k)
          acc[k] = _mm256_fmadd_ps(_mm256_set1_ps(x[k][i].d * wd), _mm256_cvtepi32_ps(sumi[k]), acc[k]);
      }
      for (int k = 0; k < kTile; ++k) y[(t + k) * ys + r] = hsum_ps(acc[k]) + hsum_ps128(acc_m[k]);
    }
    for (; t < nt; ++t) y[t * ys + r] = vec_dot_q4_k(n_cols, w, row_at<uint8_t>(X, xs, t));
  }
}

// q6_K × q8_K over 4 tokens: levels and scale pairs of a block are unpacked once.
NURL_AVX2 void gemm_q6_k(const void* W, size_t rs, int64_t r0, int64_t r1, int64_t n_cols, const void* X, size_t xs,
                         int nt, float* y, int64_t ys) {
  const int64_t nb = n_cols / kQK_K;
  for (int64_t r = r0; r < r1; ++r) {
    const BlockQ6_K* w = row_at<BlockQ6_K>(W, rs, r);
    int t = 0;
    for (; t + kTile <= nt; t += kTile) {
      const BlockQ8_K* x[kTile];
      __m256 acc[kTile];
      for (int k = 0; k < kTile; ++k) {
        x[k] = row_at<BlockQ8_K>(X, xs, t + k);
        acc[k] = _mm256_setzero_ps();
      }
      for (int64_t i = 0; i < nb; ++i) {
        const __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w[i].scales)));
        __m256i sumi[kTile];
        for (int k = 0; k < kTile; ++k) {
          const __m256i bs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[k][i].bsums));
          sumi[k] = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(_mm256_madd_epi16(sc16, bs), 5));
        }
        for (int h = 0; h < 2; ++h) {
          __m256i q[4];
          q6k_unpack_half(w[i], h, q);
#pragma GCC unroll 4
          for (int j = 0; j < 4; ++j) {
            const __m256i scv = q6k_scale_pair(sc16, h, j);
            for (int k = 0; k < kTile; ++k) {
              const int8_t* q8 = x[k][i].qs + 128 * h + 32 * j;
              const __m256i p = _mm256_maddubs_epi16(q[j], _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q8)));
              sumi[k] = _mm256_add_epi32(sumi[k], _mm256_madd_epi16(p, scv));
            }
          }
        }
        const float wd = h2f(w[i].d);
        for (int k = 0; k < kTile; ++k)
          acc[k] = _mm256_fmadd_ps(_mm256_set1_ps(x[k][i].d * wd), _mm256_cvtepi32_ps(sumi[k]), acc[k]);
      }
      for (int k = 0; k < kTile; ++k) y[(t + k) * ys + r] = hsum_ps(acc[k]);
    }
    for (; t < nt; ++t) y[t * ys + r] = vec_dot_q6_k(n_cols, w, row_at<uint8_t>(X, xs, t));
  }
}

}  // namespace nurl::avx2

#endif
