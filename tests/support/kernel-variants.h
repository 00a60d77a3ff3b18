// The kernel sets a kernel test runs on this CPU: one per SIMD tier the CPU has (the highest is
// what select_kernel_set picks; lower ones are forced by hiding features, so their kernels stay
// tested on a newer CPU), and on any AVX2 CPU the dot-product tiers' algorithm with vpdpbusd
// emulated exactly. None on a CPU without AVX2, where the selected set is the reference itself.
#pragma once

#include <string>
#include <vector>

#include "kernels/cpu/x86/avx2-kernels.h"
#include "kernels/kernel-set.h"

namespace nurl::test {

struct SetVariant {
  std::string name;
  KernelSet (*make)(CpuTier);
  CpuTier tier;
};

inline KernelSet tier_set(CpuTier t) {
  return select_kernel_set(detect_cpu_features().capped(t));
}
inline KernelSet emulated_dpbusd_set(CpuTier t) {
  KernelSet ks = tier_set(t);
  install_dpbusd_emulated_kernels(ks);
  return ks;
}

// with_emulated: add the emulated-vpdpbusd set (it differs from avx2 in the gemms only).
inline std::vector<SetVariant> set_variants(bool with_emulated = true) {
  const CpuFeatures cpu = detect_cpu_features();
  std::vector<SetVariant> v;
  for (CpuTier t : kCpuTiers)
    if (t != CpuTier::scalar && cpu.has(t)) v.push_back({tier_name(t), tier_set, t});
  if (with_emulated && cpu.has(CpuTier::avx2)) v.push_back({"dpbusd_emulated", emulated_dpbusd_set, CpuTier::avx2});
  return v;
}

// The sets of set_variants(), built.
inline std::vector<KernelSet> fast_sets() {
  std::vector<KernelSet> sets;
  for (const SetVariant& v : set_variants()) sets.push_back(v.make(v.tier));
  return sets;
}

}  // namespace nurl::test
