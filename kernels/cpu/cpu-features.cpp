#include "kernels/cpu/cpu-features.h"

#include <sched.h>
#include <unistd.h>

namespace nurl {

CpuFeatures detect_cpu_features() {
  CpuFeatures f;
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  f.avx2 = __builtin_cpu_supports("avx2");
  f.fma = __builtin_cpu_supports("fma");
  f.avx512f = __builtin_cpu_supports("avx512f");
  f.avx512bw = __builtin_cpu_supports("avx512bw");
  f.avx512vl = __builtin_cpu_supports("avx512vl");
  f.avx512vnni = __builtin_cpu_supports("avx512vnni");
#if defined(__GNUC__) && __GNUC__ >= 11
  f.avxvnni = __builtin_cpu_supports("avxvnni");
#endif
  unsigned eax, ebx, ecx, edx;
  __asm__ volatile("cpuid" : "=a"(eax), "=b"(ebx), "=c"(ecx), "=d"(edx) : "a"(1), "c"(0));
  f.f16c = (ecx >> 29) & 1;
#endif
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    f.n_cores = CPU_COUNT(&set);
  } else {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    f.n_cores = n > 0 ? int(n) : 1;
  }
  return f;
}

const char* tier_name(CpuTier t) {
  switch (t) {
    case CpuTier::scalar: return "scalar";
    case CpuTier::avx2: return "avx2";
    case CpuTier::avx_vnni: return "avx_vnni";
    case CpuTier::avx512: return "avx512";
  }
  return "?";
}

bool CpuFeatures::has(CpuTier t) const {
  switch (t) {
    case CpuTier::scalar: return true;
    case CpuTier::avx2: return avx2 && fma && f16c;
    case CpuTier::avx_vnni: return has(CpuTier::avx2) && avxvnni;
    case CpuTier::avx512: return has(CpuTier::avx2) && avx512f && avx512bw && avx512vl && avx512vnni;
  }
  return false;
}

CpuFeatures CpuFeatures::capped(CpuTier t) const {
  CpuFeatures f = *this;
  if (t < CpuTier::avx512) f.avx512f = f.avx512bw = f.avx512vl = f.avx512vnni = false;
  if (t < CpuTier::avx_vnni) f.avxvnni = false;
  if (t < CpuTier::avx2) f.avx2 = f.fma = f.f16c = false;
  return f;
}

std::string CpuFeatures::describe() const {
  std::string s;
  auto add = [&](bool on, const char* name) {
    if (!on) return;
    if (!s.empty()) s += ' ';
    s += name;
  };
  add(avx2, "AVX2");
  add(fma, "FMA");
  add(f16c, "F16C");
  add(avx512f, "AVX512F");
  add(avx512bw, "AVX512BW");
  add(avx512vnni, "AVX512_VNNI");
  add(avxvnni, "AVX_VNNI");
  if (s.empty()) s = "scalar";
  return s + ", " + std::to_string(n_cores) + " cores";
}

}  // namespace nurl
