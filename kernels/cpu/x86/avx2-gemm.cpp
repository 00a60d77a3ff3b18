// AVX2 gemm_rows micro-kernels. Prompt chunks: each weight block is unpacked once and applied to
// a tile of tokens, instead of one vec_dot per (row, token); the 32-element formats use register
// tiles of 4 rows × 3 tokens, q4_K, q5_K and q6_K tiles of 1 row × 4 tokens. Single tokens
// (generation): the 32-element formats stream each row with scales taken eight blocks at a time
// and a prefetch ahead; the k-quants use their vec_dot. Results equal the vec_dot's up to the
// order of float accumulation (the offset formats fold their offset separately).
#include <algorithm>
#include <type_traits>
#include <vector>

#include "kernels/cpu/x86/avx2-common.h"

#if defined(__x86_64__)

namespace nurl::avx2 {

namespace {

constexpr int kTile = 4;

template <typename T>
const T* row_at(const void* base, size_t stride, int64_t r) {
  return reinterpret_cast<const T*>(static_cast<const uint8_t*>(base) + size_t(r) * stride);
}

// ---- the 32-element formats: register tiles of RM weight rows × RN tokens ------------------
//
// Per block, a weight row's 32 levels are unpacked once and multiplied with RN token rows, and a
// token row's 32 activations are loaded once for RM weight rows; the RM·RN accumulators stay in
// registers for the whole row. Two ways to multiply int8 by int8 with maddubs (u8 × s8):
//  - signed levels (q8_0, iq4_nl): |w| × sign(x, w), one sign per (row, token) pair;
//  - offset levels (q4_0, q5_0: w = u − c; q4_1, q5_1: w = d·u + m): u × x directly, and the
//    offset folds into one float term per block, Σ_b coef_w[b] · (d_x Σx)[b], which is summed
//    eight blocks at a time after the main loop (coef_w = −c·d_w, or m: F::coef8 gives eight
//    blocks' coef_w from their d_w).
// The float scales of the tile (d_w per row, d_x and d_x·Σx per token) are converted from f16
// once into scratch arrays, padded with zeros to a multiple of 8 blocks.

// The f16 field `f` of up to eight consecutive blocks as floats (zeros past n).
template <class B>
NURL_AVX2 inline __m256 f16_fields8(const B* b, int n, f16_bits B::*f) {
  if (n == 8)
    return _mm256_cvtph_ps(_mm_setr_epi16(short(b[0].*f), short(b[1].*f), short(b[2].*f), short(b[3].*f),
                                          short(b[4].*f), short(b[5].*f), short(b[6].*f), short(b[7].*f)));
  alignas(16) f16_bits h[8] = {};
  for (int k = 0; k < n; ++k) h[k] = b[k].*f;
  return _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(h)));
}

struct FmtQ8_0 {
  using Block = BlockQ8_0;
  using Act = BlockQ8_0;
  static constexpr bool kSigned = true;
  NURL_AVX2 static __m256i levels(const Block& b) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs)); }
};
struct FmtIQ4_NL {
  using Block = BlockIQ4_NL;
  using Act = BlockQ8_0;
  static constexpr bool kSigned = true;
  NURL_AVX2 static __m256i levels(const Block& b) {
    const __m256i table = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIq4nlValues)));
    return _mm256_shuffle_epi8(table, unpack_nibbles_32(b.qs));
  }
};
struct FmtQ4_0 {
  using Block = BlockQ4_0;
  using Act = BlockQ8_0;
  static constexpr bool kSigned = false;
  NURL_AVX2 static __m256i levels(const Block& b) { return unpack_nibbles_32(b.qs); }
  NURL_AVX2 static __m256 coef8(const Block*, int, __m256 d8) { return _mm256_mul_ps(d8, _mm256_set1_ps(-8.f)); }
};
struct FmtQ5_0 {
  using Block = BlockQ5_0;
  using Act = BlockQ8_0;
  static constexpr bool kSigned = false;
  NURL_AVX2 static __m256i levels(const Block& b) {
    return _mm256_or_si256(unpack_nibbles_32(b.qs), _mm256_and_si256(bits_to_bytes_32(b.qh), _mm256_set1_epi8(16)));
  }
  NURL_AVX2 static __m256 coef8(const Block*, int, __m256 d8) { return _mm256_mul_ps(d8, _mm256_set1_ps(-16.f)); }
};
struct FmtQ4_1 {
  using Block = BlockQ4_1;
  using Act = BlockQ8_1;
  static constexpr bool kSigned = false;
  NURL_AVX2 static __m256i levels(const Block& b) { return unpack_nibbles_32(b.qs); }
  NURL_AVX2 static __m256 coef8(const Block* b, int n, __m256) { return f16_fields8(b, n, &Block::m); }
};
struct FmtQ5_1 {
  using Block = BlockQ5_1;
  using Act = BlockQ8_1;
  static constexpr bool kSigned = false;
  NURL_AVX2 static __m256i levels(const Block& b) {
    return _mm256_or_si256(unpack_nibbles_32(b.qs), _mm256_and_si256(bits_to_bytes_32(b.qh), _mm256_set1_epi8(16)));
  }
  NURL_AVX2 static __m256 coef8(const Block* b, int n, __m256) { return f16_fields8(b, n, &Block::m); }
};

// d_x·Σx of an activation block: stored by q8_1, computed for q8_0.
NURL_AVX2 inline float act_sum(const BlockQ8_1& b) {
  return h2f(b.s);
}
NURL_AVX2 inline float act_sum(const BlockQ8_0& b) {
  const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs));
  const __m256i s16 = _mm256_maddubs_epi16(_mm256_set1_epi8(1), x);
  return h2f(b.d) * float(hsum_epi32(_mm256_madd_epi16(s16, _mm256_set1_epi16(1))));
}

// An activation row's block scales d_x (xd) and, for the offset formats, d_x·Σx (xs), padded
// with zeros from nb to nbp.
template <class F>
NURL_AVX2 void act_scales(const typename F::Act* x, int64_t nb, int64_t nbp, float* xd, float* xs) {
  for (int64_t b = 0; b < nb; ++b) {
    xd[b] = h2f(x[b].d);
    if constexpr (!F::kSigned) xs[b] = act_sum(x[b]);
  }
  for (int64_t b = nb; b < nbp; ++b) xd[b] = xs[b] = 0.f;
}

template <class F, int RM, int RN>
NURL_AVX2 void legacy_tile(const typename F::Block* const* w, const typename F::Act* const* x, int64_t nb, int64_t nbp,
                           const float* wd, const float* wc, const float* const* xd, const float* const* xs, float* y,
                           int64_t ys) {
  __m256 acc[RM][RN];
#pragma GCC unroll 8
  for (int i = 0; i < RM; ++i)
#pragma GCC unroll 8
    for (int j = 0; j < RN; ++j) acc[i][j] = _mm256_setzero_ps();
  const __m256i ones = _mm256_set1_epi16(1);
  // The pair scales d_w·d_x of eight blocks are computed with one multiply per pair, so the
  // per-block step only loads them (a broadcast is a load, not an arithmetic instruction).
  alignas(32) float sc[RM][RN][8];
  for (int64_t b0 = 0; b0 < nb; b0 += 8) {
#pragma GCC unroll 8
    for (int i = 0; i < RM; ++i) {
      const __m256 wdv = _mm256_loadu_ps(wd + i * nbp + b0);
#pragma GCC unroll 8
      for (int j = 0; j < RN; ++j) _mm256_store_ps(sc[i][j], _mm256_mul_ps(wdv, _mm256_loadu_ps(xd[j] + b0)));
    }
    const int bn = int(std::min<int64_t>(8, nb - b0));
    for (int bb = 0; bb < bn; ++bb) {
      const int64_t b = b0 + bb;
      __m256i xv[RN];
#pragma GCC unroll 8
      for (int j = 0; j < RN; ++j) xv[j] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[j][b].qs));
#pragma GCC unroll 8
      for (int i = 0; i < RM; ++i) {
        const __m256i q = F::levels(w[i][b]);
        if constexpr (F::kSigned) {
          const __m256i aq = _mm256_sign_epi8(q, q);
#pragma GCC unroll 8
          for (int j = 0; j < RN; ++j) {
            const __m256i p = _mm256_madd_epi16(_mm256_maddubs_epi16(aq, _mm256_sign_epi8(xv[j], q)), ones);
            acc[i][j] = _mm256_fmadd_ps(_mm256_broadcast_ss(&sc[i][j][bb]), _mm256_cvtepi32_ps(p), acc[i][j]);
          }
        } else {
#pragma GCC unroll 8
          for (int j = 0; j < RN; ++j) {
            const __m256i p = _mm256_madd_epi16(_mm256_maddubs_epi16(q, xv[j]), ones);
            acc[i][j] = _mm256_fmadd_ps(_mm256_broadcast_ss(&sc[i][j][bb]), _mm256_cvtepi32_ps(p), acc[i][j]);
          }
        }
      }
    }
  }
  if constexpr (!F::kSigned) {
    for (int64_t b = 0; b < nbp; b += 8)
#pragma GCC unroll 8
      for (int i = 0; i < RM; ++i) {
        const __m256 c = _mm256_loadu_ps(wc + i * nbp + b);
#pragma GCC unroll 8
        for (int j = 0; j < RN; ++j) acc[i][j] = _mm256_fmadd_ps(c, _mm256_loadu_ps(xs[j] + b), acc[i][j]);
      }
  }
#pragma GCC unroll 8
  for (int i = 0; i < RM; ++i)
#pragma GCC unroll 8
    for (int j = 0; j < RN; ++j) y[j * ys + i] = hsum_ps(acc[i][j]);
}

// All nt tokens against RM prepared rows: tiles of RN tokens, then one tile of the leftover.
template <class F, int RM, int RN>
NURL_AVX2 void legacy_token_tiles(const typename F::Block* const* w, int64_t r, int64_t nb, int64_t nbp, const void* X,
                                  size_t xstride, int nt, const float* xd, const float* xs, const float* wd,
                                  const float* wc, float* y, int64_t ys) {
  using A = typename F::Act;
  const A* x[RN];
  const float* xdp[RN];
  const float* xsp[RN];
  int t = 0;
  auto point = [&](int n) {
    for (int j = 0; j < n; ++j) {
      x[j] = row_at<A>(X, xstride, t + j);
      xdp[j] = xd + (t + j) * nbp;
      xsp[j] = xs + (t + j) * nbp;
    }
  };
  for (; t + RN <= nt; t += RN) {
    point(RN);
    legacy_tile<F, RM, RN>(w, x, nb, nbp, wd, wc, xdp, xsp, y + t * ys + r, ys);
  }
  point(nt - t);
  float* yt = y + t * ys + r;
  switch (nt - t) {
    case 0:
      break;
    case 1:
      legacy_tile<F, RM, 1>(w, x, nb, nbp, wd, wc, xdp, xsp, yt, ys);
      break;
    case 2:
      if constexpr (RN > 2) legacy_tile<F, RM, 2>(w, x, nb, nbp, wd, wc, xdp, xsp, yt, ys);
      break;
    case 3:
      if constexpr (RN > 3) legacy_tile<F, RM, 3>(w, x, nb, nbp, wd, wc, xdp, xsp, yt, ys);
      break;
    default:
      break;
  }
}

// A weight block already unpacked to its 32 levels: the tile loop then only loads them.
struct Levels32 {
  int8_t q[kQK];
};
template <class F>
struct PreUnpacked {
  using Block = Levels32;
  using Act = typename F::Act;
  static constexpr bool kSigned = F::kSigned;
  NURL_AVX2 static __m256i levels(const Block& b) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.q)); }
};

// Rows [r, r + RM) × all nt tokens: tiles of RN tokens, then one tile of the leftover tokens.
// Formats whose levels take work to unpack (all but q8_0) are unpacked once per row into
// scratch when there are more tokens than one tile, instead of once per tile.
// wd/wc: the rows' scales, prepared by the caller (row i at i·nbp).
template <class F, int RM, int RN>
NURL_AVX2 void legacy_rows(const void* W, size_t rs, int64_t r, int64_t nb, int64_t nbp, const void* X, size_t xstride,
                           int nt, const float* xd, const float* xs, const float* wd, const float* wc, float* y,
                           int64_t ys) {
  using B = typename F::Block;
  const B* w[RM];
  for (int i = 0; i < RM; ++i) w[i] = row_at<B>(W, rs, r + i);
  if constexpr (!std::is_same_v<B, BlockQ8_0>) {
    if (nt > RN) {
      Levels32* levels = thread_scratch<Levels32, ScratchTag::gemm_levels>(size_t(RM * nb));
      const Levels32* u[RM];
      for (int i = 0; i < RM; ++i) {
        Levels32* dst = levels + i * nb;
        for (int64_t b = 0; b < nb; ++b) _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst[b].q), F::levels(w[i][b]));
        u[i] = dst;
      }
      legacy_token_tiles<PreUnpacked<F>, RM, RN>(u, r, nb, nbp, X, xstride, nt, xd, xs, wd, wc, y, ys);
      return;
    }
  }
  legacy_token_tiles<F, RM, RN>(w, r, nb, nbp, X, xstride, nt, xd, xs, wd, wc, y, ys);
}

// ---- generation: one token, one row at a time --------------------------------------------
//
// With one token no weight block is reused: each row streams once, and the cost is memory latency
// plus instructions per block. Per eight blocks the row's scales are read first (one f16→f32
// conversion, one multiply by the activation's scales for all eight pair scales), prefetched well
// ahead of that burst. The offset formats multiply their unsigned levels directly and add their
// offset per eight blocks as one FMA against the activation's d·Σx; the activation's scales and
// sums are converted once per call. Interleaving several rows, as the prompt tiles do, measured
// slower here: it breaks the stream.
template <class F>
NURL_AVX2 float legacy_gemv_row(const typename F::Block* w, const typename F::Act* x, int64_t nb, const float* xd,
                                const float* xs) {
  using B = typename F::Block;
  const __m256i ones = _mm256_set1_epi16(1);
  __m256 acc = _mm256_setzero_ps();
  alignas(32) float sc[8];
  for (int64_t b0 = 0; b0 < nb; b0 += 8) {
    prefetch_ahead(w + b0, 8 * sizeof(B));
    const int bn = int(std::min<int64_t>(8, nb - b0));
    const __m256 wd8 = f16_fields8<B>(w + b0, bn, &B::d);
    _mm256_store_ps(sc, _mm256_mul_ps(wd8, _mm256_loadu_ps(xd + b0)));
    if constexpr (!F::kSigned) acc = _mm256_fmadd_ps(F::coef8(w + b0, bn, wd8), _mm256_loadu_ps(xs + b0), acc);
    for (int bb = 0; bb < bn; ++bb) {
      const int64_t b = b0 + bb;
      const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[b].qs));
      const __m256i q = F::levels(w[b]);
      __m256i p;
      if constexpr (F::kSigned)
        p = _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_sign_epi8(q, q), _mm256_sign_epi8(xv, q)), ones);
      else
        p = _mm256_madd_epi16(_mm256_maddubs_epi16(q, xv), ones);
      acc = _mm256_fmadd_ps(_mm256_broadcast_ss(&sc[bb]), _mm256_cvtepi32_ps(p), acc);
    }
  }
  return hsum_ps(acc);
}

template <class F>
NURL_AVX2 void legacy_gemv(const void* W, size_t rs, int64_t r0, int64_t r1, int64_t n_cols, const void* X, float* y) {
  using A = typename F::Act;
  using B = typename F::Block;
  const int64_t nb = n_cols / kQK, nbp = (nb + 7) / 8 * 8;
  const A* x = static_cast<const A*>(X);
  float* xd = thread_scratch<float, ScratchTag::gemm_scales>(size_t(2 * nbp));
  float* xs = xd + nbp;
  act_scales<F>(x, nb, nbp, xd, xs);
  for (int64_t r = r0; r < r1; ++r) y[r] = legacy_gemv_row<F>(row_at<B>(W, rs, r), x, nb, xd, xs);
}

template <class F, int RM = 4, int RN = 3>
NURL_AVX2 void gemm_legacy(const void* W, size_t rs, int64_t r0, int64_t r1, int64_t n_cols, const void* X,
                           size_t xstride, int nt, float* y, int64_t ys) {
  static_assert(RN <= 4, "leftover-token dispatch covers RN <= 4");
  using A = typename F::Act;
  if (nt == 1) return legacy_gemv<F>(W, rs, r0, r1, n_cols, X, y);
  // Tokens in chunks that stay in L2 while every row of the range passes over them; the rows'
  // scales are converted once for all chunks.
  constexpr int kChunk = 32;
  using B = typename F::Block;
  const int64_t nb = n_cols / kQK, nbp = (nb + 7) / 8 * 8, n_r = r1 - r0;
  float* s = thread_scratch<float, ScratchTag::gemm_scales>(size_t(nbp) * size_t(2 * kChunk + 2 * n_r));
  float* xd = s;
  float* xs = xd + nbp * kChunk;
  float* wd = xs + nbp * kChunk;
  float* wc = wd + nbp * n_r;
  for (int64_t i = 0; i < n_r; ++i) {
    const B* w = row_at<B>(W, rs, r0 + i);
    for (int64_t b0 = 0; b0 < nbp; b0 += 8) {  // zeros past nb
      const int bn = int(std::min<int64_t>(8, nb - b0));
      const __m256 wd8 = f16_fields8<B>(w + b0, bn, &B::d);
      _mm256_storeu_ps(wd + i * nbp + b0, wd8);
      if constexpr (!F::kSigned) _mm256_storeu_ps(wc + i * nbp + b0, F::coef8(w + b0, bn, wd8));
    }
  }
  for (int t0 = 0; t0 < nt; t0 += kChunk) {
    const int n = std::min(kChunk, nt - t0);
    const void* Xc = static_cast<const uint8_t*>(X) + size_t(t0) * xstride;
    for (int t = 0; t < n; ++t) act_scales<F>(row_at<A>(Xc, xstride, t), nb, nbp, xd + t * nbp, xs + t * nbp);
    float* yc = y + t0 * ys;
    int64_t r = r0;
    for (; r + RM <= r1; r += RM)
      legacy_rows<F, RM, RN>(W, rs, r, nb, nbp, Xc, xstride, n, xd, xs, wd + (r - r0) * nbp, wc + (r - r0) * nbp, yc,
                             ys);
    for (; r < r1; ++r)
      legacy_rows<F, 1, RN>(W, rs, r, nb, nbp, Xc, xstride, n, xd, xs, wd + (r - r0) * nbp, wc + (r - r0) * nbp, yc,
                            ys);
  }
}

// q4_K and q5_K × q8_K over 4 tokens: scales, mins and levels (k4_levels) of a block are
// unpacked once.
template <class B, VecDotFnAvx2 Dot>
NURL_AVX2 void gemm_k4_family(const void* W, size_t rs, int64_t r0, int64_t r1, int64_t n_cols, const void* X,
                              size_t xs, int nt, float* y, int64_t ys) {
  const int64_t nb = n_cols / kQK_K;
  for (int64_t r = r0; r < r1; ++r) {
    const B* w = row_at<B>(W, rs, r);
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
        const __m256i qh = k4_high_bits(w[i]);
        const float wd = h2f(w[i].d), wdmin = h2f(w[i].dmin);
        __m256i sumi[kTile];
        for (int k = 0; k < kTile; ++k) {
          sumi[k] = _mm256_setzero_si256();
          acc_m[k] = _mm_fmadd_ps(_mm_set1_ps(-x[k][i].d * wdmin), _mm_cvtepi32_ps(mins_dot_bsums(mn, x[k][i].bsums)),
                                  acc_m[k]);
        }
#pragma GCC unroll 4
        for (int c = 0; c < 4; ++c) {
          __m256i lo, hi;
          k4_levels(w[i], qh, c, lo, hi);
          const __m256i slo = scale_of(sc16, 2 * c), shi = scale_of(sc16, 2 * c + 1);
          for (int k = 0; k < kTile; ++k) {
            const int8_t* q8 = x[k][i].qs + 64 * c;
            const __m256i plo = _mm256_maddubs_epi16(lo, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q8)));
            const __m256i phi = _mm256_maddubs_epi16(hi, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q8 + 32)));
            sumi[k] =
                _mm256_add_epi32(sumi[k], _mm256_add_epi32(_mm256_madd_epi16(plo, slo), _mm256_madd_epi16(phi, shi)));
          }
        }
        for (int k = 0; k < kTile; ++k)
          acc[k] = _mm256_fmadd_ps(_mm256_set1_ps(x[k][i].d * wd), _mm256_cvtepi32_ps(sumi[k]), acc[k]);
      }
      for (int k = 0; k < kTile; ++k) y[(t + k) * ys + r] = hsum_ps(acc[k]) + hsum_ps128(acc_m[k]);
    }
    for (; t < nt; ++t) y[t * ys + r] = Dot(n_cols, w, row_at<uint8_t>(X, xs, t));
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

}  // namespace

GemmRowsFn tiled_gemm(GgmlType t) {
  switch (t) {
    case GgmlType::Q8_0: return gemm_legacy<FmtQ8_0>;
    case GgmlType::Q4_0: return gemm_legacy<FmtQ4_0>;
    case GgmlType::Q4_1: return gemm_legacy<FmtQ4_1>;
    case GgmlType::Q5_0: return gemm_legacy<FmtQ5_0>;
    case GgmlType::Q5_1: return gemm_legacy<FmtQ5_1>;
    case GgmlType::IQ4_NL: return gemm_legacy<FmtIQ4_NL>;
    case GgmlType::Q4_K: return gemm_k4_family<BlockQ4_K, vec_dot_q4_k>;
    case GgmlType::Q5_K: return gemm_k4_family<BlockQ5_K, vec_dot_q5_k>;
    case GgmlType::Q6_K: return gemm_q6_k;
    default: return nullptr;
  }
}

}  // namespace nurl::avx2

#endif
