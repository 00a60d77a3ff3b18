#include <cuda_runtime.h>

#include "kernels/cuda/device.h"

namespace nurl::cuda {

std::vector<DeviceInfo> list_devices() {
  std::vector<DeviceInfo> out;
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no driver" error
    return out;
  }
  for (int i = 0; i < n; ++i) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, i) != cudaSuccess) continue;
    DeviceInfo d;
    d.index = i;
    d.name = p.name;
    d.total_bytes = p.totalGlobalMem;
    d.cc_major = p.major;
    d.cc_minor = p.minor;
    if (cudaSetDevice(i) == cudaSuccess) cudaMemGetInfo(&d.free_bytes, &d.total_bytes);
    out.push_back(d);
  }
  return out;
}

}  // namespace nurl::cuda
