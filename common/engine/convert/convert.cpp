#include "engine/convert/convert.h"

namespace nurl::convert {

Result<CheckpointInfo> inspect_checkpoint(const std::filesystem::path& hf_dir) {
  return Error(Code::unsupported, "inspecting " + hf_dir.string() + ": checkpoint conversion is not built yet");
}

Result<void> convert_checkpoint(const std::filesystem::path& hf_dir, const std::filesystem::path&,
                                const ConvertOptions&) {
  return Error(Code::unsupported, "converting " + hf_dir.string() + ": checkpoint conversion is not built yet");
}

std::vector<std::string> convert_types() { return {}; }

}  // namespace nurl::convert
