// AVX2 attention for a block of query tokens (contract in kernels/attention.h): a prompt chunk's
// rows (tokens × the query heads of one KV head) walk the cache in blocks of kAttnKeyBlock keys.
// Each key block is converted to f32 once for all rows (keys transposed, so a register tile of
// 6 rows × 16 keys needs no horizontal sums), scored, and folded into every row's running
// softmax (online: running max m and sum l, the output rescaled by e^(m_old − m_new) when the
// max grows); then the block's values are accumulated into the outputs, 6 rows × 16 dims per
// register tile. Rows are processed kAttnBlockRows at a time, so scores, outputs and the key and
// value block stay in L1/L2 whatever the context length.
#include <algorithm>
#include <cmath>

#include "kernels/attention.h"
#include "kernels/cpu/x86/avx2-common.h"

#if defined(__x86_64__)

namespace nurl::avx2 {

namespace {

constexpr int kKeys = kAttnKeyBlock;  // keys per block (a multiple of 16)
constexpr int kTileRows = 6;          // query rows per register tile
static_assert(kKeys % 16 == 0);

// 8 rows of 8 → their transpose, in place.
NURL_AVX2 inline void transpose8(__m256 r[8]) {
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xee);
  const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xee);
  const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xee);
  const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xee);
  r[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
  r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
  r[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
  r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
  r[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
  r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
  r[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
  r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

template <bool F16>
NURL_AVX2 inline __m256 load8(const uint8_t* row, int d) {
  if constexpr (F16)
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 2 * size_t(d))));
  else
    return _mm256_loadu_ps(reinterpret_cast<const float*>(row) + d);
}

// n key rows → kt[d·kKeys + k] (f32) for k < n rounded up to 16; the padding keys are zeros.
template <bool F16>
NURL_AVX2 void keys_transposed(const uint8_t* src, size_t stride, int n, int hd, float* kt) {
  const int n16 = (n + 15) / 16 * 16;
  for (int k8 = 0; k8 < n16; k8 += 8)
    for (int d8 = 0; d8 < hd; d8 += 8) {
      __m256 r[8];
      for (int i = 0; i < 8; ++i)
        r[i] = k8 + i < n ? load8<F16>(src + size_t(k8 + i) * stride, d8) : _mm256_setzero_ps();
      transpose8(r);
      for (int i = 0; i < 8; ++i) _mm256_storeu_ps(kt + size_t(d8 + i) * kKeys + k8, r[i]);
    }
}

// Scores of RR rows (q: rounded query rows, hd apart) against 16 keys (kt: the transposed block
// at the tile's first key): s[i·kKeys + j] = scale · q_i · k_j.
template <int RR>
NURL_AVX2 void score_tile(const float* q, int hd, const float* kt, float* s, __m256 scale) {
  __m256 acc[RR][2];
#pragma GCC unroll 6
  for (int i = 0; i < RR; ++i) acc[i][0] = acc[i][1] = _mm256_setzero_ps();
  for (int d = 0; d < hd; ++d) {
    const __m256 k0 = _mm256_loadu_ps(kt + size_t(d) * kKeys), k1 = _mm256_loadu_ps(kt + size_t(d) * kKeys + 8);
#pragma GCC unroll 6
    for (int i = 0; i < RR; ++i) {
      const __m256 qb = _mm256_broadcast_ss(q + size_t(i) * hd + d);
      acc[i][0] = _mm256_fmadd_ps(qb, k0, acc[i][0]);
      acc[i][1] = _mm256_fmadd_ps(qb, k1, acc[i][1]);
    }
  }
#pragma GCC unroll 6
  for (int i = 0; i < RR; ++i) {
    _mm256_storeu_ps(s + size_t(i) * kKeys, _mm256_mul_ps(acc[i][0], scale));
    _mm256_storeu_ps(s + size_t(i) * kKeys + 8, _mm256_mul_ps(acc[i][1], scale));
  }
}

// Outputs of RR rows (o, hdv apart, at the tile's first dim) for 8·DV dims: o_i = alpha_i · o_i
// + Σ_k p[i·kKeys + k] · v_k over the block's nk value rows (vb, hdv apart).
template <int RR, int DV>
NURL_AVX2 void value_tile(const float* p, const float* alpha, const float* vb, int hdv, int nk, float* o) {
  __m256 acc[RR][DV];
#pragma GCC unroll 6
  for (int i = 0; i < RR; ++i) {
    const __m256 a = _mm256_broadcast_ss(alpha + i);
#pragma GCC unroll 2
    for (int j = 0; j < DV; ++j) acc[i][j] = _mm256_mul_ps(_mm256_loadu_ps(o + size_t(i) * hdv + 8 * j), a);
  }
  for (int k = 0; k < nk; ++k) {
    __m256 v[DV];
#pragma GCC unroll 2
    for (int j = 0; j < DV; ++j) v[j] = _mm256_loadu_ps(vb + size_t(k) * hdv + 8 * j);
#pragma GCC unroll 6
    for (int i = 0; i < RR; ++i) {
      const __m256 pb = _mm256_broadcast_ss(p + size_t(i) * kKeys + k);
#pragma GCC unroll 2
      for (int j = 0; j < DV; ++j) acc[i][j] = _mm256_fmadd_ps(pb, v[j], acc[i][j]);
    }
  }
#pragma GCC unroll 6
  for (int i = 0; i < RR; ++i)
#pragma GCC unroll 2
    for (int j = 0; j < DV; ++j) _mm256_storeu_ps(o + size_t(i) * hdv + 8 * j, acc[i][j]);
}

NURL_AVX2 void score_rows(int rr, const float* q, int hd, const float* kt, float* s, __m256 scale) {
  switch (rr) {
    case 1:
      return score_tile<1>(q, hd, kt, s, scale);
    case 2:
      return score_tile<2>(q, hd, kt, s, scale);
    case 3:
      return score_tile<3>(q, hd, kt, s, scale);
    case 4:
      return score_tile<4>(q, hd, kt, s, scale);
    case 5:
      return score_tile<5>(q, hd, kt, s, scale);
    default:
      return score_tile<6>(q, hd, kt, s, scale);
  }
}

template <int DV>
NURL_AVX2 void value_rows(int rr, const float* p, const float* alpha, const float* vb, int hdv, int nk, float* o) {
  switch (rr) {
    case 1:
      return value_tile<1, DV>(p, alpha, vb, hdv, nk, o);
    case 2:
      return value_tile<2, DV>(p, alpha, vb, hdv, nk, o);
    case 3:
      return value_tile<3, DV>(p, alpha, vb, hdv, nk, o);
    case 4:
      return value_tile<4, DV>(p, alpha, vb, hdv, nk, o);
    case 5:
      return value_tile<5, DV>(p, alpha, vb, hdv, nk, o);
    default:
      return value_tile<6, DV>(p, alpha, vb, hdv, nk, o);
  }
}

// Lanes p..p+7 that lie in [lo, hi) (all ones), as a float mask.
NURL_AVX2 inline __m256 in_range(int p, __m256 lo, __m256 hi) {
  const __m256 idx = _mm256_add_ps(_mm256_set1_ps(float(p)), _mm256_setr_ps(0, 1, 2, 3, 4, 5, 6, 7));
  return _mm256_and_ps(_mm256_cmp_ps(idx, lo, _CMP_GE_OQ), _mm256_cmp_ps(idx, hi, _CMP_LT_OQ));
}

// One row's scores of a key block (s, n16 of them, the row sees [lo, hi)) → its softmax weights
// under the updated running max m (zero outside [lo, hi)); l becomes the running sum and alpha
// the factor for the row's earlier output (0 when the row had no key yet, 1 when it sees none here).
NURL_AVX2 void online_softmax_row(float* s, int lo, int hi, int n16, float softcap, float& m, float& l, float& alpha) {
  if (lo >= hi) {
    for (int p = 0; p < n16; p += 8) _mm256_storeu_ps(s + p, _mm256_setzero_ps());
    alpha = 1.0f;
    return;
  }
  if (softcap > 0)
    for (int p = lo; p < hi; ++p) s[p] = softcap * std::tanh(s[p] / softcap);
  const bool whole = lo == 0 && hi == n16;  // no key of the block is masked (the usual case)
  const __m256 lo_v = _mm256_set1_ps(float(lo)), hi_v = _mm256_set1_ps(float(hi));
  const __m256 neg_inf = _mm256_set1_ps(-INFINITY);
  __m256 mx = neg_inf;
  for (int p = 0; p < n16; p += 8) {
    const __m256 x = _mm256_loadu_ps(s + p);
    mx = _mm256_max_ps(mx, whole ? x : _mm256_blendv_ps(neg_inf, x, in_range(p, lo_v, hi_v)));
  }
  __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(mx), _mm256_extractf128_ps(mx, 1));
  m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
  m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
  const float m_new = std::max(m, _mm_cvtss_f32(m4));
  alpha = m_new == m ? 1.0f : m == -INFINITY ? 0.0f : std::exp(m - m_new);
  m = m_new;
  const __m256 mv = _mm256_set1_ps(m_new);
  __m256 sum = _mm256_setzero_ps();
  for (int p = 0; p < n16; p += 8) {
    __m256 e = exp_ps(_mm256_sub_ps(_mm256_loadu_ps(s + p), mv));
    if (!whole) e = _mm256_and_ps(e, in_range(p, lo_v, hi_v));
    _mm256_storeu_ps(s + p, e);
    sum = _mm256_add_ps(sum, e);
  }
  l = l * alpha + hsum_ps(sum);
}

template <bool F16>
NURL_AVX2 void attend_block_impl(const AttnArgs& a) {
  const int nq = a.n_q, hd = a.head_dim, hdv = a.head_dim_v;
  const int tok_per_pass = std::max(1, kAttnBlockRows / nq);
  const int max_rows = std::min(a.n_tok, tok_per_pass) * nq;
  // Scratch: rounded q (rows × hd), scores/weights (rows × kKeys), outputs (rows × hdv), running
  // max, sum and rescale factor per row, the transposed key block (hd × kKeys), the value block
  // (kKeys × hdv).
  float* qr = thread_scratch<float, ScratchTag::attention_block>(size_t(max_rows) * (hd + kKeys + hdv + 3) +
                                                                 size_t(kKeys) * (hd + hdv));
  float* s = qr + size_t(max_rows) * hd;
  float* o = s + size_t(max_rows) * kKeys;
  float* m = o + size_t(max_rows) * hdv;
  float* l = m + max_rows;
  float* alpha = l + max_rows;
  float* kt = alpha + max_rows;
  float* vb = kt + size_t(kKeys) * hd;
  const __m256 scale = _mm256_set1_ps(a.scale);

  for (int t0 = 0; t0 < a.n_tok; t0 += tok_per_pass) {
    const int nt = std::min(tok_per_pass, a.n_tok - t0), rows = nt * nq;
    for (int t = 0; t < nt; ++t)
      for (int g = 0; g < nq; ++g) {
        const float* src = a.q + (t0 + t) * a.q_tok_stride + g * a.q_stride;
        float* dst = qr + size_t(t * nq + g) * hd;
        for (int d = 0; d < hd; d += 8) {
          __m256 x = _mm256_loadu_ps(src + d);
          if constexpr (F16) x = _mm256_cvtph_ps(_mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT));
          _mm256_storeu_ps(dst + d, x);
        }
      }
    std::fill(o, o + size_t(rows) * hdv, 0.0f);
    std::fill(m, m + rows, -INFINITY);
    std::fill(l, l + rows, 0.0f);

    // Keys any row of this pass sees, a block at a time. Blocks start at multiples of kKeys, so
    // a row's sums do not depend on which tokens share its pass (masked keys add exact zeros).
    const int key_begin = attn_first_key(a, t0), key_end = attn_end_key(a, t0 + nt - 1);
    for (int k0 = key_begin / kKeys * kKeys; k0 < key_end; k0 += kKeys) {
      const int nk = std::min(kKeys, key_end - k0), n16 = (nk + 15) / 16 * 16;
      keys_transposed<F16>(a.k + size_t(k0) * a.k_stride, a.k_stride, nk, hd, kt);
      cache_rows_to_f32<F16>(a.v + size_t(k0) * a.v_stride, a.v_stride, nk, nk, hdv, vb);
      for (int j = 0; j < n16; j += 16)
        for (int r = 0; r < rows; r += kTileRows)
          score_rows(rows - r, qr + size_t(r) * hd, hd, kt + j, s + size_t(r) * kKeys + j, scale);
      for (int t = 0; t < nt; ++t) {
        const int lo = std::max(attn_first_key(a, t0 + t) - k0, 0);
        const int hi = std::min(attn_end_key(a, t0 + t) - k0, nk);
        for (int g = 0; g < nq; ++g) {
          const int r = t * nq + g;
          online_softmax_row(s + size_t(r) * kKeys, lo, hi, n16, a.softcap, m[r], l[r], alpha[r]);
        }
      }
      int d0 = 0;
      for (; d0 + 16 <= hdv; d0 += 16)
        for (int r = 0; r < rows; r += kTileRows)
          value_rows<2>(rows - r, s + size_t(r) * kKeys, alpha + r, vb + d0, hdv, nk, o + size_t(r) * hdv + d0);
      for (; d0 < hdv; d0 += 8)
        for (int r = 0; r < rows; r += kTileRows)
          value_rows<1>(rows - r, s + size_t(r) * kKeys, alpha + r, vb + d0, hdv, nk, o + size_t(r) * hdv + d0);
    }

    for (int t = 0; t < nt; ++t)
      for (int g = 0; g < nq; ++g) {
        const int r = t * nq + g;
        const __m256 inv = _mm256_set1_ps(1.0f / l[r]);
        float* dst = a.out + (t0 + t) * a.out_tok_stride + g * a.out_stride;
        for (int d = 0; d < hdv; d += 8)
          _mm256_storeu_ps(dst + d, _mm256_mul_ps(_mm256_loadu_ps(o + size_t(r) * hdv + d), inv));
      }
  }
}

}  // namespace

void attend_block(const AttnArgs& a) {
  if (a.f16)
    attend_block_impl<true>(a);
  else
    attend_block_impl<false>(a);
}

}  // namespace nurl::avx2

#endif
