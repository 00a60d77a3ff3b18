// Shared pieces of the AVX2 kernels: small intrinsics helpers (static, so they never leave
// the AVX2 translation units) and the kernel entry points that install_avx2_kernels() wires up.
// Every function carries NURL_AVX2 (target attribute) instead of file-wide -mavx2 flags, so no
// inline function from a shared header is ever emitted with AVX2 instructions.
#pragma once

#if defined(__x86_64__)
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "engine/quant/blocks.h"
#include "kernels/attention.h"
#include "kernels/kernel-set.h"

#define NURL_AVX2 __attribute__((target("avx2,fma,f16c")))

// A region of functions compiled for target T (a string such as "avx2,fma,f16c"), for sources
// included several times, once per instruction set (packed-gemm.inc): NURL_TARGET_BEGIN(T) …
// NURL_TARGET_END; lambdas inside are compiled for T too (a function's target attribute does not
// reach them). GCC hears no uninitialised-use warnings inside: GCC 12's AVX-512 intrinsics pass
// _mm512_undefined_*() (a self-initialised variable) as a pass-through operand, which
// -W(maybe-)uninitialized reports at every use.
#define NURL_PRAGMA(...) _Pragma(#__VA_ARGS__)
#if defined(__clang__)
#define NURL_TARGET_BEGIN(T) NURL_PRAGMA(clang attribute push(__attribute__((target(T))), apply_to = function))
#define NURL_TARGET_END NURL_PRAGMA(clang attribute pop)
#else
#define NURL_TARGET_BEGIN(T)                                                                      \
  NURL_PRAGMA(GCC push_options) NURL_PRAGMA(GCC target(T)) NURL_PRAGMA(GCC diagnostic push)      \
      NURL_PRAGMA(GCC diagnostic ignored "-Wmaybe-uninitialized") NURL_PRAGMA(GCC diagnostic ignored "-Wuninitialized")
#define NURL_TARGET_END NURL_PRAGMA(GCC diagnostic pop) NURL_PRAGMA(GCC pop_options)
#endif

namespace nurl::avx2 {

// Four int8 values as one 32-bit word (a broadcast operand: four activations, or two int16).
inline int32_t quad(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// Kernels (same contracts as their nurl::ref counterparts).
NURL_AVX2 float vec_dot_q8_0(int64_t n, const void* x, const void* y);
NURL_AVX2 float vec_dot_q4_0(int64_t n, const void* x, const void* y);
NURL_AVX2 float vec_dot_q4_1(int64_t n, const void* x, const void* y);
NURL_AVX2 float vec_dot_q5_0(int64_t n, const void* x, const void* y);
NURL_AVX2 float vec_dot_q5_1(int64_t n, const void* x, const void* y);
NURL_AVX2 float vec_dot_iq4_nl(int64_t n, const void* x, const void* y);
NURL_AVX2 float vec_dot_q2_k(int64_t n, const void* x, const void* y);
NURL_AVX2 float vec_dot_q3_k(int64_t n, const void* x, const void* y);
NURL_AVX2 float vec_dot_q4_k(int64_t n, const void* x, const void* y);
NURL_AVX2 float vec_dot_q5_k(int64_t n, const void* x, const void* y);
NURL_AVX2 float vec_dot_q6_k(int64_t n, const void* x, const void* y);
NURL_AVX2 float vec_dot_iq4_xs(int64_t n, const void* x, const void* y);
NURL_AVX2 float vec_dot_f16(int64_t n, const void* x, const void* y);
NURL_AVX2 float vec_dot_bf16(int64_t n, const void* x, const void* y);
NURL_AVX2 void quantize_q8_0(const float* x, void* out, int64_t n);
NURL_AVX2 void quantize_q8_1(const float* x, void* out, int64_t n);
NURL_AVX2 void quantize_q8_k(const float* x, void* out, int64_t n);
NURL_AVX2 void quantize_f16(const float* x, void* out, int64_t n);
NURL_AVX2 void quantize_bf16(const float* x, void* out, int64_t n);
NURL_AVX2 void f32_to_f16_row(const float* x, uint16_t* y, int64_t n);
NURL_AVX2 void silu_mul(float* g, const float* u, int64_t n);
// The token-tiled gemm_rows (KernelSet contract) of weight type t; nullptr where t has none
// (its entry then tiles through vec_dot).
GemmRowsFn tiled_gemm(GgmlType t);
// Attention (kernels/attention.h); head sizes that are not multiples of 8 go to ref::attend.
void attend(const AttnArgs& a);
// The same for a block of query tokens (n_tok > 1; head sizes multiples of 8): key blocks walked
// once for all the block's rows with an online softmax.
void attend_block(const AttnArgs& a);
using VecDotFnAvx2 = float (*)(int64_t n, const void* x, const void* y);

NURL_AVX2 static inline float hsum_ps(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

NURL_AVX2 static inline int hsum_epi32(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
  return _mm_cvtsi128_si32(s);
}

NURL_AVX2 static inline float h2f(f16_bits h) {
  return _cvtsh_ss(h);
}

// Σ x·y over 32 signed int8 pairs, as 8 int32 partial sums.
NURL_AVX2 static inline __m256i dot_s8(__m256i x, __m256i y) {
  const __m256i p = _mm256_maddubs_epi16(_mm256_sign_epi8(x, x), _mm256_sign_epi8(y, x));
  return _mm256_madd_epi16(p, _mm256_set1_epi16(1));
}

// 16 bytes of packed nibbles → 32 bytes: low nibbles in the low lane, high nibbles in the high.
NURL_AVX2 static inline __m256i unpack_nibbles_32(const uint8_t* p) {
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i m = _mm_set1_epi8(0x0f);
  const __m128i lo = _mm_and_si128(b, m), hi = _mm_and_si128(_mm_srli_epi16(b, 4), m);
  return _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
}

// 32 bits → 32 bytes: byte j is 0xff when bit j is set (low lane bits 0..15, high lane 16..31).
NURL_AVX2 static inline __m256i bits_to_bytes_32(const uint8_t* p) {
  uint32_t bits;
  std::memcpy(&bits, p, 4);
  const __m256i sel = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,  //
                                       2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
  const __m256i bit = _mm256_set1_epi64x(int64_t(0x8040201008040201ull));
  const __m256i b = _mm256_shuffle_epi8(_mm256_set1_epi32(int(bits)), sel);
  return _mm256_cmpeq_epi8(_mm256_and_si256(b, bit), bit);
}

// e^x for x ≤ 88 (the softmax's x ≤ 0, SiLU's capped −x): x = n·ln2 + r with |r| ≤ ln2/2, e^r by
// a degree-6 polynomial (relative error ~1e-7), 2^n through the exponent bits. Arguments below
// −87 give ~0; above 88 the caller must cap them.
NURL_AVX2 static inline __m256 exp_ps(__m256 x) {
  x = _mm256_max_ps(x, _mm256_set1_ps(-87.0f));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_fmadd_ps(_mm256_mul_ps(p, r), r, _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

NURL_AVX2 static inline float hsum_ps128(__m128 m) {
  m = _mm_add_ps(m, _mm_movehl_ps(m, m));
  m = _mm_add_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

// The 8 scales (bytes 0..7 of *sc) and 8 mins (*m) of a q4_K/q5_K block.
NURL_AVX2 static inline void unpack_scales_k4(const uint8_t* s, uint32_t sc[2], uint32_t m[2]) {
  uint32_t w[3];
  std::memcpy(w, s, 12);
  sc[0] = w[0] & 0x3f3f3f3f;
  m[0] = w[1] & 0x3f3f3f3f;
  sc[1] = (w[2] & 0x0f0f0f0f) | ((w[0] >> 2) & 0x30303030);
  m[1] = ((w[2] >> 4) & 0x0f0f0f0f) | ((w[1] >> 2) & 0x30303030);
}

// Σ_j m[j]·(bsums[2j] + bsums[2j+1]) as 4 int32 lanes.
NURL_AVX2 static inline __m128i mins_dot_bsums(const uint32_t m[2], const int16_t* bsums) {
  const __m128i b0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bsums));
  const __m128i b1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bsums + 8));
  const __m128i pairs = _mm_hadd_epi16(b0, b1);  // 8 × (bsums[2j] + bsums[2j+1])
  const __m128i m16 = _mm_cvtepu8_epi16(_mm_set_epi32(0, 0, int(m[1]), int(m[0])));
  return _mm_madd_epi16(m16, pairs);
}

// Generation reads each weight row once, in bursts of block loads that the hardware prefetchers
// alone leave waiting on memory; the row kernels prefetch the n bytes at this distance ahead of
// what they read (about a DRAM latency's worth of streaming, measured on Zen 3).
inline constexpr size_t kPrefetchAhead = 2048;
NURL_AVX2 static inline void prefetch_ahead(const void* p, size_t n) {
  const char* a = static_cast<const char*>(p) + kPrefetchAhead;
  for (size_t o = 0; o < n; o += 64) _mm_prefetch(a + o, _MM_HINT_T0);
}

// n cache rows (f16 or f32 elements, `stride` bytes apart) of `width` elements (a multiple of 8)
// → f32 rows of `width`; rows n..rows_padded are zeros.
template <bool F16>
NURL_AVX2 static inline void cache_rows_to_f32(const uint8_t* src, size_t stride, int n, int rows_padded, int width,
                                               float* dst) {
  for (int p = 0; p < n; ++p) {
    const uint8_t* row = src + size_t(p) * stride;
    float* o = dst + size_t(p) * width;
    for (int d = 0; d < width; d += 8) {
      if constexpr (F16)
        _mm256_storeu_ps(o + d,
                         _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 2 * size_t(d)))));
      else
        _mm256_storeu_ps(o + d, _mm256_loadu_ps(reinterpret_cast<const float*>(row) + d));
    }
  }
  for (float* o = dst + size_t(n) * width; o < dst + size_t(rows_padded) * width; o += 8)
    _mm256_storeu_ps(o, _mm256_setzero_ps());
}

// Row r of a matrix with rows `stride` bytes apart.
template <typename T>
inline const T* row_at(const void* base, size_t stride, int64_t r) {
  return reinterpret_cast<const T*>(static_cast<const uint8_t*>(base) + size_t(r) * stride);
}

// Per-thread scratch of at least n elements, grown on demand and kept (no allocation once a
// thread has seen the largest shape). Buffers used at the same time need distinct tags.
enum class ScratchTag { gemm_scales, gemm_levels, attention, attention_block };
template <class T, ScratchTag Tag>
inline T* thread_scratch(size_t n) {
  thread_local std::vector<T> buf;
  if (buf.size() < n) buf.resize(n);
  return buf.data();
}

// q4_K / q5_K levels of 64-element chunk c (0..3): lo = elements 64c..64c+31 (low nibbles),
// hi = 64c+32..64c+63 (high nibbles); q5_K adds its fifth bit (bits 2c and 2c+1 of each qh
// byte), given as k4_high_bits(block).
template <class B>
NURL_AVX2 static inline __m256i k4_high_bits(const B& b) {
  if constexpr (std::is_same_v<B, BlockQ5_K>)
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qh));
  else
    return _mm256_setzero_si256();
}
template <class B>
NURL_AVX2 static inline void k4_levels(const B& b, __m256i qh, int c, __m256i& lo, __m256i& hi) {
  const __m256i m4 = _mm256_set1_epi8(0x0f);
  const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs + 32 * c));
  lo = _mm256_and_si256(q, m4);
  hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
  if constexpr (std::is_same_v<B, BlockQ5_K>) {
    const __m256i sixteen = _mm256_set1_epi8(16);
    const __m256i bit_lo = _mm256_set1_epi8(char(1 << (2 * c))), bit_hi = _mm256_set1_epi8(char(2 << (2 * c)));
    lo = _mm256_or_si256(lo, _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(qh, bit_lo), bit_lo), sixteen));
    hi = _mm256_or_si256(hi, _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(qh, bit_hi), bit_hi), sixteen));
  }
}

// The 8 sub-block scales (bytes of sc[2]) as int16 in both lanes; scale_of(v, j) then
// broadcasts scale j with one in-lane byte shuffle instead of a scalar→vector broadcast.
NURL_AVX2 static inline __m256i scales_k4_i16(const uint32_t sc[2]) {
  return _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(_mm_set_epi32(0, 0, int(sc[1]), int(sc[0]))));
}
NURL_AVX2 static inline __m256i scale_of(__m256i v, int j) {
  return _mm256_shuffle_epi8(v, _mm256_set1_epi16(int16_t((2 * j) | (2 * j + 1) << 8)));
}

// q6_K half h (128 elements) → four vectors of 32 unsigned levels (0..63): elements
// l, l+32, l+64, l+96 of the half for l = 0..31.
NURL_AVX2 static inline void q6k_unpack_half(const BlockQ6_K& b, int h, __m256i q[4]) {
  const __m256i m4 = _mm256_set1_epi8(0x0f), m2 = _mm256_set1_epi8(0x03);
  const __m256i l0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.ql + 64 * h));
  const __m256i l1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.ql + 64 * h + 32));
  const __m256i hb = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qh + 32 * h));
  q[0] = _mm256_or_si256(_mm256_and_si256(l0, m4), _mm256_slli_epi16(_mm256_and_si256(hb, m2), 4));
  q[1] =
      _mm256_or_si256(_mm256_and_si256(l1, m4), _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hb, 2), m2), 4));
  q[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4),
                         _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hb, 4), m2), 4));
  q[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m4),
                         _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hb, 6), m2), 4));
}

// From the 16 q6_K scales as int16 (sc16), the pair for q[k] of half h: scale 8h+2k in the
// low lane (elements 0..15 of the 32), 8h+2k+1 in the high lane.
NURL_AVX2 static inline __m256i q6k_scale_pair(__m256i sc16, int h, int k) {
  const __m256i half = h == 0 ? _mm256_permute4x64_epi64(sc16, 0x44) : _mm256_permute4x64_epi64(sc16, 0xee);
  const int lo = 4 * k, hi = 4 * k + 2;
  const __m256i sel =
      _mm256_setr_epi8(char(lo), char(lo + 1), char(lo), char(lo + 1), char(lo), char(lo + 1), char(lo), char(lo + 1),
                       char(lo), char(lo + 1), char(lo), char(lo + 1), char(lo), char(lo + 1), char(lo), char(lo + 1),
                       char(hi), char(hi + 1), char(hi), char(hi + 1), char(hi), char(hi + 1), char(hi), char(hi + 1),
                       char(hi), char(hi + 1), char(hi), char(hi + 1), char(hi), char(hi + 1), char(hi), char(hi + 1));
  return _mm256_shuffle_epi8(half, sel);
}

}  // namespace nurl::avx2

namespace nurl::avx2 {
// The gemms over weight type t's interleaved layout (kernels/cpu/packed-layout.h, packed-gemm.inc):
// AVX512-VNNI with 16 rows a group, AVX-VNNI or plain AVX2 with 8, and the AVX-VNNI algorithm with
// vpdpbusd emulated exactly by AVX2 (tests only); rows = 0 where t has none.
PackedGemm packed_gemm_avx512(GgmlType t);
PackedGemm packed_gemm_avx_vnni(GgmlType t);
PackedGemm packed_gemm_avx2(GgmlType t);
PackedGemm packed_gemm_dpbusd_emulated(GgmlType t);
}  // namespace nurl::avx2

#endif
