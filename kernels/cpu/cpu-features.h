// What the CPU we run on can do; read once (cpuid) when a model's KernelSet is chosen.
#pragma once

#include <string>

namespace nurl {

// Kernel tiers, lowest first. A KernelSet is built from the highest tier the CPU has; tests build
// one per tier the CPU can run (capped()), so lower tiers stay tested on a newer CPU.
// avx_vnni: AVX2 with the 256-bit VEX int8 dot products (vpdpbusd); avx512: AVX-512 F/BW/VL with
// AVX512-VNNI (a CPU may have it without avx_vnni).
enum class CpuTier { scalar, avx2, avx_vnni, avx512 };
inline constexpr CpuTier kCpuTiers[] = {CpuTier::scalar, CpuTier::avx2, CpuTier::avx_vnni, CpuTier::avx512};
const char* tier_name(CpuTier t);

struct CpuFeatures {
  bool avx2 = false;
  bool fma = false;
  bool f16c = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512vl = false;
  bool avx512vnni = false;
  bool avxvnni = false;
  int n_cores = 1;  // online logical CPUs usable by this process

  std::string describe() const;
  bool has(CpuTier t) const;
  // The same CPU with every feature above tier t hidden (a test forcing a lower tier).
  CpuFeatures capped(CpuTier t) const;
};

CpuFeatures detect_cpu_features();

}  // namespace nurl
