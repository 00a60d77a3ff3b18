// Wires the AVX2 kernels (avx2-*.cpp) into a KernelSet. Types without an AVX2 dot product keep
// the reference one; every entry gets the AVX2 activation quantiser of its format.
#include "kernels/cpu/x86/avx2-kernels.h"

#include "kernels/cpu/gemm-generic.h"
#include "kernels/cpu/x86/avx2-common.h"

namespace nurl {

#if defined(__x86_64__)

namespace {

template <VecDotFn Dot>
MatKernels avx2_entry(GgmlType act, QuantizeRowFn q) {
  return MatKernels{act, q, Dot, gemm_rows_by_vec_dot<Dot>, 32, "avx2", {}};
}

constexpr int kAnyTokens = 1 << 20;  // the 32-element gemms chunk tokens themselves

void set(KernelSet& ks, GgmlType t, MatKernels k) {
  ks.mat[static_cast<size_t>(t)] = k;
}

// Weight type t with its token-tiled gemm (avx2-gemm.cpp).
template <VecDotFn Dot>
void set_tiled(KernelSet& ks, GgmlType t, GgmlType act, QuantizeRowFn q, int max_tokens = 32) {
  set(ks, t, MatKernels{act, q, Dot, avx2::tiled_gemm(t), max_tokens, "avx2", {}});
}

// The packed-layout gemm of every type `pick` has one (replacing a lower tier's).
void install_packed(KernelSet& ks, PackedGemm (*pick)(GgmlType)) {
  for (size_t id = 0; id < kNumTypeIds; ++id)
    if (ks.mat[id].gemm_rows) ks.mat[id].packed = pick(static_cast<GgmlType>(id));
}

}  // namespace

void install_avx2_kernels(KernelSet& ks) {
  using G = GgmlType;
  ks.name = "avx2";
  set(ks, G::F16, avx2_entry<avx2::vec_dot_f16>(G::F16, avx2::quantize_f16));
  set(ks, G::BF16, avx2_entry<avx2::vec_dot_bf16>(G::BF16, avx2::quantize_bf16));
  set_tiled<avx2::vec_dot_q8_0>(ks, G::Q8_0, G::Q8_0, avx2::quantize_q8_0, kAnyTokens);
  set_tiled<avx2::vec_dot_q4_0>(ks, G::Q4_0, G::Q8_0, avx2::quantize_q8_0, kAnyTokens);
  set_tiled<avx2::vec_dot_q4_1>(ks, G::Q4_1, G::Q8_1, avx2::quantize_q8_1, kAnyTokens);
  set_tiled<avx2::vec_dot_q5_0>(ks, G::Q5_0, G::Q8_0, avx2::quantize_q8_0, kAnyTokens);
  set_tiled<avx2::vec_dot_q5_1>(ks, G::Q5_1, G::Q8_1, avx2::quantize_q8_1, kAnyTokens);
  set_tiled<avx2::vec_dot_iq4_nl>(ks, G::IQ4_NL, G::Q8_0, avx2::quantize_q8_0, kAnyTokens);
  set(ks, G::Q2_K, avx2_entry<avx2::vec_dot_q2_k>(G::Q8_K, avx2::quantize_q8_k));
  set(ks, G::Q3_K, avx2_entry<avx2::vec_dot_q3_k>(G::Q8_K, avx2::quantize_q8_k));
  set_tiled<avx2::vec_dot_q4_k>(ks, G::Q4_K, G::Q8_K, avx2::quantize_q8_k);
  set_tiled<avx2::vec_dot_q5_k>(ks, G::Q5_K, G::Q8_K, avx2::quantize_q8_k);
  set_tiled<avx2::vec_dot_q6_k>(ks, G::Q6_K, G::Q8_K, avx2::quantize_q8_k);
  set(ks, G::IQ4_XS, avx2_entry<avx2::vec_dot_iq4_xs>(G::Q8_K, avx2::quantize_q8_k));
  ks.f32_to_f16_row = avx2::f32_to_f16_row;
  ks.silu_mul = avx2::silu_mul;
  ks.attend = avx2::attend;
  install_packed(ks, avx2::packed_gemm_avx2);
}

// The dot-product tiers replace the packed-layout gemms (the file-layout gemm_rows stay AVX2's:
// the model multiplies packed weights; the file's layout is left for --no-pack comparisons).
void install_avx_vnni_kernels(KernelSet& ks) {
  ks.name = "avx_vnni";
  install_packed(ks, avx2::packed_gemm_avx_vnni);
}
void install_avx512_kernels(KernelSet& ks) {
  ks.name = "avx512";
  install_packed(ks, avx2::packed_gemm_avx512);
}
void install_dpbusd_emulated_kernels(KernelSet& ks) {
  ks.name = "dpbusd_emulated";
  install_packed(ks, avx2::packed_gemm_dpbusd_emulated);
}

#else  // not x86-64: nothing to install

void install_avx2_kernels(KernelSet&) {}
void install_avx_vnni_kernels(KernelSet&) {}
void install_avx512_kernels(KernelSet&) {}
void install_dpbusd_emulated_kernels(KernelSet&) {}

#endif

}  // namespace nurl
