// GGUF → GGUF quantisation (llama-quantize's job): every tensor that llama.cpp would quantise is
// re-encoded to the requested type, or to the per-tensor type of a mixture (Q4_K_M, ...) chosen
// as llama-quantize chooses it; metadata is copied and general.file_type set. Streaming: one
// tensor's rows at a time, `threads` worker threads, progress after every tensor.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "engine/convert/convert.h"

namespace nurl::quant {

struct QuantizeOptions {
  std::string type;     // "Q4_K_M", "Q8_0", "F16", ... (case-insensitive; "Q4_K" = Q4_K_M as in llama-quantize)
  bool pure = false;    // every 2-D weight gets the type itself, no mixture (llama-quantize --pure)
  int threads = 1;
  std::string imatrix;  // optional path to an importance matrix (llama.cpp's GGUF imatrix format)
  std::optional<convert::ResumePoint> resume;
  bool keep_partial_on_cancel = false;
  std::function<bool(const convert::Progress&)> on_progress;       // return false to cancel
  std::function<void(const convert::ResumePoint&)> on_checkpoint;  // after each completed tensor
};

// Every accepted type name, as llama-quantize spells them ("Q4_K_M", "F16", ...; aliases aside).
std::vector<std::string> quantize_types();

// in → out (out + ".partial" while writing, renamed at the end; nothing left behind on error).
Result<void> quantize_model(const std::filesystem::path& in, const std::filesystem::path& out,
                            const QuantizeOptions& opts);

}  // namespace nurl::quant
