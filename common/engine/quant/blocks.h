// Block structs of the quantised GGUF formats, byte for byte as they sit in a file, plus the
// half-precision conversions every format uses. Header-only so kernels/ can use it without
// linking the engine. Invariants: each struct is standard-layout, unpadded, and its size equals
// the geometry in types.cpp (checked below); element order within a block is documented per struct.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

namespace nurl {

inline constexpr int kQK = 32;    // elements per block of the legacy formats (q4_0 … q8_1, iq4_nl)
inline constexpr int kQK_K = 256; // elements per super-block of the k-quants and iq4_xs

using f16_bits = uint16_t;   // IEEE binary16 bit pattern
using bf16_bits = uint16_t;  // bfloat16 bit pattern (upper half of a binary32)

// binary16 → binary32, exact.
inline float fp16_to_f32(f16_bits h) {
  const uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t man = h & 0x3ff;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (man << 13);  // inf / nan
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (man << 13);
  } else if (man == 0) {
    bits = sign;
  } else {  // subnormal: normalise
    int e = 113;
    while (!(man & 0x400)) { man <<= 1; --e; }
    bits = sign | (uint32_t(e) << 23) | ((man & 0x3ff) << 13);
  }
  return std::bit_cast<float>(bits);
}

// binary32 → binary16, round to nearest even (what F16C's vcvtps2ph does with imm 0).
inline f16_bits f32_to_fp16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint16_t sign = uint16_t((x >> 16) & 0x8000);
  const uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return uint16_t(sign | 0x7e00 | ((ax >> 13) & 0x3ff));  // nan stays nan
  if (ax >= 0x477ff000u) return uint16_t(sign | 0x7c00);  // rounds to ≥ 65520 → inf
  if (ax < 0x38800000u) {  // result is subnormal or zero: scale into integer range and round
    if (ax < 0x33000000u) return sign;  // below half the smallest subnormal
    const int e = int(ax >> 23);
    const uint32_t man = (ax & 0x7fffff) | 0x800000;
    const int shift = 126 - e;  // 14 + (113 - e) - ... : value = man * 2^(e-150), unit 2^-24
    const uint32_t q = man >> shift, rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
    uint32_t r = q + ((rem > half || (rem == half && (q & 1))) ? 1 : 0);
    return uint16_t(sign | r);
  }
  uint32_t r = ax - 0x38000000u;  // rebias exponent 127 → 15 (in the f32 bit position)
  const uint32_t rem = r & 0x1fff;
  r >>= 13;
  if (rem > 0x1000 || (rem == 0x1000 && (r & 1))) ++r;
  return uint16_t(sign | r);
}

inline float bf16_to_f32(bf16_bits h) { return std::bit_cast<float>(uint32_t(h) << 16); }

// binary32 → bfloat16, round to nearest even; nan is kept quiet.
inline bf16_bits f32_to_bf16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 64);
  return uint16_t((x + (0x7fff + ((x >> 16) & 1))) >> 16);
}

// q4_0: x[i] = d * (q[i] - 8). qs[j] low nibble = element j, high nibble = element j+16.
struct BlockQ4_0 {
  f16_bits d;
  uint8_t qs[kQK / 2];
};
// q4_1: x[i] = d * q[i] + m. Nibble order as q4_0.
struct BlockQ4_1 {
  f16_bits d;
  f16_bits m;
  uint8_t qs[kQK / 2];
};
// q5_0: x[i] = d * (q[i] - 16); low 4 bits as q4_0, bit 4 of element i is bit i of qh (LE u32).
struct BlockQ5_0 {
  f16_bits d;
  uint8_t qh[4];
  uint8_t qs[kQK / 2];
};
// q5_1: x[i] = d * q[i] + m; bits as q5_0.
struct BlockQ5_1 {
  f16_bits d;
  f16_bits m;
  uint8_t qh[4];
  uint8_t qs[kQK / 2];
};
// q8_0: x[i] = d * qs[i].
struct BlockQ8_0 {
  f16_bits d;
  int8_t qs[kQK];
};
// q8_1 (activations for q4_1/q5_1): as q8_0 plus s = d * Σ qs (so the weight offset m folds in).
struct BlockQ8_1 {
  f16_bits d;
  f16_bits s;
  int8_t qs[kQK];
};
// iq4_nl: x[i] = d * kIq4nlValues[q[i]]; nibble order as q4_0.
struct BlockIQ4_NL {
  f16_bits d;
  uint8_t qs[kQK / 2];
};

// q2_K: 16 sub-blocks of 16. scales[k]: low nibble scale, high nibble min (4 bit each);
// x = d*sc*q - dmin*m with q 2 bits. Element e: half h=e/128, j=(e%128)/32, l=e%32 →
// bits 2j..2j+1 of qs[32h + l], sub-block 8h + 2j + l/16.
struct BlockQ2_K {
  uint8_t scales[kQK_K / 16];
  uint8_t qs[kQK_K / 4];
  f16_bits d;
  f16_bits dmin;
};
// q3_K: 16 sub-blocks of 16, 6-bit signed scales (stored +32) packed in 12 bytes:
// scale i low nibble = i<8 ? scales[i]&15 : scales[i-8]>>4, high 2 bits = scales[8+i%4]>>(2*(i/4)).
// q = 2 low bits as q2_K, minus 4 unless bit (4h+j) of hmask[l] is set; x = d*(sc-32)*q.
struct BlockQ3_K {
  uint8_t hmask[kQK_K / 8];
  uint8_t qs[kQK_K / 4];
  uint8_t scales[12];
  f16_bits d;
};
// q4_K: 8 sub-blocks of 32 with 6-bit scale and min (packing in ref/, scale_min_k4).
// x = d*sc*q - dmin*m. qs[32c + l]: low nibble = element 64c + l, high nibble = 64c + 32 + l.
struct BlockQ4_K {
  f16_bits d;
  f16_bits dmin;
  uint8_t scales[12];
  uint8_t qs[kQK_K / 2];
};
// q5_K: q4_K plus a fifth bit: bit 2c of qh[l] for element 64c + l, bit 2c+1 for 64c + 32 + l.
struct BlockQ5_K {
  f16_bits d;
  f16_bits dmin;
  uint8_t scales[12];
  uint8_t qh[kQK_K / 8];
  uint8_t qs[kQK_K / 2];
};
// q6_K: 16 sub-blocks of 16, int8 scales; x = d*sc*(q-32), q 6 bits. Per half h (128 elements),
// ql[64h + l] low/high nibble = elements l / l+64, ql[64h + 32 + l] = l+32 / l+96 (l < 32),
// qh[32h + l] bit pairs 0,2,4,6 = high bits of elements l, l+32, l+64, l+96.
struct BlockQ6_K {
  uint8_t ql[kQK_K / 2];
  uint8_t qh[kQK_K / 4];
  int8_t scales[kQK_K / 16];
  f16_bits d;
};
// q8_K (activations for k-quants and iq4_xs): f32 scale, bsums[k] = Σ qs over elements 16k..16k+15.
struct BlockQ8_K {
  float d;
  int8_t qs[kQK_K];
  int16_t bsums[kQK_K / 16];
};
// iq4_xs: 8 sub-blocks of 32, 6-bit scales (stored +32): low 4 bits in scales_l nibble ib%2 of
// byte ib/2, high 2 bits at scales_h >> 2ib. x = d*(ls-32)*kIq4nlValues[q]; qs nibble order per
// sub-block as q4_0 (qs[16ib + j]: element 32ib + j low, 32ib + 16 + j high).
struct BlockIQ4_XS {
  f16_bits d;
  uint16_t scales_h;
  uint8_t scales_l[kQK_K / 64];
  uint8_t qs[kQK_K / 2];
};

// The 16 non-uniform levels of iq4_nl / iq4_xs.
inline constexpr int8_t kIq4nlValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                            1,    13,   25,  38,  53,  69,  89,  113};

static_assert(sizeof(BlockQ4_0) == 18);
static_assert(sizeof(BlockQ4_1) == 20);
static_assert(sizeof(BlockQ5_0) == 22);
static_assert(sizeof(BlockQ5_1) == 24);
static_assert(sizeof(BlockQ8_0) == 34);
static_assert(sizeof(BlockQ8_1) == 36);
static_assert(sizeof(BlockIQ4_NL) == 18);
static_assert(sizeof(BlockQ2_K) == 84);
static_assert(sizeof(BlockQ3_K) == 110);
static_assert(sizeof(BlockQ4_K) == 144);
static_assert(sizeof(BlockQ5_K) == 176);
static_assert(sizeof(BlockQ6_K) == 210);
static_assert(sizeof(BlockQ8_K) == 292);
static_assert(sizeof(BlockIQ4_XS) == 136);

}  // namespace nurl
