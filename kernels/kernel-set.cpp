// Builds the KernelSet: reference entries for every type first, then SIMD variants replace
// them type by type when the CPU has the features (cpu/x86/avx2-kernels.h).
#include "kernels/kernel-set.h"

#include <cmath>

#include "engine/quant/blocks.h"
#include "kernels/cpu/gemm-generic.h"
#include "kernels/cpu/ref/ref-quants.h"
#include "kernels/cpu/x86/avx2-kernels.h"

namespace nurl {

namespace {

void f32_to_f16_row_ref(const float* x, uint16_t* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = f32_to_fp16(x[i]);
}
void silu_mul_ref(float* g, const float* u, int64_t n) {
  for (int64_t i = 0; i < n; ++i) g[i] = g[i] / (1.0f + std::exp(-g[i])) * u[i];
}
void quantize_f32_copy(const float* x, void* out, int64_t n) {
  auto* y = static_cast<float*>(out);
  for (int64_t i = 0; i < n; ++i) y[i] = x[i];
}

template <VecDotFn Dot>
MatKernels ref_entry(GgmlType act, QuantizeRowFn q) {
  return MatKernels{act, q, Dot, gemm_rows_by_vec_dot<Dot>, 32, "ref", {}};
}

void set(KernelSet& ks, GgmlType t, MatKernels k) {
  ks.mat[static_cast<size_t>(t)] = k;
}

}  // namespace

size_t KernelSet::act_row_bytes(GgmlType weight_type, int64_t n) const {
  const auto un = size_t(n);
  switch (mat[static_cast<size_t>(weight_type)].act_type) {
    case GgmlType::F32:
      return un * 4;
    case GgmlType::F16:
    case GgmlType::BF16:
      return un * 2;
    case GgmlType::Q8_0:
      return un / kQK * sizeof(BlockQ8_0);
    case GgmlType::Q8_1:
      return un / kQK * sizeof(BlockQ8_1);
    case GgmlType::Q8_K:
      return un / kQK_K * sizeof(BlockQ8_K);
    default:
      return 0;
  }
}

KernelSet reference_kernel_set() {
  using G = GgmlType;
  KernelSet ks;
  ks.name = "ref";
  set(ks, G::F32, ref_entry<ref::vec_dot_f32>(G::F32, quantize_f32_copy));
  set(ks, G::F16, ref_entry<ref::vec_dot_f16>(G::F16, ref::quantize_f16));
  set(ks, G::BF16, ref_entry<ref::vec_dot_bf16>(G::BF16, ref::quantize_bf16));
  set(ks, G::Q4_0, ref_entry<ref::vec_dot_q4_0>(G::Q8_0, ref::quantize_q8_0));
  set(ks, G::Q4_1, ref_entry<ref::vec_dot_q4_1>(G::Q8_1, ref::quantize_q8_1));
  set(ks, G::Q5_0, ref_entry<ref::vec_dot_q5_0>(G::Q8_0, ref::quantize_q8_0));
  set(ks, G::Q5_1, ref_entry<ref::vec_dot_q5_1>(G::Q8_1, ref::quantize_q8_1));
  set(ks, G::Q8_0, ref_entry<ref::vec_dot_q8_0>(G::Q8_0, ref::quantize_q8_0));
  set(ks, G::IQ4_NL, ref_entry<ref::vec_dot_iq4_nl>(G::Q8_0, ref::quantize_q8_0));
  set(ks, G::Q2_K, ref_entry<ref::vec_dot_q2_k>(G::Q8_K, ref::quantize_q8_k));
  set(ks, G::Q3_K, ref_entry<ref::vec_dot_q3_k>(G::Q8_K, ref::quantize_q8_k));
  set(ks, G::Q4_K, ref_entry<ref::vec_dot_q4_k>(G::Q8_K, ref::quantize_q8_k));
  set(ks, G::Q5_K, ref_entry<ref::vec_dot_q5_k>(G::Q8_K, ref::quantize_q8_k));
  set(ks, G::Q6_K, ref_entry<ref::vec_dot_q6_k>(G::Q8_K, ref::quantize_q8_k));
  set(ks, G::IQ4_XS, ref_entry<ref::vec_dot_iq4_xs>(G::Q8_K, ref::quantize_q8_k));
  ks.f32_to_f16_row = f32_to_f16_row_ref;
  ks.silu_mul = silu_mul_ref;
  ks.attend = ref::attend;
  return ks;
}

KernelSet select_kernel_set(const CpuFeatures& cpu) {
  KernelSet ks = reference_kernel_set();
  if (cpu.has(CpuTier::avx2)) install_avx2_kernels(ks);
  if (cpu.has(CpuTier::avx512))
    install_avx512_kernels(ks);
  else if (cpu.has(CpuTier::avx_vnni))
    install_avx_vnni_kernels(ks);
  return ks;
}

}  // namespace nurl
