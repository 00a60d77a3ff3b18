// The C interface of libnurllama-cuda.so, the CUDA kernels as a plugin. nurllamad loads it at
// run time (kernels/cuda-plugin.h), so the daemon itself never links the CUDA runtime: the CPU
// package has no CUDA dependency and the nurllama-cuda package adds the plugin beside it.
#pragma once

#define NURL_CUDA_PLUGIN_ABI 1

extern "C" {

struct nurl_cuda_device {
  int index;
  char name[256];
  unsigned long long total_bytes;
  unsigned long long free_bytes;
  int cc_major;
  int cc_minor;
};

// NURL_CUDA_PLUGIN_ABI of the plugin.
int nurl_cuda_abi_version(void);
// Fills up to `max` devices; returns how many there are (0 without a GPU or driver).
int nurl_cuda_list_devices(struct nurl_cuda_device* out, int max);
}
