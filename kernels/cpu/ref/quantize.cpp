// Scalar reference quantisers. The legacy formats use one scale per block from the absolute
// maximum; the k-quants search per sub-block scale/min pairs (weighted least squares over a few
// candidate grids), then quantise the sub-block scales themselves to 6 or 8 bits. The algorithms
// are those of llama.cpp's reference quantisers (no importance matrix), so a re-quantised master
// reproduces llama.cpp's files; every choice below that affects bytes is noted.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/quant/blocks.h"
#include "kernels/cpu/ref/ref-quants.h"

namespace nurl::ref {

namespace {

// Round half to even, like adding 1.5·2^23 in float (what the k-quant code relies on).
inline int nearest_int(float v) { return int(std::nearbyint(v)); }

constexpr float kGroupMaxEps = 1e-15f;

// Value of largest magnitude (with its sign); the first one wins on ties.
float signed_absmax(const float* x, int n, float* amax_out) {
  float amax = 0, mx = 0;
  for (int j = 0; j < n; ++j)
    if (std::fabs(x[j]) > amax) { amax = std::fabs(x[j]); mx = x[j]; }
  *amax_out = amax;
  return mx;
}

void pack_q5_bits(const int* q, uint8_t* qs, uint8_t* qh_bytes) {
  uint32_t qh = 0;
  for (int j = 0; j < kQK / 2; ++j) {
    qs[j] = uint8_t((q[j] & 0xf) | (q[j + 16] & 0xf) << 4);
    qh |= uint32_t((q[j] >> 4) & 1) << j;
    qh |= uint32_t((q[j + 16] >> 4) & 1) << (j + 16);
  }
  for (int k = 0; k < 4; ++k) qh_bytes[k] = uint8_t(qh >> (8 * k));
}

// Asymmetric grid search (q in [0, nmax], x ≈ scale·q − min) with weights w. Returns the scale,
// stores the (positive) min in *min_out and the levels in L. Candidate grids are
// iscale = (nmax + rmin + rdelta·k)/(max − min), k = 0..nstep; each is refit by least squares and
// kept when its weighted error (squared, or absolute with use_mad as q2_K scores it) is lower.
float fit_scale_min(int n, int nmax, const float* x, const float* w, uint8_t* L, float* min_out, float rmin,
                    float rdelta, int nstep, bool use_mad = false) {
  auto cost = [use_mad](float diff) { return use_mad ? std::fabs(diff) : diff * diff; };
  float lo = x[0], hi = x[0], sum_w = w[0], sum_x = w[0] * x[0];
  for (int i = 1; i < n; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
    sum_w += w[i];
    sum_x += w[i] * x[i];
  }
  if (lo > 0) lo = 0;
  if (hi == lo) {
    std::fill(L, L + n, 0);
    *min_out = -lo;
    return 0;
  }
  float iscale = float(nmax) / (hi - lo);
  float scale = 1 / iscale;
  float best = 0;
  for (int i = 0; i < n; ++i) {
    L[i] = uint8_t(std::clamp(nearest_int(iscale * (x[i] - lo)), 0, nmax));
    best += w[i] * cost(scale * L[i] + lo - x[i]);
  }
  uint8_t Laux[32];
  for (int k = 0; k <= nstep; ++k) {
    iscale = (rmin + rdelta * float(k) + float(nmax)) / (hi - lo);
    float sum_l = 0, sum_l2 = 0, sum_xl = 0;
    for (int i = 0; i < n; ++i) {
      const int l = std::clamp(nearest_int(iscale * (x[i] - lo)), 0, nmax);
      Laux[i] = uint8_t(l);
      sum_l += w[i] * float(l);
      sum_l2 += w[i] * float(l) * float(l);
      sum_xl += w[i] * float(l) * x[i];
    }
    const float D = sum_w * sum_l2 - sum_l * sum_l;
    if (D > 0) {
      float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
      float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
      if (this_min > 0) {
        this_min = 0;
        this_scale = sum_xl / sum_l2;
      }
      float err = 0;
      for (int i = 0; i < n; ++i) err += w[i] * cost(this_scale * Laux[i] + this_min - x[i]);
      if (err < best) {
        std::memcpy(L, Laux, size_t(n));
        best = err;
        scale = this_scale;
        lo = this_min;
      }
    }
  }
  *min_out = -lo;
  return scale;
}

// Symmetric search (q in [−nmax, nmax−1], x ≈ scale·q) weighted by x², trying iscale = −(nmax +
// 0.1k)/max for k = −9..9. Returns the scale; L gets the levels + nmax of the best grid.
float fit_scale_sym(int n, int nmax, const float* x, uint8_t* L) {
  float amax;
  const float mx = signed_absmax(x, n, &amax);
  if (amax < kGroupMaxEps) {
    std::fill(L, L + n, 0);
    return 0;
  }
  float iscale = -float(nmax) / mx;
  float sumlx = 0, suml2 = 0;
  for (int i = 0; i < n; ++i) {
    const int l = std::clamp(nearest_int(iscale * x[i]), -nmax, nmax - 1);
    L[i] = uint8_t(l + nmax);
    const float w = x[i] * x[i];
    sumlx += w * x[i] * float(l);
    suml2 += w * float(l) * float(l);
  }
  float scale = suml2 ? sumlx / suml2 : 0.0f;
  float best = scale * sumlx;
  for (int k = -9; k <= 9; ++k) {
    if (k == 0) continue;
    iscale = -(float(nmax) + 0.1f * float(k)) / mx;
    sumlx = suml2 = 0;
    for (int i = 0; i < n; ++i) {
      const int l = std::clamp(nearest_int(iscale * x[i]), -nmax, nmax - 1);
      const float w = x[i] * x[i];
      sumlx += w * x[i] * float(l);
      suml2 += w * float(l) * float(l);
    }
    if (suml2 > 0 && sumlx * sumlx > best * suml2) {
      for (int i = 0; i < n; ++i) L[i] = uint8_t(std::clamp(nearest_int(iscale * x[i]), -nmax, nmax - 1) + nmax);
      scale = sumlx / suml2;
      best = scale * sumlx;
    }
  }
  return scale;
}

// Symmetric 3-bit search for q3_K (q in [−nmax, nmax−1], x ≈ scale·q): start from the grid of
// the signed extreme, then up to five passes that move single levels to the value the rest of the
// fit asks for, keeping a move when it raises the x²-weighted correlation. L gets levels + nmax.
float fit_scale_q3(int n, int nmax, const float* x, int8_t* L) {
  float amax;
  const float mx = signed_absmax(x, n, &amax);
  if (amax < kGroupMaxEps) {
    std::fill(L, L + n, int8_t(0));
    return 0;
  }
  const float iscale = -float(nmax) / mx;
  float sumlx = 0, suml2 = 0;
  for (int i = 0; i < n; ++i) {
    L[i] = int8_t(std::clamp(nearest_int(iscale * x[i]), -nmax, nmax - 1));
    const float w = x[i] * x[i];
    sumlx += w * x[i] * L[i];
    suml2 += w * L[i] * L[i];
  }
  for (int pass = 0; pass < 5; ++pass) {
    int changed = 0;
    for (int i = 0; i < n; ++i) {
      const float w = x[i] * x[i];
      float slx = sumlx - w * x[i] * L[i];
      if (slx <= 0) continue;
      float sl2 = suml2 - w * L[i] * L[i];
      const int nl = std::clamp(nearest_int(x[i] * sl2 / slx), -nmax, nmax - 1);
      if (nl == L[i]) continue;
      slx += w * x[i] * nl;
      sl2 += w * nl * nl;
      if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
        L[i] = int8_t(nl);
        sumlx = slx;
        suml2 = sl2;
        ++changed;
      }
    }
    if (!changed) break;
  }
  for (int i = 0; i < n; ++i) L[i] = int8_t(L[i] + nmax);
  return sumlx / suml2;
}

// Packs 2-bit levels as q2_K/q3_K store them: byte 32h + l holds elements 128h + l + 32k, k = 0..3.
void pack_2bit(const uint8_t* L, uint8_t* qs) {
  for (int h = 0; h < 2; ++h)
    for (int l = 0; l < 32; ++l) {
      const uint8_t* Lh = L + 128 * h;
      qs[32 * h + l] = uint8_t(Lh[l] | Lh[l + 32] << 2 | Lh[l + 64] << 4 | Lh[l + 96] << 6);
    }
}

// q4_K / q5_K share everything but the level count and search parameters.
void quantize_kx(const float* x, int nmax, float rmin, float rdelta, int nstep, uint8_t* scales_out,
                 f16_bits* d_out, f16_bits* dmin_out, uint8_t* L) {
  float scales[8], mins[8], w[32];
  float max_scale = 0, max_min = 0;
  for (int j = 0; j < 8; ++j) {
    const float* xs = x + 32 * j;
    float sum_x2 = 0;
    for (int l = 0; l < 32; ++l) sum_x2 += xs[l] * xs[l];
    const float av_x = std::sqrt(sum_x2 / 32);
    for (int l = 0; l < 32; ++l) w[l] = av_x + std::fabs(xs[l]);
    scales[j] = fit_scale_min(32, nmax, xs, w, L + 32 * j, &mins[j], rmin, rdelta, nstep);
    max_scale = std::max(max_scale, scales[j]);
    max_min = std::max(max_min, mins[j]);
  }
  const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
  const float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
  std::memset(scales_out, 0, 12);
  for (int j = 0; j < 8; ++j) {
    const int ls = std::min(63, nearest_int(inv_scale * scales[j]));
    const int lm = std::min(63, nearest_int(inv_min * mins[j]));
    if (j < 4) {
      scales_out[j] = uint8_t(ls);
      scales_out[j + 4] = uint8_t(lm);
    } else {
      scales_out[j + 4] = uint8_t((ls & 0xf) | (lm & 0xf) << 4);
      scales_out[j - 4] |= uint8_t((ls >> 4) << 6);
      scales_out[j] |= uint8_t((lm >> 4) << 6);
    }
  }
  *d_out = f32_to_fp16(max_scale / 63.f);
  *dmin_out = f32_to_fp16(max_min / 63.f);
  // Re-quantise with the scales as stored (rounded), so levels match what dequant will see.
  for (int j = 0; j < 8; ++j) {
    uint8_t sc, m;
    scale_min_k4(j, scales_out, &sc, &m);
    const float d = fp16_to_f32(*d_out) * float(sc);
    if (!d) continue;
    const float dm = fp16_to_f32(*dmin_out) * float(m);
    for (int l = 0; l < 32; ++l) L[32 * j + l] = uint8_t(std::clamp(nearest_int((x[32 * j + l] + dm) / d), 0, nmax));
  }
}

}  // namespace

void quantize_f16(const float* src, void* dst, int64_t n) {
  auto* y = static_cast<f16_bits*>(dst);
  for (int64_t i = 0; i < n; ++i) y[i] = f32_to_fp16(src[i]);
}

void quantize_bf16(const float* src, void* dst, int64_t n) {
  auto* y = static_cast<bf16_bits*>(dst);
  for (int64_t i = 0; i < n; ++i) y[i] = f32_to_bf16(src[i]);
}

// q4_0: d = max/−8 where max is the signed value of largest magnitude, so it maps to level 0.
void quantize_q4_0(const float* src, void* dst, int64_t n) {
  auto* y = static_cast<BlockQ4_0*>(dst);
  for (int64_t i = 0; i < n / kQK; ++i, src += kQK) {
    float amax;
    const float mx = signed_absmax(src, kQK, &amax);
    const float d = mx / -8, id = d ? 1.0f / d : 0.0f;
    y[i].d = f32_to_fp16(d);
    for (int j = 0; j < kQK / 2; ++j) {
      const int a = std::min(15, int(int8_t(src[j] * id + 8.5f)));
      const int b = std::min(15, int(int8_t(src[j + 16] * id + 8.5f)));
      y[i].qs[j] = uint8_t(a | b << 4);
    }
  }
}

void quantize_q4_1(const float* src, void* dst, int64_t n) {
  auto* y = static_cast<BlockQ4_1*>(dst);
  for (int64_t i = 0; i < n / kQK; ++i, src += kQK) {
    float lo = src[0], hi = src[0];
    for (int j = 1; j < kQK; ++j) lo = std::min(lo, src[j]), hi = std::max(hi, src[j]);
    const float d = (hi - lo) / 15, id = d ? 1.0f / d : 0.0f;
    y[i].d = f32_to_fp16(d);
    y[i].m = f32_to_fp16(lo);
    for (int j = 0; j < kQK / 2; ++j) {
      const int a = std::min(15, int(int8_t((src[j] - lo) * id + 0.5f)));
      const int b = std::min(15, int(int8_t((src[j + 16] - lo) * id + 0.5f)));
      y[i].qs[j] = uint8_t(a | b << 4);
    }
  }
}

void quantize_q5_0(const float* src, void* dst, int64_t n) {
  auto* y = static_cast<BlockQ5_0*>(dst);
  for (int64_t i = 0; i < n / kQK; ++i, src += kQK) {
    float amax;
    const float mx = signed_absmax(src, kQK, &amax);
    const float d = mx / -16, id = d ? 1.0f / d : 0.0f;
    y[i].d = f32_to_fp16(d);
    int q[kQK];
    for (int j = 0; j < kQK; ++j) q[j] = std::min(31, int(int8_t(src[j] * id + 16.5f)));
    pack_q5_bits(q, y[i].qs, y[i].qh);
  }
}

void quantize_q5_1(const float* src, void* dst, int64_t n) {
  auto* y = static_cast<BlockQ5_1*>(dst);
  for (int64_t i = 0; i < n / kQK; ++i, src += kQK) {
    float lo = src[0], hi = src[0];
    for (int j = 1; j < kQK; ++j) lo = std::min(lo, src[j]), hi = std::max(hi, src[j]);
    const float d = (hi - lo) / 31, id = d ? 1.0f / d : 0.0f;
    y[i].d = f32_to_fp16(d);
    y[i].m = f32_to_fp16(lo);
    int q[kQK];
    for (int j = 0; j < kQK; ++j) q[j] = int(uint8_t((src[j] - lo) * id + 0.5f)) & 31;
    pack_q5_bits(q, y[i].qs, y[i].qh);
  }
}

void quantize_q8_0(const float* src, void* dst, int64_t n) {
  auto* y = static_cast<BlockQ8_0*>(dst);
  for (int64_t i = 0; i < n / kQK; ++i, src += kQK) {
    float amax = 0;
    for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(src[j]));
    const float d = amax / 127, id = d ? 1.0f / d : 0.0f;
    y[i].d = f32_to_fp16(d);
    for (int j = 0; j < kQK; ++j) y[i].qs[j] = int8_t(std::round(src[j] * id));
  }
}

void quantize_q8_1(const float* src, void* dst, int64_t n) {
  auto* y = static_cast<BlockQ8_1*>(dst);
  for (int64_t i = 0; i < n / kQK; ++i, src += kQK) {
    float amax = 0;
    for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(src[j]));
    const float d = amax / 127, id = d ? 1.0f / d : 0.0f;
    y[i].d = f32_to_fp16(d);
    int sum = 0;
    for (int j = 0; j < kQK; ++j) {
      y[i].qs[j] = int8_t(std::round(src[j] * id));
      sum += y[i].qs[j];
    }
    y[i].s = f32_to_fp16(float(sum) * d);
  }
}

// q2_K: 16 sub-blocks of 16 with a (scale, min) pair each from the asymmetric search scored by
// absolute error (weights |x|), both quantised to 4 bits against the block's largest.
void quantize_q2_k(const float* src, void* dst, int64_t n) {
  auto* y = static_cast<BlockQ2_K*>(dst);
  for (int64_t i = 0; i < n / kQK_K; ++i, src += kQK_K) {
    uint8_t L[kQK_K];
    float scales[16], mins[16], w[16];
    float max_scale = 0, max_min = 0;
    for (int j = 0; j < 16; ++j) {
      for (int l = 0; l < 16; ++l) w[l] = std::fabs(src[16 * j + l]);
      scales[j] = fit_scale_min(16, 3, src + 16 * j, w, L + 16 * j, &mins[j], -0.5f, 0.1f, 15, true);
      max_scale = std::max(max_scale, scales[j]);
      max_min = std::max(max_min, mins[j]);
    }
    if (max_scale > 0) {
      const float iscale = 15.f / max_scale;
      for (int j = 0; j < 16; ++j) y[i].scales[j] = uint8_t(nearest_int(iscale * scales[j]));
      y[i].d = f32_to_fp16(max_scale / 15.f);
    } else {
      std::memset(y[i].scales, 0, sizeof y[i].scales);
      y[i].d = f32_to_fp16(0.f);
    }
    if (max_min > 0) {
      const float iscale = 15.f / max_min;
      for (int j = 0; j < 16; ++j) y[i].scales[j] |= uint8_t(nearest_int(iscale * mins[j]) << 4);
      y[i].dmin = f32_to_fp16(max_min / 15.f);
    } else {
      y[i].dmin = f32_to_fp16(0.f);
    }
    for (int j = 0; j < 16; ++j) {
      const float d = fp16_to_f32(y[i].d) * float(y[i].scales[j] & 0xf);
      if (!d) continue;
      const float dm = fp16_to_f32(y[i].dmin) * float(y[i].scales[j] >> 4);
      for (int l = 0; l < 16; ++l) L[16 * j + l] = uint8_t(std::clamp(nearest_int((src[16 * j + l] + dm) / d), 0, 3));
    }
    pack_2bit(L, y[i].qs);
  }
}

// q3_K: 16 sub-blocks of 16, symmetric 3-bit levels, 6-bit signed sub-block scales against the
// block's signed largest (which maps to −32). The third bit of each level goes to hmask.
void quantize_q3_k(const float* src, void* dst, int64_t n) {
  auto* y = static_cast<BlockQ3_K*>(dst);
  for (int64_t i = 0; i < n / kQK_K; ++i, src += kQK_K) {
    int8_t L[kQK_K];
    float scales[16];
    float max_scale = 0, amax = 0;
    for (int j = 0; j < 16; ++j) {
      scales[j] = fit_scale_q3(16, 4, src + 16 * j, L + 16 * j);
      if (std::fabs(scales[j]) > amax) {
        amax = std::fabs(scales[j]);
        max_scale = scales[j];
      }
    }
    std::memset(y[i].scales, 0, sizeof y[i].scales);
    if (max_scale != 0) {
      const float iscale = -32.f / max_scale;
      for (int j = 0; j < 16; ++j) {
        const int l = std::clamp(int(int8_t(nearest_int(iscale * scales[j]))), -32, 31) + 32;
        if (j < 8) {
          y[i].scales[j] = uint8_t(l & 0xf);
        } else {
          y[i].scales[j - 8] |= uint8_t((l & 0xf) << 4);
        }
        y[i].scales[8 + j % 4] |= uint8_t((l >> 4) << (2 * (j / 4)));
      }
      y[i].d = f32_to_fp16(1 / iscale);
    } else {
      y[i].d = f32_to_fp16(0.f);
    }
    for (int j = 0; j < 16; ++j) {
      const float d = fp16_to_f32(y[i].d) * float(q3k_scale(y[i].scales, j));
      if (!d) continue;
      for (int l = 0; l < 16; ++l) L[16 * j + l] = int8_t(std::clamp(nearest_int(src[16 * j + l] / d), -4, 3) + 4);
    }
    std::memset(y[i].hmask, 0, sizeof y[i].hmask);
    uint8_t U[kQK_K];
    for (int j = 0; j < kQK_K; ++j) {
      int l = L[j];
      if (l > 3) {
        y[i].hmask[j % 32] |= uint8_t(1 << (j / 32));
        l -= 4;
      }
      U[j] = uint8_t(l);
    }
    pack_2bit(U, y[i].qs);
  }
}

void quantize_q4_k(const float* src, void* dst, int64_t n) {
  auto* y = static_cast<BlockQ4_K*>(dst);
  for (int64_t i = 0; i < n / kQK_K; ++i, src += kQK_K) {
    uint8_t L[kQK_K];
    quantize_kx(src, 15, -1.0f, 0.1f, 20, y[i].scales, &y[i].d, &y[i].dmin, L);
    for (int c = 0; c < 4; ++c)
      for (int l = 0; l < 32; ++l) y[i].qs[32 * c + l] = uint8_t(L[64 * c + l] | L[64 * c + 32 + l] << 4);
  }
}

void quantize_q5_k(const float* src, void* dst, int64_t n) {
  auto* y = static_cast<BlockQ5_K*>(dst);
  for (int64_t i = 0; i < n / kQK_K; ++i, src += kQK_K) {
    uint8_t L[kQK_K];
    quantize_kx(src, 31, -0.5f, 0.1f, 15, y[i].scales, &y[i].d, &y[i].dmin, L);
    std::memset(y[i].qh, 0, sizeof y[i].qh);
    for (int c = 0; c < 4; ++c)
      for (int l = 0; l < 32; ++l) {
        const int a = L[64 * c + l], b = L[64 * c + 32 + l];
        y[i].qs[32 * c + l] = uint8_t((a & 0xf) | (b & 0xf) << 4);
        y[i].qh[l] |= uint8_t((a >> 4) << (2 * c) | (b >> 4) << (2 * c + 1));
      }
  }
}

void quantize_q6_k(const float* src, void* dst, int64_t n) {
  auto* y = static_cast<BlockQ6_K*>(dst);
  for (int64_t i = 0; i < n / kQK_K; ++i, src += kQK_K) {
    float scales[16];
    float max_scale = 0, max_abs = 0;
    uint8_t L[kQK_K];  // a sub-block whose stored scale rounds to 0 keeps the search's levels
    for (int ib = 0; ib < 16; ++ib) {
      scales[ib] = fit_scale_sym(16, 32, src + 16 * ib, L + 16 * ib);
      if (std::fabs(scales[ib]) > max_abs) {
        max_abs = std::fabs(scales[ib]);
        max_scale = scales[ib];
      }
    }
    if (max_abs < kGroupMaxEps) {
      std::memset(&y[i], 0, sizeof y[i]);
      continue;
    }
    const float iscale = -128.f / max_scale;
    y[i].d = f32_to_fp16(1 / iscale);
    for (int ib = 0; ib < 16; ++ib) y[i].scales[ib] = int8_t(std::min(127, nearest_int(iscale * scales[ib])));
    for (int j = 0; j < 16; ++j) {
      const float d = fp16_to_f32(y[i].d) * float(y[i].scales[j]);
      if (!d) continue;
      for (int l = 0; l < 16; ++l) L[16 * j + l] = uint8_t(std::clamp(nearest_int(src[16 * j + l] / d), -32, 31) + 32);
    }
    for (int h = 0; h < 2; ++h) {
      uint8_t* ql = y[i].ql + 64 * h;
      uint8_t* qh = y[i].qh + 32 * h;
      const uint8_t* Lh = L + 128 * h;
      for (int l = 0; l < 32; ++l) {
        ql[l] = uint8_t((Lh[l] & 0xf) | (Lh[l + 64] & 0xf) << 4);
        ql[l + 32] = uint8_t((Lh[l + 32] & 0xf) | (Lh[l + 96] & 0xf) << 4);
        qh[l] = uint8_t((Lh[l] >> 4) | (Lh[l + 32] >> 4) << 2 | (Lh[l + 64] >> 4) << 4 | (Lh[l + 96] >> 4) << 6);
      }
    }
  }
}

// q8_K: scale chosen so the signed extreme maps to −127 (not ±127 by magnitude), as llama.cpp.
void quantize_q8_k(const float* src, void* dst, int64_t n) {
  auto* y = static_cast<BlockQ8_K*>(dst);
  for (int64_t i = 0; i < n / kQK_K; ++i, src += kQK_K) {
    float amax;
    const float mx = signed_absmax(src, kQK_K, &amax);
    if (!amax) {
      std::memset(&y[i], 0, sizeof y[i]);
      continue;
    }
    const float iscale = -127.f / mx;
    for (int j = 0; j < kQK_K; ++j) y[i].qs[j] = int8_t(std::min(127, nearest_int(iscale * src[j])));
    for (int k = 0; k < kQK_K / 16; ++k) {
      int s = 0;
      for (int l = 0; l < 16; ++l) s += y[i].qs[16 * k + l];
      y[i].bsums[k] = int16_t(s);
    }
    y[i].d = 1 / iscale;
  }
}

}  // namespace nurl::ref
