// The one table of numeric traits (quant.h). Each row points at the scalar reference kernels
// in kernels/cpu/ref; activation types (q8_1, q8_K) have no vec_dot of their own.
#include "engine/quant/quant.h"

#include <array>

#include "kernels/cpu/ref/ref-quants.h"

namespace nurl {

namespace {

void dequant_f32(const void* src, float* dst, int64_t n) {
  const auto* x = static_cast<const float*>(src);
  for (int64_t i = 0; i < n; ++i) dst[i] = x[i];
}
void quantize_f32(const float* src, void* dst, int64_t n) {
  auto* y = static_cast<float*>(dst);
  for (int64_t i = 0; i < n; ++i) y[i] = src[i];
}

using G = GgmlType;
constexpr std::array kTraits = {
    QuantTraits{G::F32, dequant_f32, quantize_f32, ref::vec_dot_f32, G::F32},
    QuantTraits{G::F16, ref::dequant_f16, ref::quantize_f16, ref::vec_dot_f16, G::F16},
    QuantTraits{G::Q4_0, ref::dequant_q4_0, ref::quantize_q4_0, ref::vec_dot_q4_0, G::Q8_0},
    QuantTraits{G::Q4_1, ref::dequant_q4_1, ref::quantize_q4_1, ref::vec_dot_q4_1, G::Q8_1},
    QuantTraits{G::Q5_0, ref::dequant_q5_0, ref::quantize_q5_0, ref::vec_dot_q5_0, G::Q8_0},
    QuantTraits{G::Q5_1, ref::dequant_q5_1, ref::quantize_q5_1, ref::vec_dot_q5_1, G::Q8_1},
    QuantTraits{G::Q8_0, ref::dequant_q8_0, ref::quantize_q8_0, ref::vec_dot_q8_0, G::Q8_0},
    QuantTraits{G::Q8_1, ref::dequant_q8_1, ref::quantize_q8_1, nullptr, G::Q8_1},
    QuantTraits{G::Q2_K, ref::dequant_q2_k, ref::quantize_q2_k, ref::vec_dot_q2_k, G::Q8_K},
    QuantTraits{G::Q3_K, ref::dequant_q3_k, ref::quantize_q3_k, ref::vec_dot_q3_k, G::Q8_K},
    QuantTraits{G::Q4_K, ref::dequant_q4_k, ref::quantize_q4_k, ref::vec_dot_q4_k, G::Q8_K},
    QuantTraits{G::Q5_K, ref::dequant_q5_k, ref::quantize_q5_k, ref::vec_dot_q5_k, G::Q8_K},
    QuantTraits{G::Q6_K, ref::dequant_q6_k, ref::quantize_q6_k, ref::vec_dot_q6_k, G::Q8_K},
    QuantTraits{G::Q8_K, ref::dequant_q8_k, ref::quantize_q8_k, nullptr, G::Q8_K},
    QuantTraits{G::IQ4_NL, ref::dequant_iq4_nl, nullptr, ref::vec_dot_iq4_nl, G::Q8_0},
    QuantTraits{G::IQ4_XS, ref::dequant_iq4_xs, nullptr, ref::vec_dot_iq4_xs, G::Q8_K},
    QuantTraits{G::BF16, ref::dequant_bf16, ref::quantize_bf16, ref::vec_dot_bf16, G::BF16},
};

}  // namespace

const QuantTraits* quant_traits(GgmlType t) {
  for (const auto& q : kTraits)
    if (q.type == t) return &q;
  return nullptr;
}

std::span<const QuantTraits> all_quant_traits() { return kTraits; }

}  // namespace nurl
