// Scalar reference dot products: one weight row × one activation row of the weight type's
// activation format (quant.h: vec_dot_type). Integer sums per (sub-)block, then one float
// multiply by the block scales — the formulation every SIMD kernel must reproduce.
#include "engine/quant/blocks.h"
#include "kernels/cpu/ref/ref-quants.h"

namespace nurl::ref {

namespace {

uint32_t load_u32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

// Σ q[j]·y[j] over one 32-block with q given as (lo nibble | bit4) − offset, for q4/q5 legacy.
template <typename Block>
int legacy_block_isum(const Block& b, const int8_t* y, int offset, bool five_bit) {
  uint32_t qh = 0;
  if constexpr (requires { b.qh; }) qh = load_u32(b.qh);
  int s = 0;
  for (int j = 0; j < kQK / 2; ++j) {
    int lo = b.qs[j] & 0xf, hi = b.qs[j] >> 4;
    if (five_bit) {
      lo |= int((qh >> j) & 1) << 4;
      hi |= int((qh >> (j + 16)) & 1) << 4;
    }
    s += (lo - offset) * y[j] + (hi - offset) * y[j + 16];
  }
  return s;
}

}  // namespace

float vec_dot_f32(int64_t n, const void* x, const void* y) {
  const auto* a = static_cast<const float*>(x);
  const auto* b = static_cast<const float*>(y);
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += double(a[i]) * double(b[i]);
  return float(s);
}

float vec_dot_f16(int64_t n, const void* x, const void* y) {
  const auto* a = static_cast<const f16_bits*>(x);
  const auto* b = static_cast<const f16_bits*>(y);
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += double(fp16_to_f32(a[i]) * fp16_to_f32(b[i]));
  return float(s);
}

float vec_dot_bf16(int64_t n, const void* x, const void* y) {
  const auto* a = static_cast<const bf16_bits*>(x);
  const auto* b = static_cast<const bf16_bits*>(y);
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += double(bf16_to_f32(a[i]) * bf16_to_f32(b[i]));
  return float(s);
}

float vec_dot_q4_0(int64_t n, const void* x, const void* y) {
  const auto* a = static_cast<const BlockQ4_0*>(x);
  const auto* b = static_cast<const BlockQ8_0*>(y);
  float s = 0;
  for (int64_t i = 0; i < n / kQK; ++i)
    s += float(legacy_block_isum(a[i], b[i].qs, 8, false)) * (fp16_to_f32(a[i].d) * fp16_to_f32(b[i].d));
  return s;
}

float vec_dot_q5_0(int64_t n, const void* x, const void* y) {
  const auto* a = static_cast<const BlockQ5_0*>(x);
  const auto* b = static_cast<const BlockQ8_0*>(y);
  float s = 0;
  for (int64_t i = 0; i < n / kQK; ++i)
    s += float(legacy_block_isum(a[i], b[i].qs, 16, true)) * (fp16_to_f32(a[i].d) * fp16_to_f32(b[i].d));
  return s;
}

// q4_1/q5_1: Σ (d·q + m)·(dy·qy) = d·dy·Σ q·qy + m·(dy·Σ qy), and dy·Σ qy is q8_1's s.
float vec_dot_q4_1(int64_t n, const void* x, const void* y) {
  const auto* a = static_cast<const BlockQ4_1*>(x);
  const auto* b = static_cast<const BlockQ8_1*>(y);
  float s = 0;
  for (int64_t i = 0; i < n / kQK; ++i)
    s += (fp16_to_f32(a[i].d) * fp16_to_f32(b[i].d)) * float(legacy_block_isum(a[i], b[i].qs, 0, false)) +
         fp16_to_f32(a[i].m) * fp16_to_f32(b[i].s);
  return s;
}

float vec_dot_q5_1(int64_t n, const void* x, const void* y) {
  const auto* a = static_cast<const BlockQ5_1*>(x);
  const auto* b = static_cast<const BlockQ8_1*>(y);
  float s = 0;
  for (int64_t i = 0; i < n / kQK; ++i)
    s += (fp16_to_f32(a[i].d) * fp16_to_f32(b[i].d)) * float(legacy_block_isum(a[i], b[i].qs, 0, true)) +
         fp16_to_f32(a[i].m) * fp16_to_f32(b[i].s);
  return s;
}

float vec_dot_q8_0(int64_t n, const void* x, const void* y) {
  const auto* a = static_cast<const BlockQ8_0*>(x);
  const auto* b = static_cast<const BlockQ8_0*>(y);
  float s = 0;
  for (int64_t i = 0; i < n / kQK; ++i) {
    int isum = 0;
    for (int j = 0; j < kQK; ++j) isum += a[i].qs[j] * b[i].qs[j];
    s += float(isum) * (fp16_to_f32(a[i].d) * fp16_to_f32(b[i].d));
  }
  return s;
}

float vec_dot_iq4_nl(int64_t n, const void* x, const void* y) {
  const auto* a = static_cast<const BlockIQ4_NL*>(x);
  const auto* b = static_cast<const BlockQ8_0*>(y);
  float s = 0;
  for (int64_t i = 0; i < n / kQK; ++i) {
    int isum = 0;
    for (int j = 0; j < kQK / 2; ++j)
      isum += kIq4nlValues[a[i].qs[j] & 0xf] * b[i].qs[j] + kIq4nlValues[a[i].qs[j] >> 4] * b[i].qs[j + 16];
    s += float(isum) * (fp16_to_f32(a[i].d) * fp16_to_f32(b[i].d));
  }
  return s;
}

// q2_K: Σ d·sc·q·y − dmin·m·y; the min term uses q8_K's 16-element sums.
float vec_dot_q2_k(int64_t n, const void* x, const void* y) {
  const auto* a = static_cast<const BlockQ2_K*>(x);
  const auto* b = static_cast<const BlockQ8_K*>(y);
  float s = 0;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    int mins = 0;
    for (int k = 0; k < 16; ++k) mins += b[i].bsums[k] * (a[i].scales[k] >> 4);
    int isum = 0;
    for (int h = 0; h < 2; ++h)
      for (int j = 0; j < 4; ++j)
        for (int half = 0; half < 2; ++half) {
          int t = 0;
          for (int l = 16 * half; l < 16 * half + 16; ++l)
            t += b[i].qs[128 * h + 32 * j + l] * ((a[i].qs[32 * h + l] >> (2 * j)) & 3);
          isum += (a[i].scales[8 * h + 2 * j + half] & 0xf) * t;
        }
    s += b[i].d * fp16_to_f32(a[i].d) * float(isum) - b[i].d * fp16_to_f32(a[i].dmin) * float(mins);
  }
  return s;
}

float vec_dot_q3_k(int64_t n, const void* x, const void* y) {
  const auto* a = static_cast<const BlockQ3_K*>(x);
  const auto* b = static_cast<const BlockQ8_K*>(y);
  float s = 0;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    int isum = 0;
    for (int h = 0; h < 2; ++h)
      for (int j = 0; j < 4; ++j)
        for (int half = 0; half < 2; ++half) {
          int t = 0;
          for (int l = 16 * half; l < 16 * half + 16; ++l) {
            int q = (a[i].qs[32 * h + l] >> (2 * j)) & 3;
            if (!(a[i].hmask[l] & (1 << (4 * h + j)))) q -= 4;
            t += b[i].qs[128 * h + 32 * j + l] * q;
          }
          isum += q3k_scale(a[i].scales, 8 * h + 2 * j + half) * t;
        }
    s += fp16_to_f32(a[i].d) * b[i].d * float(isum);
  }
  return s;
}

float vec_dot_q4_k(int64_t n, const void* x, const void* y) {
  const auto* a = static_cast<const BlockQ4_K*>(x);
  const auto* b = static_cast<const BlockQ8_K*>(y);
  float s = 0;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    int isum = 0, mins = 0;
    for (int c = 0; c < 4; ++c) {
      uint8_t sc0, m0, sc1, m1;
      scale_min_k4(2 * c, a[i].scales, &sc0, &m0);
      scale_min_k4(2 * c + 1, a[i].scales, &sc1, &m1);
      int t0 = 0, t1 = 0;
      for (int l = 0; l < 32; ++l) {
        t0 += (a[i].qs[32 * c + l] & 0xf) * b[i].qs[64 * c + l];
        t1 += (a[i].qs[32 * c + l] >> 4) * b[i].qs[64 * c + 32 + l];
      }
      isum += sc0 * t0 + sc1 * t1;
      mins += m0 * (b[i].bsums[4 * c] + b[i].bsums[4 * c + 1]) + m1 * (b[i].bsums[4 * c + 2] + b[i].bsums[4 * c + 3]);
    }
    s += fp16_to_f32(a[i].d) * b[i].d * float(isum) - fp16_to_f32(a[i].dmin) * b[i].d * float(mins);
  }
  return s;
}

float vec_dot_q5_k(int64_t n, const void* x, const void* y) {
  const auto* a = static_cast<const BlockQ5_K*>(x);
  const auto* b = static_cast<const BlockQ8_K*>(y);
  float s = 0;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    int isum = 0, mins = 0;
    for (int c = 0; c < 4; ++c) {
      uint8_t sc0, m0, sc1, m1;
      scale_min_k4(2 * c, a[i].scales, &sc0, &m0);
      scale_min_k4(2 * c + 1, a[i].scales, &sc1, &m1);
      int t0 = 0, t1 = 0;
      for (int l = 0; l < 32; ++l) {
        const int lo = (a[i].qs[32 * c + l] & 0xf) | ((a[i].qh[l] >> (2 * c)) & 1) << 4;
        const int hi = (a[i].qs[32 * c + l] >> 4) | ((a[i].qh[l] >> (2 * c + 1)) & 1) << 4;
        t0 += lo * b[i].qs[64 * c + l];
        t1 += hi * b[i].qs[64 * c + 32 + l];
      }
      isum += sc0 * t0 + sc1 * t1;
      mins += m0 * (b[i].bsums[4 * c] + b[i].bsums[4 * c + 1]) + m1 * (b[i].bsums[4 * c + 2] + b[i].bsums[4 * c + 3]);
    }
    s += fp16_to_f32(a[i].d) * b[i].d * float(isum) - fp16_to_f32(a[i].dmin) * b[i].d * float(mins);
  }
  return s;
}

float vec_dot_q6_k(int64_t n, const void* x, const void* y) {
  const auto* a = static_cast<const BlockQ6_K*>(x);
  const auto* b = static_cast<const BlockQ8_K*>(y);
  float s = 0;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    int isum = 0;
    for (int h = 0; h < 2; ++h) {
      const uint8_t* ql = a[i].ql + 64 * h;
      const uint8_t* qh = a[i].qh + 32 * h;
      const int8_t* sc = a[i].scales + 8 * h;
      const int8_t* q8 = b[i].qs + 128 * h;
      int t[8] = {};  // per 16-element sub-block of this half
      for (int l = 0; l < 32; ++l) {
        const int q0 = ((ql[l] & 0xf) | ((qh[l] >> 0) & 3) << 4) - 32;
        const int q1 = ((ql[l + 32] & 0xf) | ((qh[l] >> 2) & 3) << 4) - 32;
        const int q2 = ((ql[l] >> 4) | ((qh[l] >> 4) & 3) << 4) - 32;
        const int q3 = ((ql[l + 32] >> 4) | ((qh[l] >> 6) & 3) << 4) - 32;
        const int s16 = l / 16;
        t[s16] += q0 * q8[l];
        t[s16 + 2] += q1 * q8[l + 32];
        t[s16 + 4] += q2 * q8[l + 64];
        t[s16 + 6] += q3 * q8[l + 96];
      }
      for (int k = 0; k < 8; ++k) isum += sc[k] * t[k];
    }
    s += fp16_to_f32(a[i].d) * b[i].d * float(isum);
  }
  return s;
}

float vec_dot_iq4_xs(int64_t n, const void* x, const void* y) {
  const auto* a = static_cast<const BlockIQ4_XS*>(x);
  const auto* b = static_cast<const BlockQ8_K*>(y);
  float s = 0;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    int isum = 0;
    for (int ib = 0; ib < 8; ++ib) {
      const int ls = ((a[i].scales_l[ib / 2] >> (4 * (ib % 2))) & 0xf) | ((a[i].scales_h >> (2 * ib)) & 3) << 4;
      const uint8_t* qs = a[i].qs + 16 * ib;
      const int8_t* q8 = b[i].qs + 32 * ib;
      int t = 0;
      for (int j = 0; j < 16; ++j) t += kIq4nlValues[qs[j] & 0xf] * q8[j] + kIq4nlValues[qs[j] >> 4] * q8[j + 16];
      isum += (ls - 32) * t;
    }
    s += fp16_to_f32(a[i].d) * b[i].d * float(isum);
  }
  return s;
}

}  // namespace nurl::ref
