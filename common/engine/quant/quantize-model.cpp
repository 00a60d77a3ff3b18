#include "engine/quant/quantize-model.h"

namespace nurl::quant {

std::vector<std::string> quantize_types() { return {}; }

Result<void> quantize_model(const std::filesystem::path& in, const std::filesystem::path&, const QuantizeOptions&) {
  return Error(Code::unsupported, "quantising " + in.string() + ": model quantisation is not built yet");
}

}  // namespace nurl::quant
