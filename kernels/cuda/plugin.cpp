// libnurllama-cuda.so: the plugin's C entry points over the CUDA code (plugin-abi.h).
#include "kernels/cuda/plugin-abi.h"

#include <cstring>

#include "kernels/cuda/device.h"

extern "C" {

__attribute__((visibility("default"))) int nurl_cuda_abi_version(void) { return NURL_CUDA_PLUGIN_ABI; }

__attribute__((visibility("default"))) int nurl_cuda_list_devices(struct nurl_cuda_device* out, int max) {
  const auto devices = nurl::cuda::list_devices();
  const int n = static_cast<int>(devices.size());
  for (int i = 0; i < n && i < max; ++i) {
    nurl_cuda_device& d = out[i];
    std::memset(&d, 0, sizeof d);
    d.index = devices[i].index;
    std::strncpy(d.name, devices[i].name.c_str(), sizeof d.name - 1);
    d.total_bytes = devices[i].total_bytes;
    d.free_bytes = devices[i].free_bytes;
    d.cc_major = devices[i].cc_major;
    d.cc_minor = devices[i].cc_minor;
  }
  return n;
}
}
