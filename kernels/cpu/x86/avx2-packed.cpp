// The packed-layout gemms (packed-gemm.inc) on 256-bit vectors: 8 rows a group, one 32-bit lane of
// a ymm register per row. Three builds: AVX-VNNI's algorithm with vpdpbusd emulated exactly (to
// test it on any AVX2 CPU), AVX-VNNI, where dot4 is one vpdpbusd (VEX), and plain AVX2,
// where dot4 is maddubs (u8 × s8 → int16 pairs) + madd by ones: exact while the levels are at most
// 127 (|2 · 127 · 128| fits int16), which holds for the 4-, 5- and 6-bit formats. The wide levels
// of q8_0 and iq4_nl (w + 128, up to 255) go in signed: w = levels ^ 0x80, and maddubs multiplies
// |w| (at most 128, unsigned) by x carrying w's sign (|2 · 128 · 127| fits int16), exact again;
// |w| and the sign mask are made once per chunk for the whole token tile.
#include <algorithm>
#include <cstring>
#include <utility>

#include "kernels/cpu/packed-layout.h"
#include "kernels/cpu/x86/avx2-common.h"

#if defined(__x86_64__)

namespace nurl::avx2 {

// ---- AVX-VNNI --------------------------------------------------------------------------------

namespace vnni_packed {
NURL_TARGET_BEGIN("avx2,fma,f16c,avxvnni")
namespace {
struct Vnni {
  static constexpr int kWideBias = 0;
  template <bool Wide>
  static __m256i dot4(__m256i acc, __m256i levels, const int8_t* x) {
    return _mm256_dpbusd_avx_epi32(acc, levels, _mm256_set1_epi32(quad(x)));
  }
  static __m256i dpwssd(__m256i acc, __m256i a, int32_t pair) {
    return _mm256_dpwssd_avx_epi32(acc, a, _mm256_set1_epi32(pair));
  }
};
using D = Vnni;
#include "kernels/cpu/x86/packed-v256.inc"
#include "kernels/cpu/x86/packed-gemm.inc"
}  // namespace
NURL_TARGET_END
}  // namespace vnni_packed

// ---- AVX2 ------------------------------------------------------------------------------------

namespace avx2_packed {
NURL_TARGET_BEGIN("avx2,fma,f16c")
namespace {
struct Madd {
  static constexpr int kWideBias = 128;  // dot4<true> multiplies levels − 128
  template <bool Wide>
  static __m256i dot4(__m256i acc, __m256i levels, const int8_t* x) {
    __m256i p;
    if constexpr (Wide) {
      // Pure functions of `levels`: the compiler makes them once for the unrolled token tile.
      const __m256i w = _mm256_xor_si256(levels, _mm256_set1_epi8(char(0x80)));
      p = _mm256_maddubs_epi16(_mm256_abs_epi8(w), _mm256_sign_epi8(_mm256_set1_epi32(quad(x)), w));
    } else {
      p = _mm256_maddubs_epi16(levels, _mm256_set1_epi32(quad(x)));
    }
    return _mm256_add_epi32(acc, _mm256_madd_epi16(p, _mm256_set1_epi16(1)));
  }
  static __m256i dpwssd(__m256i acc, __m256i a, int32_t pair) {
    return _mm256_add_epi32(acc, _mm256_madd_epi16(a, _mm256_set1_epi32(pair)));
  }
};
using D = Madd;
#include "kernels/cpu/x86/packed-v256.inc"
#include "kernels/cpu/x86/packed-gemm.inc"
}  // namespace
NURL_TARGET_END
}  // namespace avx2_packed

// ---- AVX-VNNI's algorithm with vpdpbusd emulated (tests) ------------------------------------

namespace emulated_packed {
NURL_TARGET_BEGIN("avx2,fma,f16c")
namespace {
// vpdpbusd exactly: even and odd bytes widened to int16 (levels unsigned, activations signed),
// two madds; dpwssd is AVX2's.
struct Emulated : avx2_packed::Madd {
  static constexpr int kWideBias = 0;
  template <bool Wide>
  static __m256i dot4(__m256i acc, __m256i levels, const int8_t* x) {
    const __m256i s = _mm256_set1_epi32(quad(x));
    const __m256i u_even = _mm256_and_si256(levels, _mm256_set1_epi16(0xff)), u_odd = _mm256_srli_epi16(levels, 8);
    const __m256i s_even = _mm256_srai_epi16(_mm256_slli_epi16(s, 8), 8), s_odd = _mm256_srai_epi16(s, 8);
    return _mm256_add_epi32(acc, _mm256_add_epi32(_mm256_madd_epi16(u_even, s_even), _mm256_madd_epi16(u_odd, s_odd)));
  }
};
using D = Emulated;
#include "kernels/cpu/x86/packed-v256.inc"
#include "kernels/cpu/x86/packed-gemm.inc"
}  // namespace
NURL_TARGET_END
}  // namespace emulated_packed

PackedGemm packed_gemm_avx_vnni(GgmlType t) {
  return vnni_packed::packed_gemm_of(t);
}
PackedGemm packed_gemm_avx2(GgmlType t) {
  return avx2_packed::packed_gemm_of(t);
}
PackedGemm packed_gemm_dpbusd_emulated(GgmlType t) {
  return emulated_packed::packed_gemm_of(t);
}

}  // namespace nurl::avx2

#endif
