#include "kernels/cuda-plugin.h"

#include <dlfcn.h>
#include <unistd.h>

#include <filesystem>

#include "kernels/cuda/plugin-abi.h"

namespace nurl {

namespace {

std::string default_dir() {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  return (self.parent_path() / ".." / "lib" / "nurllama").lexically_normal().string();
}

}  // namespace

Result<CudaPlugin> load_cuda_plugin(const std::string& dir) {
  const std::string where = dir.empty() ? default_dir() : dir;
  const std::string path = where + "/libnurllama-cuda.so";
  std::error_code ec;
  if (where.empty() || !std::filesystem::exists(path, ec))
    return Error(Code::not_found, "no CUDA plugin at " + path + " (running on CPU)");
  // Kept loaded for the life of the process (the CUDA runtime does not support unloading).
  void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) return Error(Code::io, "cannot load the CUDA plugin " + path + ": " + ::dlerror());
  auto abi = reinterpret_cast<int (*)()>(::dlsym(h, "nurl_cuda_abi_version"));
  auto list = reinterpret_cast<int (*)(nurl_cuda_device*, int)>(::dlsym(h, "nurl_cuda_list_devices"));
  if (!abi || !list) return Error(Code::corrupt, path + " is not a nurllama CUDA plugin");
  if (abi() != NURL_CUDA_PLUGIN_ABI)
    return Error(Code::unsupported, path + " has plugin interface " + std::to_string(abi()) + ", this daemon needs " +
                                        std::to_string(NURL_CUDA_PLUGIN_ABI) + " (install matching packages)");
  CudaPlugin p;
  p.path = path;
  nurl_cuda_device devs[16];
  const int n = list(devs, 16);
  for (int i = 0; i < n && i < 16; ++i)
    p.devices.push_back({devs[i].index, devs[i].name, devs[i].total_bytes, devs[i].free_bytes, devs[i].cc_major,
                         devs[i].cc_minor});
  return p;
}

std::string describe(const CudaPlugin& p) {
  if (p.devices.empty()) return "cuda: plugin " + p.path + " loaded, no device found";
  std::string s = "cuda: " + std::to_string(p.devices.size()) + (p.devices.size() == 1 ? " device:" : " devices:");
  for (const auto& d : p.devices)
    s += " [" + std::to_string(d.index) + "] " + d.name + " (" + std::to_string(d.total_bytes >> 30) + " GiB, compute " +
         std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor) + ")";
  return s;
}

}  // namespace nurl
