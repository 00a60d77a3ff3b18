// What the CPU we run on can do; read once (cpuid) when a model's KernelSet is chosen.
#pragma once

#include <string>

namespace nurl {

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
};

CpuFeatures detect_cpu_features();

}  // namespace nurl
