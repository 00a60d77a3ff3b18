// AVX2 + FMA + F16C kernels. install_avx2_kernels() replaces the reference entries of a
// KernelSet for the types that have a SIMD variant; call it only when cpuid reports all three
// features (the functions carry target attributes, so the rest of the binary stays baseline x86-64).
#pragma once

#include "kernels/kernel-set.h"

namespace nurl {

void install_avx2_kernels(KernelSet& ks);

}  // namespace nurl
