// Scalar attention (the contract is in kernels/attention.h): the truth the SIMD kernels are
// tested against, and the path for any CPU or head size without one. Each query token and head
// on its own: scores over the keys it sees, then the softmax-weighted sum of their values.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "engine/quant/blocks.h"
#include "kernels/attention.h"

namespace nurl::ref {

namespace {

float elem(const uint8_t* row, bool f16, int i) {
  if (f16) {
    f16_bits h;
    std::memcpy(&h, row + 2 * size_t(i), 2);
    return fp16_to_f32(h);
  }
  float f;
  std::memcpy(&f, row + 4 * size_t(i), 4);
  return f;
}

}  // namespace

void attend(const AttnArgs& a) {
  std::vector<float> qr(static_cast<size_t>(a.head_dim)), s(static_cast<size_t>(a.n_kv)),
      acc(static_cast<size_t>(a.head_dim_v));
  for (int t = 0; t < a.n_tok; ++t) {
    const int p0 = attn_first_key(a, t), p1 = attn_end_key(a, t);
    for (int g = 0; g < a.n_q; ++g) {
      const float* q = a.q + t * a.q_tok_stride + g * a.q_stride;
      for (int d = 0; d < a.head_dim; ++d) qr[size_t(d)] = a.f16 ? fp16_to_f32(f32_to_fp16(q[d])) : q[d];
      float mx = -INFINITY;
      for (int p = p0; p < p1; ++p) {
        const uint8_t* kr = a.k + size_t(p) * a.k_stride;
        float dot = 0;
        for (int d = 0; d < a.head_dim; ++d) dot += qr[size_t(d)] * elem(kr, a.f16, d);
        float sc = dot * a.scale;
        if (a.softcap > 0) sc = a.softcap * std::tanh(sc / a.softcap);
        s[size_t(p)] = sc;
        mx = std::max(mx, sc);
      }
      std::fill(acc.begin(), acc.end(), 0.0f);
      float sum = 0;
      for (int p = p0; p < p1; ++p) {
        const float e = std::exp(s[size_t(p)] - mx);
        sum += e;
        const uint8_t* vr = a.v + size_t(p) * a.v_stride;
        for (int d = 0; d < a.head_dim_v; ++d) acc[size_t(d)] += e * elem(vr, a.f16, d);
      }
      float* o = a.out + t * a.out_tok_stride + g * a.out_stride;
      for (int d = 0; d < a.head_dim_v; ++d) o[d] = acc[size_t(d)] / sum;
    }
  }
}

}  // namespace nurl::ref
