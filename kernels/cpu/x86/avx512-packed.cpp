// AVX512-VNNI gemm_rows over the interleaved layouts of packed-layout.h, 16 rows a group (one
// 32-bit lane of a zmm register per row). Per 4-element chunk one vpdpbusd multiplies the chunk's
// levels of all 16 rows (unsigned bytes) by one token's four activations, broadcast from memory
// (signed bytes), so a block's dot products of 16 rows come out in the lanes of one register, with
// no horizontal sums. A group meets up to kTokTile tokens at once: its levels are unpacked once
// per tile and each token adds one vpdpbusd per chunk.
//
// Per block (legacy formats) the integer sum starts at the level offset's share, −c·Σx (c = 128
// for q8_0's w + 128 and iq4_nl's table + 128, 8 for q4_0, 16 for q5_0, 0 for q4_1/q5_1), so it
// is exactly Σ w·x; then one convert and one FMA by d_w·d_x per (block, token); q4_1/q5_1 add
// m_w·(d_x·Σx). The k-quants weight each sub-block's integer sum by its scale (vpmulld), subtract
// their mins (q4_K/q5_K) or the level offset 32 (q6_K) through vpdpwssd of the scales with the
// activation's sub-block sums, and convert once per super-block.
#include <algorithm>
#include <cstring>
#include <utility>

#include "kernels/cpu/packed-layout.h"
#include "kernels/cpu/x86/avx2-common.h"

#if defined(__x86_64__)

namespace nurl::avx512 {

// Everything defined from here to the matching pop is compiled for AVX512-VNNI, lambdas included
// (a target attribute on a function does not reach the lambdas inside it). Inline functions of
// the headers above keep their own targets, so none is emitted with AVX-512 instructions.
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni"))), \
                             apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")
// GCC 12's AVX-512 intrinsics pass _mm512_undefined_*() (a self-initialised variable) as the
// pass-through operand of the conversions, which -W(maybe-)uninitialized reports at every use.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

namespace {

using avx2::h2f;
using avx2::hsum_epi32;
using avx2::row_at;
using avx2::ScratchTag;
using avx2::thread_scratch;

constexpr int R = 16;        // rows per group: the int32 lanes of a zmm register
constexpr int kTokTile = 8;  // tokens per tile (accumulators in registers)

template <int... I, class F>
inline void static_for(std::integer_sequence<int, I...>, F&& f) {
  (f(std::integral_constant<int, I>{}), ...);
}
template <int N, class F>
inline void unroll(F&& f) {
  static_for(std::make_integer_sequence<int, N>{}, f);
}

// Four activations as the 32-bit broadcast operand of vpdpbusd.
inline int32_t quad(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

inline __m512 f16x16(const uint8_t* p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
inline __m512i load(const uint8_t* p) {
  return _mm512_loadu_si512(p);
}
inline __m512i dot4(__m512i acc, __m512i levels, const int8_t* x) {
  return _mm512_dpbusd_epi32(acc, levels, _mm512_set1_epi32(quad(x)));
}
// level | (bits & mask), one instruction.
inline __m512i or_masked(__m512i level, __m512i bits, __m512i mask) {
  return _mm512_ternarylogic_epi32(level, bits, mask, 0xf8);
}
// Bit K of every byte moved to bit 4 (the fifth bit of chunk K); other bits are garbage.
template <int K>
inline __m512i fifth_bit(__m512i h) {
  if constexpr (K < 4) return _mm512_slli_epi16(h, 4 - K);
  else if constexpr (K == 4) return h;
  else return _mm512_srli_epi16(h, K - 4);
}
// Bits 2C..2C+1 of every byte moved to bits 4..5 (q6_K's high bits of chunk C); others garbage.
template <int C>
inline __m512i high_bits(__m512i h) {
  if constexpr (C < 2) return _mm512_slli_epi16(h, 4 - 2 * C);
  else if constexpr (C == 2) return h;
  else return _mm512_srli_epi16(h, 2);
}

// Rows [row, row + 16) of a group exist up to row_end.
inline __mmask16 row_mask(int64_t row, int64_t row_end) {
  const int64_t n = std::min<int64_t>(R, row_end - row);
  return __mmask16((1u << n) - 1);
}

// ---- the 32-element formats ----------------------------------------------------------------

struct LQ8_0 {
  using Block = BlockQ8_0;
  using Act = BlockQ8_0;
  static constexpr int kOffset = 128;
  static constexpr bool kMin = false, kNibbles = false, kFifth = false, kTable = false;
};
struct LQ4_0 {
  using Block = BlockQ4_0;
  using Act = BlockQ8_0;
  static constexpr int kOffset = 8;
  static constexpr bool kMin = false, kNibbles = true, kFifth = false, kTable = false;
};
struct LQ5_0 {
  using Block = BlockQ5_0;
  using Act = BlockQ8_0;
  static constexpr int kOffset = 16;
  static constexpr bool kMin = false, kNibbles = true, kFifth = true, kTable = false;
};
struct LQ4_1 {
  using Block = BlockQ4_1;
  using Act = BlockQ8_1;
  static constexpr int kOffset = 0;
  static constexpr bool kMin = true, kNibbles = true, kFifth = false, kTable = false;
};
struct LQ5_1 {
  using Block = BlockQ5_1;
  using Act = BlockQ8_1;
  static constexpr int kOffset = 0;
  static constexpr bool kMin = true, kNibbles = true, kFifth = true, kTable = false;
};
struct LIQ4_NL {
  using Block = BlockIQ4_NL;
  using Act = BlockQ8_0;
  static constexpr int kOffset = 128;
  static constexpr bool kMin = false, kNibbles = true, kFifth = false, kTable = true;
};

// Per token and block: d_x, the integer start −c·Σx and (q4_1, q5_1) d_x·Σx.
struct LegacyAct {
  const float* dx;
  const int32_t* start;
  const float* sx;
};

inline int32_t sum_i8x32(const int8_t* q) {
  const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q));
  const __m256i s16 = _mm256_maddubs_epi16(_mm256_set1_epi8(1), x);
  return hsum_epi32(_mm256_madd_epi16(s16, _mm256_set1_epi16(1)));
}

template <class F>
void legacy_act(const typename F::Act* x, int64_t nb, float* dx, int32_t* start, float* sx) {
  for (int64_t b = 0; b < nb; ++b) {
    dx[b] = h2f(x[b].d);
    if constexpr (F::kOffset != 0) start[b] = -F::kOffset * sum_i8x32(x[b].qs);
    else start[b] = 0;
    if constexpr (F::kMin) sx[b] = h2f(x[b].s);
  }
}

// One group × NT tokens.
template <class F, int NT>
void legacy_tile(const uint8_t* grp, int64_t nb, const typename F::Act* const* x, const LegacyAct* a,
                             float* y, int64_t ys, __mmask16 mask) {
  constexpr size_t kUnit = R * sizeof(typename F::Block);
  constexpr size_t kLevels = F::kMin ? 4 * R : 2 * R;
  const __m512i m4 = _mm512_set1_epi8(0x0f), bit4 = _mm512_set1_epi8(0x10);
  __m512i table = _mm512_setzero_si512();
  if constexpr (F::kTable) {
    alignas(16) int8_t t[16];
    for (int i = 0; i < 16; ++i) t[i] = int8_t(kIq4nlValues[i] + 128);
    table = _mm512_broadcast_i32x4(_mm_load_si128(reinterpret_cast<const __m128i*>(t)));
  }
  __m512 acc[NT];
  unroll<NT>([&](auto j) { acc[j] = _mm512_setzero_ps(); });
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* u = grp + size_t(b) * kUnit;
    const uint8_t* lv = u + kLevels;
    __m512i s[NT];
    unroll<NT>([&](auto j) { s[j] = _mm512_set1_epi32(a[j].start[b]); });
    if constexpr (!F::kNibbles) {
      unroll<8>([&](auto k) {
        const __m512i w = load(lv + 64 * k);
        unroll<NT>([&](auto j) { s[j] = dot4(s[j], w, x[j][b].qs + 4 * k); });
      });
    } else {
      __m512i h = _mm512_setzero_si512();
      if constexpr (F::kFifth) h = load(lv + 16 * R);
      unroll<4>([&](auto p) {
        const __m512i n = load(lv + 64 * p);
        __m512i lo = _mm512_and_si512(n, m4), hi = _mm512_and_si512(_mm512_srli_epi16(n, 4), m4);
        if constexpr (F::kFifth) {
          lo = or_masked(lo, fifth_bit<2 * p>(h), bit4);
          hi = or_masked(hi, fifth_bit<2 * p + 1>(h), bit4);
        }
        if constexpr (F::kTable) {
          lo = _mm512_shuffle_epi8(table, lo);
          hi = _mm512_shuffle_epi8(table, hi);
        }
        unroll<NT>([&](auto j) {
          s[j] = dot4(s[j], lo, x[j][b].qs + 8 * p);
          s[j] = dot4(s[j], hi, x[j][b].qs + 8 * p + 4);
        });
      });
    }
    const __m512 dw = f16x16(u);
    unroll<NT>([&](auto j) {
      acc[j] = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(s[j]), _mm512_set1_ps(a[j].dx[b])), dw, acc[j]);
    });
    if constexpr (F::kMin) {
      const __m512 m = f16x16(u + 2 * R);
      unroll<NT>([&](auto j) { acc[j] = _mm512_fmadd_ps(m, _mm512_set1_ps(a[j].sx[b]), acc[j]); });
    }
  }
  unroll<NT>([&](auto j) { _mm512_mask_storeu_ps(y + j * ys, mask, acc[j]); });
}

// ---- q4_K, q5_K ----------------------------------------------------------------------------

// Per token and super-block: the activation's eight 32-element sums as four int16 pairs.
void k4_act(const BlockQ8_K* x, int64_t nsb, int32_t* pairs) {
  for (int64_t i = 0; i < nsb; ++i)
    for (int p = 0; p < 4; ++p) {
      const int16_t* bs = x[i].bsums + 4 * p;
      const auto lo = uint16_t(int16_t(bs[0] + bs[1])), hi = uint16_t(int16_t(bs[2] + bs[3]));
      pairs[4 * i + p] = int32_t(uint32_t(lo) | uint32_t(hi) << 16);
    }
}

template <bool Five, int NT>
void k4_tile(const uint8_t* grp, int64_t nsb, const BlockQ8_K* const* x, const int32_t* const* pairs,
                         float* y, int64_t ys, __mmask16 mask) {
  using O = packed::K4Offsets;
  constexpr size_t kUnit = (Five ? 180 : 148) * R;
  const __m512i m4 = _mm512_set1_epi8(0x0f), bit4 = _mm512_set1_epi8(0x10);
  __m512 acc[NT];
  unroll<NT>([&](auto j) { acc[j] = _mm512_setzero_ps(); });
  for (int64_t i = 0; i < nsb; ++i) {
    const uint8_t* u = grp + size_t(i) * kUnit;
    const uint8_t* nib = u + O::nibbles(R);
    __m512i tot[NT];
    unroll<NT>([&](auto j) { tot[j] = _mm512_setzero_si512(); });
    for (int sb = 0; sb < 8; ++sb) {
      __m512i ps[NT];
      unroll<NT>([&](auto j) { ps[j] = _mm512_setzero_si512(); });
      __m512i h = _mm512_setzero_si512();
      if constexpr (Five) h = load(u + O::fifth(R) + 64 * size_t(sb));
      unroll<4>([&](auto p) {
        const __m512i n = load(nib + 64 * (4 * sb + p));
        __m512i lo = _mm512_and_si512(n, m4), hi = _mm512_and_si512(_mm512_srli_epi16(n, 4), m4);
        if constexpr (Five) {
          lo = or_masked(lo, fifth_bit<2 * p>(h), bit4);
          hi = or_masked(hi, fifth_bit<2 * p + 1>(h), bit4);
        }
        unroll<NT>([&](auto j) {
          const int8_t* q = x[j][i].qs + 32 * sb + 8 * p;
          ps[j] = dot4(ps[j], lo, q);
          ps[j] = dot4(ps[j], hi, q + 4);
        });
      });
      const __m512i sc =
          _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(u + O::scales(R) + size_t(sb) * R)));
      unroll<NT>([&](auto j) { tot[j] = _mm512_add_epi32(tot[j], _mm512_mullo_epi32(ps[j], sc)); });
    }
    __m512i mt[NT];
    unroll<NT>([&](auto j) { mt[j] = _mm512_setzero_si512(); });
    unroll<4>([&](auto p) {
      const __m512i mn =
          _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(u + O::mins(R) + 2 * R * p)));
      unroll<NT>([&](auto j) { mt[j] = _mm512_dpwssd_epi32(mt[j], mn, _mm512_set1_epi32(pairs[j][4 * i + p])); });
    });
    const __m512 d = f16x16(u + O::d(R)), dmin = f16x16(u + O::dmin(R));
    unroll<NT>([&](auto j) {
      const __m512 dx = _mm512_set1_ps(x[j][i].d);
      acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(tot[j]), _mm512_mul_ps(d, dx), acc[j]);
      acc[j] = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(mt[j]), _mm512_mul_ps(dmin, dx), acc[j]);
    });
  }
  unroll<NT>([&](auto j) { _mm512_mask_storeu_ps(y + j * ys, mask, acc[j]); });
}

// ---- q6_K ----------------------------------------------------------------------------------

template <int NT>
void q6k_tile(const uint8_t* grp, int64_t nsb, const BlockQ8_K* const* x, float* y, int64_t ys,
                          __mmask16 mask) {
  using O = packed::Q6KOffsets;
  constexpr size_t kUnit = 210 * R;
  const __m512i m4 = _mm512_set1_epi8(0x0f), bits45 = _mm512_set1_epi8(0x30);
  __m512 acc[NT];
  unroll<NT>([&](auto j) { acc[j] = _mm512_setzero_ps(); });
  for (int64_t i = 0; i < nsb; ++i) {
    const uint8_t* u = grp + size_t(i) * kUnit;
    __m512i tot[NT], off[NT];
    unroll<NT>([&](auto j) {
      tot[j] = _mm512_setzero_si512();
      off[j] = _mm512_setzero_si512();
    });
    for (int p = 0; p < 8; ++p) {  // sub-blocks 2p and 2p + 1: elements 32p .. 32p + 31
      const __m512i sc2 = _mm512_cvtepi8_epi16(
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(u + O::scales(R) + 2 * R * size_t(p))));
      // Σ sc·bsum of the pair, for the level offset 32 (bsums[2p], bsums[2p + 1] are one int16 pair).
      unroll<NT>([&](auto j) {
        off[j] = _mm512_dpwssd_epi32(off[j], sc2, _mm512_set1_epi32(quad(reinterpret_cast<const int8_t*>(x[j][i].bsums + 2 * p))));
      });
      unroll<2>([&](auto half) {
        const __m512i sc = half ? _mm512_srai_epi32(sc2, 16) : _mm512_srai_epi32(_mm512_slli_epi32(sc2, 16), 16);
        const __m512i h = load(u + O::high(R, 2 * p + half));
        __m512i ps[NT];
        unroll<NT>([&](auto j) { ps[j] = _mm512_setzero_si512(); });
        unroll<2>([&](auto q) {
          const __m512i n = load(u + O::nibbles(R, 4 * p + 2 * half + q));
          const __m512i lo = or_masked(_mm512_and_si512(n, m4), high_bits<2 * q>(h), bits45);
          const __m512i hi = or_masked(_mm512_and_si512(_mm512_srli_epi16(n, 4), m4), high_bits<2 * q + 1>(h), bits45);
          unroll<NT>([&](auto j) {
            const int8_t* xq = x[j][i].qs + 32 * p + 16 * half + 8 * q;
            ps[j] = dot4(ps[j], lo, xq);
            ps[j] = dot4(ps[j], hi, xq + 4);
          });
        });
        unroll<NT>([&](auto j) { tot[j] = _mm512_add_epi32(tot[j], _mm512_mullo_epi32(ps[j], sc)); });
      });
    }
    const __m512 d = f16x16(u + O::d(R));
    unroll<NT>([&](auto j) {
      const __m512i sum = _mm512_sub_epi32(tot[j], _mm512_slli_epi32(off[j], 5));
      acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), _mm512_mul_ps(d, _mm512_set1_ps(x[j][i].d)), acc[j]);
    });
  }
  unroll<NT>([&](auto j) { _mm512_mask_storeu_ps(y + j * ys, mask, acc[j]); });
}

// ---- drivers: groups of the row range × tiles of tokens ------------------------------------

// Runs tile<n>(t, yt) over nt tokens in tiles of kTokTile and one tile of the rest.
template <class Tile>
inline void token_tiles(int nt, Tile&& tile) {
  int t = 0;
  for (; t + kTokTile <= nt; t += kTokTile) tile(std::integral_constant<int, kTokTile>{}, t);
  switch (nt - t) {
    case 1: tile(std::integral_constant<int, 1>{}, t); break;
    case 2: tile(std::integral_constant<int, 2>{}, t); break;
    case 3: tile(std::integral_constant<int, 3>{}, t); break;
    case 4: tile(std::integral_constant<int, 4>{}, t); break;
    case 5: tile(std::integral_constant<int, 5>{}, t); break;
    case 6: tile(std::integral_constant<int, 6>{}, t); break;
    case 7: tile(std::integral_constant<int, 7>{}, t); break;
    default: break;
  }
  static_assert(kTokTile == 8, "the leftover switch covers 1..7 tokens");
}

template <class F>
void gemm_legacy(const void* W, size_t gs, int64_t r0, int64_t r1, int64_t n_cols, const void* X, size_t xs,
                             int nt, float* y, int64_t ys) {
  using A = typename F::Act;
  const int64_t nb = n_cols / kQK;
  float* dx = thread_scratch<float, ScratchTag::gemm_scales>(size_t(nt * nb) * 3);
  auto* start = reinterpret_cast<int32_t*>(dx + nt * nb);
  float* sx = dx + 2 * nt * nb;
  const A* x[kTokTile];
  LegacyAct act[kTokTile];
  for (int t = 0; t < nt; ++t)
    legacy_act<F>(row_at<A>(X, xs, t), nb, dx + t * nb, start + t * nb, sx + t * nb);
  for (int64_t r = r0; r < r1; r += R) {
    const uint8_t* grp = static_cast<const uint8_t*>(W) + size_t(r / R) * gs;
    const __mmask16 mask = row_mask(r, r1);
    token_tiles(nt, [&](auto n, int t) {
      for (int j = 0; j < n; ++j) {
        x[j] = row_at<A>(X, xs, t + j);
        act[j] = {dx + (t + j) * nb, start + (t + j) * nb, sx + (t + j) * nb};
      }
      legacy_tile<F, n>(grp, nb, x, act, y + t * ys + r, ys, mask);
    });
  }
}

template <bool Five>
void gemm_k4(const void* W, size_t gs, int64_t r0, int64_t r1, int64_t n_cols, const void* X, size_t xs,
                         int nt, float* y, int64_t ys) {
  const int64_t nsb = n_cols / kQK_K;
  auto* pairs = reinterpret_cast<int32_t*>(thread_scratch<float, ScratchTag::gemm_scales>(size_t(nt * nsb) * 4));
  for (int t = 0; t < nt; ++t) k4_act(row_at<BlockQ8_K>(X, xs, t), nsb, pairs + t * nsb * 4);
  const BlockQ8_K* x[kTokTile];
  const int32_t* pp[kTokTile];
  for (int64_t r = r0; r < r1; r += R) {
    const uint8_t* grp = static_cast<const uint8_t*>(W) + size_t(r / R) * gs;
    const __mmask16 mask = row_mask(r, r1);
    token_tiles(nt, [&](auto n, int t) {
      for (int j = 0; j < n; ++j) {
        x[j] = row_at<BlockQ8_K>(X, xs, t + j);
        pp[j] = pairs + (t + j) * nsb * 4;
      }
      k4_tile<Five, n>(grp, nsb, x, pp, y + t * ys + r, ys, mask);
    });
  }
}

void gemm_q6k(const void* W, size_t gs, int64_t r0, int64_t r1, int64_t n_cols, const void* X, size_t xs,
                          int nt, float* y, int64_t ys) {
  const int64_t nsb = n_cols / kQK_K;
  const BlockQ8_K* x[kTokTile];
  for (int64_t r = r0; r < r1; r += R) {
    const uint8_t* grp = static_cast<const uint8_t*>(W) + size_t(r / R) * gs;
    const __mmask16 mask = row_mask(r, r1);
    token_tiles(nt, [&](auto n, int t) {
      for (int j = 0; j < n; ++j) x[j] = row_at<BlockQ8_K>(X, xs, t + j);
      q6k_tile<n>(grp, nsb, x, y + t * ys + r, ys, mask);
    });
  }
}

}  // namespace

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC diagnostic pop
#pragma GCC pop_options
#endif

PackedGemm packed_gemm(GgmlType t) {
  GemmRowsFn f = nullptr;
  switch (t) {
    case GgmlType::Q8_0: f = gemm_legacy<LQ8_0>; break;
    case GgmlType::Q4_0: f = gemm_legacy<LQ4_0>; break;
    case GgmlType::Q5_0: f = gemm_legacy<LQ5_0>; break;
    case GgmlType::Q4_1: f = gemm_legacy<LQ4_1>; break;
    case GgmlType::Q5_1: f = gemm_legacy<LQ5_1>; break;
    case GgmlType::IQ4_NL: f = gemm_legacy<LIQ4_NL>; break;
    case GgmlType::Q4_K: f = gemm_k4<false>; break;
    case GgmlType::Q5_K: f = gemm_k4<true>; break;
    case GgmlType::Q6_K: f = gemm_q6k; break;
    default: return {};
  }
  return PackedGemm{R, f, 64};
}

}  // namespace nurl::avx512

#endif
