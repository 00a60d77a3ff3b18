// AVX2 gemm_rows micro-kernels. Prompt chunks: each weight block is unpacked once and applied to
// a tile of tokens, instead of one vec_dot per (row, token); the 32-element formats use register
// tiles of 4 rows × 3 tokens, q4_K, q5_K and q6_K tiles of 1 row × 4 tokens. Generation (one
// token, or up to four parallel sequences): the 32-element formats stream each row once with
// scales taken eight blocks at a time and a prefetch ahead; the k-quants' 1-row tiles already
// read a row once for all their tokens, and a single token uses their vec_dot. Results equal the
// vec_dot's up to the order of float accumulation (the offset formats fold their offset separately).
#include <algorithm>
#include <type_traits>
#include <vector>

#include "kernels/cpu/x86/avx2-common.h"

#if defined(__x86_64__)

namespace nurl::avx2 {

namespace {

constexpr int kTile = 4;

#define NURL_GEMM_TARGET NURL_AVX2
#include "kernels/cpu/x86/legacy-gemm.inc"
#undef NURL_GEMM_TARGET

// q4_K and q5_K × q8_K, one row against N tokens: scales, mins and levels (k4_levels) of a
// block are unpacked once for all N.
template <class B, int N>
NURL_AVX2 void k4_tile(const B* w, int64_t nb, const void* X, size_t xs, float* y, int64_t ys) {
  const BlockQ8_K* x[N];
  __m256 acc[N];
  __m128 acc_m[N];
  for (int k = 0; k < N; ++k) {
    x[k] = row_at<BlockQ8_K>(X, xs, k);
    acc[k] = _mm256_setzero_ps();
    acc_m[k] = _mm_setzero_ps();
  }
  for (int64_t i = 0; i < nb; ++i) {
    uint32_t sc[2], mn[2];
    unpack_scales_k4(w[i].scales, sc, mn);
    const __m256i sc16 = scales_k4_i16(sc);
    const __m256i qh = k4_high_bits(w[i]);
    const float wd = h2f(w[i].d), wdmin = h2f(w[i].dmin);
    __m256i sumi[N];
    for (int k = 0; k < N; ++k) {
      sumi[k] = _mm256_setzero_si256();
      acc_m[k] = _mm_fmadd_ps(_mm_set1_ps(-x[k][i].d * wdmin), _mm_cvtepi32_ps(mins_dot_bsums(mn, x[k][i].bsums)),
                              acc_m[k]);
    }
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) {
      __m256i lo, hi;
      k4_levels(w[i], qh, c, lo, hi);
      const __m256i slo = scale_of(sc16, 2 * c), shi = scale_of(sc16, 2 * c + 1);
      for (int k = 0; k < N; ++k) {
        const int8_t* q8 = x[k][i].qs + 64 * c;
        const __m256i plo = _mm256_maddubs_epi16(lo, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q8)));
        const __m256i phi = _mm256_maddubs_epi16(hi, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q8 + 32)));
        sumi[k] = _mm256_add_epi32(sumi[k], _mm256_add_epi32(_mm256_madd_epi16(plo, slo), _mm256_madd_epi16(phi, shi)));
      }
    }
    for (int k = 0; k < N; ++k)
      acc[k] = _mm256_fmadd_ps(_mm256_set1_ps(x[k][i].d * wd), _mm256_cvtepi32_ps(sumi[k]), acc[k]);
  }
  for (int k = 0; k < N; ++k) y[k * ys] = hsum_ps(acc[k]) + hsum_ps128(acc_m[k]);
}

// q6_K × q8_K, one row against N tokens: levels and scale pairs of a block are unpacked once.
template <int N>
NURL_AVX2 void q6k_tile(const BlockQ6_K* w, int64_t nb, const void* X, size_t xs, float* y, int64_t ys) {
  const BlockQ8_K* x[N];
  __m256 acc[N];
  for (int k = 0; k < N; ++k) {
    x[k] = row_at<BlockQ8_K>(X, xs, k);
    acc[k] = _mm256_setzero_ps();
  }
  for (int64_t i = 0; i < nb; ++i) {
    const __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w[i].scales)));
    __m256i sumi[N];
    for (int k = 0; k < N; ++k) {
      const __m256i bs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[k][i].bsums));
      sumi[k] = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(_mm256_madd_epi16(sc16, bs), 5));
    }
    for (int h = 0; h < 2; ++h) {
      __m256i q[4];
      q6k_unpack_half(w[i], h, q);
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) {
        const __m256i scv = q6k_scale_pair(sc16, h, j);
        for (int k = 0; k < N; ++k) {
          const int8_t* q8 = x[k][i].qs + 128 * h + 32 * j;
          const __m256i p = _mm256_maddubs_epi16(q[j], _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q8)));
          sumi[k] = _mm256_add_epi32(sumi[k], _mm256_madd_epi16(p, scv));
        }
      }
    }
    const float wd = h2f(w[i].d);
    for (int k = 0; k < N; ++k) acc[k] = _mm256_fmadd_ps(_mm256_set1_ps(x[k][i].d * wd), _mm256_cvtepi32_ps(sumi[k]), acc[k]);
  }
  for (int k = 0; k < N; ++k) y[k * ys] = hsum_ps(acc[k]);
}

// The 1-row tiles of a k-quant, by width: T::tile<N> runs one row against N tokens.
template <class B>
struct K4Tiles {
  using Block = B;
  template <int N>
  NURL_AVX2 static void tile(const B* w, int64_t nb, const void* X, size_t xs, float* y, int64_t ys) {
    k4_tile<B, N>(w, nb, X, xs, y, ys);
  }
};
struct Q6KTiles {
  using Block = BlockQ6_K;
  template <int N>
  NURL_AVX2 static void tile(const BlockQ6_K* w, int64_t nb, const void* X, size_t xs, float* y, int64_t ys) {
    q6k_tile<N>(w, nb, X, xs, y, ys);
  }
};

// Rows [r0, r1) × nt tokens: tiles of kTile tokens, then one tile of the 2–3 left over (parallel
// sequences decoded together read each row once); a single token takes the format's vec_dot.
template <class T, VecDotFnAvx2 Dot>
NURL_AVX2 void gemm_k_tiles(const void* W, size_t rs, int64_t r0, int64_t r1, int64_t n_cols, const void* X, size_t xs,
                            int nt, float* y, int64_t ys) {
  using B = typename T::Block;
  const int64_t nb = n_cols / kQK_K;
  for (int64_t r = r0; r < r1; ++r) {
    const B* w = row_at<B>(W, rs, r);
    int t = 0;
    for (; t + kTile <= nt; t += kTile) T::template tile<kTile>(w, nb, row_at<uint8_t>(X, xs, t), xs, y + t * ys + r, ys);
    const void* xt = row_at<uint8_t>(X, xs, t);
    switch (nt - t) {
      case 3: T::template tile<3>(w, nb, xt, xs, y + t * ys + r, ys); break;
      case 2: T::template tile<2>(w, nb, xt, xs, y + t * ys + r, ys); break;
      case 1: y[t * ys + r] = Dot(n_cols, w, xt); break;
      default: break;
    }
  }
}

}  // namespace

GemmRowsFn tiled_gemm(GgmlType t) {
  if (GemmRowsFn f = legacy_gemm(t)) return f;
  switch (t) {
    case GgmlType::Q4_K: return gemm_k_tiles<K4Tiles<BlockQ4_K>, vec_dot_q4_k>;
    case GgmlType::Q5_K: return gemm_k_tiles<K4Tiles<BlockQ5_K>, vec_dot_q5_k>;
    case GgmlType::Q6_K: return gemm_k_tiles<Q6KTiles, vec_dot_q6_k>;
    default: return nullptr;
  }
}

}  // namespace nurl::avx2

#endif
