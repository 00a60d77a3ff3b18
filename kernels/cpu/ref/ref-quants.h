// Scalar reference implementations of every quantised format: dequantise, quantise, and the
// integer dot product of a weight row with a quantised activation row (weights × q8 activations,
// the same formulation llama.cpp's CPU backend uses, so results agree to rounding).
// These are the truth every SIMD/CUDA kernel is tested against. n is always a multiple of the
// type's block size; callers check. Layouts: engine/quant/blocks.h.
#pragma once

#include <cstdint>

namespace nurl::ref {

// dequantise n elements → f32
void dequant_f16(const void* src, float* dst, int64_t n);
void dequant_bf16(const void* src, float* dst, int64_t n);
void dequant_q4_0(const void* src, float* dst, int64_t n);
void dequant_q4_1(const void* src, float* dst, int64_t n);
void dequant_q5_0(const void* src, float* dst, int64_t n);
void dequant_q5_1(const void* src, float* dst, int64_t n);
void dequant_q8_0(const void* src, float* dst, int64_t n);
void dequant_q8_1(const void* src, float* dst, int64_t n);
void dequant_q2_k(const void* src, float* dst, int64_t n);
void dequant_q3_k(const void* src, float* dst, int64_t n);
void dequant_q4_k(const void* src, float* dst, int64_t n);
void dequant_q5_k(const void* src, float* dst, int64_t n);
void dequant_q6_k(const void* src, float* dst, int64_t n);
void dequant_q8_k(const void* src, float* dst, int64_t n);
void dequant_iq4_nl(const void* src, float* dst, int64_t n);
void dequant_iq4_xs(const void* src, float* dst, int64_t n);

// f32 → n elements (deterministic; the legacy and k-quant algorithms follow llama.cpp's
// reference quantisers so a re-quantised master reproduces its files byte for byte)
void quantize_f16(const float* src, void* dst, int64_t n);
void quantize_bf16(const float* src, void* dst, int64_t n);
void quantize_q4_0(const float* src, void* dst, int64_t n);
void quantize_q4_1(const float* src, void* dst, int64_t n);
void quantize_q5_0(const float* src, void* dst, int64_t n);
void quantize_q5_1(const float* src, void* dst, int64_t n);
void quantize_q8_0(const float* src, void* dst, int64_t n);
void quantize_q8_1(const float* src, void* dst, int64_t n);
void quantize_q2_k(const float* src, void* dst, int64_t n);
void quantize_q3_k(const float* src, void* dst, int64_t n);
void quantize_q4_k(const float* src, void* dst, int64_t n);
void quantize_q5_k(const float* src, void* dst, int64_t n);
void quantize_q6_k(const float* src, void* dst, int64_t n);
void quantize_q8_k(const float* src, void* dst, int64_t n);

// dot(x row of the weight type, y row of its activation type), n elements
float vec_dot_f32(int64_t n, const void* x, const void* y);
float vec_dot_f16(int64_t n, const void* x, const void* y);      // y: f16
float vec_dot_bf16(int64_t n, const void* x, const void* y);     // y: bf16
float vec_dot_q4_0(int64_t n, const void* x, const void* y);     // y: q8_0
float vec_dot_q4_1(int64_t n, const void* x, const void* y);     // y: q8_1
float vec_dot_q5_0(int64_t n, const void* x, const void* y);     // y: q8_0
float vec_dot_q5_1(int64_t n, const void* x, const void* y);     // y: q8_1
float vec_dot_q8_0(int64_t n, const void* x, const void* y);     // y: q8_0
float vec_dot_iq4_nl(int64_t n, const void* x, const void* y);   // y: q8_0
float vec_dot_q2_k(int64_t n, const void* x, const void* y);     // y: q8_k
float vec_dot_q3_k(int64_t n, const void* x, const void* y);     // y: q8_k
float vec_dot_q4_k(int64_t n, const void* x, const void* y);     // y: q8_k
float vec_dot_q5_k(int64_t n, const void* x, const void* y);     // y: q8_k
float vec_dot_q6_k(int64_t n, const void* x, const void* y);     // y: q8_k
float vec_dot_iq4_xs(int64_t n, const void* x, const void* y);   // y: q8_k

// Unpacks the 6-bit scale and min of sub-block j (0..7) of a q4_K/q5_K block.
inline void scale_min_k4(int j, const uint8_t* s, uint8_t* sc, uint8_t* m) {
  if (j < 4) {
    *sc = s[j] & 63;
    *m = s[j + 4] & 63;
  } else {
    *sc = uint8_t((s[j + 4] & 0xf) | ((s[j - 4] >> 6) << 4));
    *m = uint8_t((s[j + 4] >> 4) | ((s[j] >> 6) << 4));
  }
}

// Signed scale (−32..31) of sub-block i (0..15) of a q3_K block.
inline int q3k_scale(const uint8_t* s, int i) {
  const int lo = i < 8 ? (s[i] & 0xf) : (s[i - 8] >> 4);
  const int hi = (s[8 + i % 4] >> (2 * (i / 4))) & 3;
  return (lo | (hi << 4)) - 32;
}

}  // namespace nurl::ref
