// Scalar dequantisation of every format (block layouts: engine/quant/blocks.h). Plain loops
// written for clarity: these define what each bit pattern means.
#include "engine/quant/blocks.h"
#include "kernels/cpu/ref/ref-quants.h"

namespace nurl::ref {

void dequant_f16(const void* src, float* dst, int64_t n) {
  const auto* x = static_cast<const f16_bits*>(src);
  for (int64_t i = 0; i < n; ++i) dst[i] = fp16_to_f32(x[i]);
}

void dequant_bf16(const void* src, float* dst, int64_t n) {
  const auto* x = static_cast<const bf16_bits*>(src);
  for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_f32(x[i]);
}

void dequant_q4_0(const void* src, float* dst, int64_t n) {
  const auto* b = static_cast<const BlockQ4_0*>(src);
  for (int64_t i = 0; i < n / kQK; ++i, dst += kQK) {
    const float d = fp16_to_f32(b[i].d);
    for (int j = 0; j < kQK / 2; ++j) {
      dst[j] = d * float((b[i].qs[j] & 0xf) - 8);
      dst[j + 16] = d * float((b[i].qs[j] >> 4) - 8);
    }
  }
}

void dequant_q4_1(const void* src, float* dst, int64_t n) {
  const auto* b = static_cast<const BlockQ4_1*>(src);
  for (int64_t i = 0; i < n / kQK; ++i, dst += kQK) {
    const float d = fp16_to_f32(b[i].d), m = fp16_to_f32(b[i].m);
    for (int j = 0; j < kQK / 2; ++j) {
      dst[j] = d * float(b[i].qs[j] & 0xf) + m;
      dst[j + 16] = d * float(b[i].qs[j] >> 4) + m;
    }
  }
}

static uint32_t load_u32(const uint8_t* p) { return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24; }

void dequant_q5_0(const void* src, float* dst, int64_t n) {
  const auto* b = static_cast<const BlockQ5_0*>(src);
  for (int64_t i = 0; i < n / kQK; ++i, dst += kQK) {
    const float d = fp16_to_f32(b[i].d);
    const uint32_t qh = load_u32(b[i].qh);
    for (int j = 0; j < kQK / 2; ++j) {
      const int lo = (b[i].qs[j] & 0xf) | int((qh >> j) & 1) << 4;
      const int hi = (b[i].qs[j] >> 4) | int((qh >> (j + 16)) & 1) << 4;
      dst[j] = d * float(lo - 16);
      dst[j + 16] = d * float(hi - 16);
    }
  }
}

void dequant_q5_1(const void* src, float* dst, int64_t n) {
  const auto* b = static_cast<const BlockQ5_1*>(src);
  for (int64_t i = 0; i < n / kQK; ++i, dst += kQK) {
    const float d = fp16_to_f32(b[i].d), m = fp16_to_f32(b[i].m);
    const uint32_t qh = load_u32(b[i].qh);
    for (int j = 0; j < kQK / 2; ++j) {
      const int lo = (b[i].qs[j] & 0xf) | int((qh >> j) & 1) << 4;
      const int hi = (b[i].qs[j] >> 4) | int((qh >> (j + 16)) & 1) << 4;
      dst[j] = d * float(lo) + m;
      dst[j + 16] = d * float(hi) + m;
    }
  }
}

void dequant_q8_0(const void* src, float* dst, int64_t n) {
  const auto* b = static_cast<const BlockQ8_0*>(src);
  for (int64_t i = 0; i < n / kQK; ++i, dst += kQK) {
    const float d = fp16_to_f32(b[i].d);
    for (int j = 0; j < kQK; ++j) dst[j] = d * float(b[i].qs[j]);
  }
}

void dequant_q8_1(const void* src, float* dst, int64_t n) {
  const auto* b = static_cast<const BlockQ8_1*>(src);
  for (int64_t i = 0; i < n / kQK; ++i, dst += kQK) {
    const float d = fp16_to_f32(b[i].d);
    for (int j = 0; j < kQK; ++j) dst[j] = d * float(b[i].qs[j]);
  }
}

void dequant_iq4_nl(const void* src, float* dst, int64_t n) {
  const auto* b = static_cast<const BlockIQ4_NL*>(src);
  for (int64_t i = 0; i < n / kQK; ++i, dst += kQK) {
    const float d = fp16_to_f32(b[i].d);
    for (int j = 0; j < kQK / 2; ++j) {
      dst[j] = d * float(kIq4nlValues[b[i].qs[j] & 0xf]);
      dst[j + 16] = d * float(kIq4nlValues[b[i].qs[j] >> 4]);
    }
  }
}

void dequant_q2_k(const void* src, float* dst, int64_t n) {
  const auto* b = static_cast<const BlockQ2_K*>(src);
  for (int64_t i = 0; i < n / kQK_K; ++i, dst += kQK_K) {
    const float d = fp16_to_f32(b[i].d), dmin = fp16_to_f32(b[i].dmin);
    for (int e = 0; e < kQK_K; ++e) {
      const int h = e / 128, j = (e % 128) / 32, l = e % 32;
      const int q = (b[i].qs[32 * h + l] >> (2 * j)) & 3;
      const uint8_t sc = b[i].scales[8 * h + 2 * j + l / 16];
      dst[e] = d * float(sc & 0xf) * float(q) - dmin * float(sc >> 4);
    }
  }
}

void dequant_q3_k(const void* src, float* dst, int64_t n) {
  const auto* b = static_cast<const BlockQ3_K*>(src);
  for (int64_t i = 0; i < n / kQK_K; ++i, dst += kQK_K) {
    const float d = fp16_to_f32(b[i].d);
    for (int e = 0; e < kQK_K; ++e) {
      const int h = e / 128, j = (e % 128) / 32, l = e % 32;
      int q = (b[i].qs[32 * h + l] >> (2 * j)) & 3;
      if (!(b[i].hmask[l] & (1 << (4 * h + j)))) q -= 4;
      dst[e] = d * float(q3k_scale(b[i].scales, 8 * h + 2 * j + l / 16)) * float(q);
    }
  }
}

void dequant_q4_k(const void* src, float* dst, int64_t n) {
  const auto* b = static_cast<const BlockQ4_K*>(src);
  for (int64_t i = 0; i < n / kQK_K; ++i, dst += kQK_K) {
    const float d = fp16_to_f32(b[i].d), dmin = fp16_to_f32(b[i].dmin);
    for (int c = 0; c < 4; ++c) {
      uint8_t sc0, m0, sc1, m1;
      scale_min_k4(2 * c, b[i].scales, &sc0, &m0);
      scale_min_k4(2 * c + 1, b[i].scales, &sc1, &m1);
      const float d0 = d * sc0, mm0 = dmin * m0, d1 = d * sc1, mm1 = dmin * m1;
      for (int l = 0; l < 32; ++l) {
        dst[64 * c + l] = d0 * float(b[i].qs[32 * c + l] & 0xf) - mm0;
        dst[64 * c + 32 + l] = d1 * float(b[i].qs[32 * c + l] >> 4) - mm1;
      }
    }
  }
}

void dequant_q5_k(const void* src, float* dst, int64_t n) {
  const auto* b = static_cast<const BlockQ5_K*>(src);
  for (int64_t i = 0; i < n / kQK_K; ++i, dst += kQK_K) {
    const float d = fp16_to_f32(b[i].d), dmin = fp16_to_f32(b[i].dmin);
    for (int c = 0; c < 4; ++c) {
      uint8_t sc0, m0, sc1, m1;
      scale_min_k4(2 * c, b[i].scales, &sc0, &m0);
      scale_min_k4(2 * c + 1, b[i].scales, &sc1, &m1);
      const float d0 = d * sc0, mm0 = dmin * m0, d1 = d * sc1, mm1 = dmin * m1;
      for (int l = 0; l < 32; ++l) {
        const int lo = (b[i].qs[32 * c + l] & 0xf) | ((b[i].qh[l] >> (2 * c)) & 1) << 4;
        const int hi = (b[i].qs[32 * c + l] >> 4) | ((b[i].qh[l] >> (2 * c + 1)) & 1) << 4;
        dst[64 * c + l] = d0 * float(lo) - mm0;
        dst[64 * c + 32 + l] = d1 * float(hi) - mm1;
      }
    }
  }
}

void dequant_q6_k(const void* src, float* dst, int64_t n) {
  const auto* b = static_cast<const BlockQ6_K*>(src);
  for (int64_t i = 0; i < n / kQK_K; ++i, dst += kQK_K) {
    const float d = fp16_to_f32(b[i].d);
    for (int h = 0; h < 2; ++h) {
      const uint8_t* ql = b[i].ql + 64 * h;
      const uint8_t* qh = b[i].qh + 32 * h;
      const int8_t* sc = b[i].scales + 8 * h;
      float* y = dst + 128 * h;
      for (int l = 0; l < 32; ++l) {
        const int s = l / 16;
        const int q0 = ((ql[l] & 0xf) | ((qh[l] >> 0) & 3) << 4) - 32;
        const int q1 = ((ql[l + 32] & 0xf) | ((qh[l] >> 2) & 3) << 4) - 32;
        const int q2 = ((ql[l] >> 4) | ((qh[l] >> 4) & 3) << 4) - 32;
        const int q3 = ((ql[l + 32] >> 4) | ((qh[l] >> 6) & 3) << 4) - 32;
        y[l] = d * float(sc[s]) * float(q0);
        y[l + 32] = d * float(sc[s + 2]) * float(q1);
        y[l + 64] = d * float(sc[s + 4]) * float(q2);
        y[l + 96] = d * float(sc[s + 6]) * float(q3);
      }
    }
  }
}

void dequant_q8_k(const void* src, float* dst, int64_t n) {
  const auto* b = static_cast<const BlockQ8_K*>(src);
  for (int64_t i = 0; i < n / kQK_K; ++i, dst += kQK_K)
    for (int j = 0; j < kQK_K; ++j) dst[j] = b[i].d * float(b[i].qs[j]);
}

void dequant_iq4_xs(const void* src, float* dst, int64_t n) {
  const auto* b = static_cast<const BlockIQ4_XS*>(src);
  for (int64_t i = 0; i < n / kQK_K; ++i, dst += kQK_K) {
    const float d = fp16_to_f32(b[i].d);
    for (int ib = 0; ib < 8; ++ib) {
      const int ls = ((b[i].scales_l[ib / 2] >> (4 * (ib % 2))) & 0xf) | ((b[i].scales_h >> (2 * ib)) & 3) << 4;
      const float dl = d * float(ls - 32);
      const uint8_t* qs = b[i].qs + 16 * ib;
      for (int j = 0; j < 16; ++j) {
        dst[32 * ib + j] = dl * float(kIq4nlValues[qs[j] & 0xf]);
        dst[32 * ib + 16 + j] = dl * float(kIq4nlValues[qs[j] >> 4]);
      }
    }
  }
}

}  // namespace nurl::ref
