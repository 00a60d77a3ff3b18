// CUDA device discovery. Safe to call on machines without a GPU or driver: it reports none.
#pragma once

#include <string>
#include <vector>

namespace nurl::cuda {

struct DeviceInfo {
  int index = 0;
  std::string name;
  size_t total_bytes = 0;
  size_t free_bytes = 0;
  int cc_major = 0, cc_minor = 0;
};

std::vector<DeviceInfo> list_devices();

}  // namespace nurl::cuda
