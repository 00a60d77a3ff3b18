// The packed-layout gemms (packed-gemm.inc) for AVX512-VNNI: 16 rows a group, one 32-bit lane of
// a zmm register per row; dot4 is one vpdpbusd with the four activations broadcast from memory.
#include <algorithm>
#include <cstring>
#include <utility>

#include "kernels/cpu/packed-layout.h"
#include "kernels/cpu/x86/avx2-common.h"

#if defined(__x86_64__)

namespace nurl::avx2 {
namespace avx512_packed {

// Everything defined from here to NURL_TARGET_END is compiled for AVX512-VNNI. Inline functions
// of the headers above keep their own targets, so none is emitted with AVX-512 instructions.
NURL_TARGET_BEGIN("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")

namespace {

struct V {
  static constexpr int R = 16;
  static constexpr int kTokTile = 8;  // 8 float + 8 integer accumulators of 32 registers
  static constexpr int kWideBias = 0;  // vpdpbusd takes levels up to 255
  using vi = __m512i;
  using vf = __m512;

  static vi load(const uint8_t* p) { return _mm512_loadu_si512(p); }
  static vi zero() { return _mm512_setzero_si512(); }
  static vi set1(int32_t v) { return _mm512_set1_epi32(v); }
  static vi set1_8(char v) { return _mm512_set1_epi8(v); }
  static vf zerof() { return _mm512_setzero_ps(); }
  static vf set1f(float v) { return _mm512_set1_ps(v); }
  static vi and_(vi a, vi b) { return _mm512_and_si512(a, b); }
  template <int K>
  static vi srl16(vi a) { return _mm512_srli_epi16(a, K); }
  template <int K>
  static vi sll16(vi a) { return _mm512_slli_epi16(a, K); }
  template <int K>
  static vi sll32(vi a) { return _mm512_slli_epi32(a, K); }
  template <int K>
  static vi sra32(vi a) { return _mm512_srai_epi32(a, K); }
  // level | (bits & mask) in one instruction.
  static vi or_masked(vi level, vi bits, vi mask) { return _mm512_ternarylogic_epi32(level, bits, mask, 0xf8); }
  static vi table16(const int8_t* t) {
    return _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(t)));
  }
  static vi lookup(vi table, vi idx) { return _mm512_shuffle_epi8(table, idx); }
  template <bool Wide>
  static vi dot4(vi acc, vi levels, const int8_t* x) {
    return _mm512_dpbusd_epi32(acc, levels, _mm512_set1_epi32(quad(x)));
  }
  static vi dpwssd(vi acc, vi a, int32_t pair) { return _mm512_dpwssd_epi32(acc, a, _mm512_set1_epi32(pair)); }
  static vi add(vi a, vi b) { return _mm512_add_epi32(a, b); }
  static vi sub(vi a, vi b) { return _mm512_sub_epi32(a, b); }
  static vi mullo(vi a, vi b) { return _mm512_mullo_epi32(a, b); }
  static vf cvt(vi a) { return _mm512_cvtepi32_ps(a); }
  static vf mul(vf a, vf b) { return _mm512_mul_ps(a, b); }
  static vf fmadd(vf a, vf b, vf c) { return _mm512_fmadd_ps(a, b, c); }
  static vf fnmadd(vf a, vf b, vf c) { return _mm512_fnmadd_ps(a, b, c); }
  static vf f16(const uint8_t* p) { return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))); }
  static vi u8_to_i32(const uint8_t* p) { return _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
  static vi u8_to_i16(const uint8_t* p) { return _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))); }
  static vi i8_to_i16(const uint8_t* p) { return _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))); }
  // The first n of the 16 lanes.
  static void store(float* y, vf v, int n) { _mm512_mask_storeu_ps(y, __mmask16((1u << n) - 1), v); }
};

#include "kernels/cpu/x86/packed-gemm.inc"

}  // namespace

NURL_TARGET_END

}  // namespace avx512_packed

PackedGemm packed_gemm_avx512(GgmlType t) {
  return avx512_packed::packed_gemm_of(t);
}

}  // namespace nurl::avx2

#endif
