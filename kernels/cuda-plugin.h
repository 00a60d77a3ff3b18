// Finds and loads the CUDA plugin (libnurllama-cuda.so, kernels/cuda/plugin-abi.h) with dlopen:
// the daemon runs on CPU when it is not installed, and reports the GPUs it sees when it is.
#pragma once

#include <string>
#include <vector>

#include "core/error.h"

namespace nurl {

struct GpuDevice {
  int index = 0;
  std::string name;
  unsigned long long total_bytes = 0;
  unsigned long long free_bytes = 0;
  int cc_major = 0, cc_minor = 0;
};

struct CudaPlugin {
  std::string path;
  std::vector<GpuDevice> devices;
};

// Looks in `dir`, or by default in ../lib/nurllama beside the running executable (the build
// tree and every install prefix). Code::not_found when no plugin is there (a CPU install).
Result<CudaPlugin> load_cuda_plugin(const std::string& dir = "");

// "cuda: 1 device: NVIDIA H200 (140 GiB, compute 9.0)" or "cuda: plugin loaded, no device".
std::string describe(const CudaPlugin& p);

}  // namespace nurl
