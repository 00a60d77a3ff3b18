// AVX2 + FMA + F16C kernels. install_avx2_kernels() replaces the reference entries of a
// KernelSet for the types that have a SIMD variant; call it only when cpuid reports all three
// features (the functions carry target attributes, so the rest of the binary stays baseline x86-64).
#pragma once

#include "kernels/kernel-set.h"

namespace nurl {

void install_avx2_kernels(KernelSet& ks);
// On top of the AVX2 set: the packed-layout gemms through vpdpbusd, with AVX-VNNI
// (CpuTier::avx_vnni, 8 rows a group) or AVX512-VNNI (CpuTier::avx512, 16 rows); call only when
// the CPU has it.
void install_avx_vnni_kernels(KernelSet& ks);
void install_avx512_kernels(KernelSet& ks);
// The AVX-VNNI algorithm with vpdpbusd emulated exactly by AVX2 instructions: slower, for tests
// that check the dot-product tiers (q8_0 and iq4_nl's wide levels included) on a CPU without them.
void install_dpbusd_emulated_kernels(KernelSet& ks);

}  // namespace nurl
