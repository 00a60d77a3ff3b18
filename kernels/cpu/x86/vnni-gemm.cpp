// The 32-element formats' gemm_rows through vpdpbusd (legacy-gemm.inc with MulDpbusd): four
// u8 × s8 products per int32 lane in one instruction, where AVX2 needs maddubs + madd (and a
// sign per pair for the signed formats). Two builds of the same code: AVX-VNNI (VEX, AVX2-only
// CPUs such as Alder Lake and later, Zen 5) and AVX512-VNNI with AVX512-VL on 256-bit vectors
// (EVEX; the compiler also gets 32 vector registers, so the tiles' accumulators stay in them).
#include <algorithm>
#include <type_traits>
#include <vector>

#include "kernels/cpu/x86/avx2-common.h"

#if defined(__x86_64__)

namespace nurl::avx2 {

namespace vnni {
namespace {
#define NURL_GEMM_TARGET __attribute__((target("avx2,fma,f16c,avxvnni")))
struct Dpbusd {
  NURL_GEMM_TARGET static __m256i dot(__m256i acc, __m256i u, __m256i s) { return _mm256_dpbusd_avx_epi32(acc, u, s); }
};
#include "kernels/cpu/x86/legacy-gemm.inc"
#undef NURL_GEMM_TARGET
}  // namespace
}  // namespace vnni

namespace avx512 {
namespace {
#define NURL_GEMM_TARGET __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")))
struct Dpbusd {
  NURL_GEMM_TARGET static __m256i dot(__m256i acc, __m256i u, __m256i s) { return _mm256_dpbusd_epi32(acc, u, s); }
};
#include "kernels/cpu/x86/legacy-gemm.inc"
#undef NURL_GEMM_TARGET
}  // namespace
}  // namespace avx512

GemmRowsFn tiled_gemm_avx_vnni(GgmlType t) {
  return vnni::legacy_gemm<vnni::MulDpbusd<vnni::Dpbusd>>(t);
}

GemmRowsFn tiled_gemm_avx512_vnni(GgmlType t) {
  return avx512::legacy_gemm<avx512::MulDpbusd<avx512::Dpbusd>>(t);
}

}  // namespace nurl::avx2

#endif
