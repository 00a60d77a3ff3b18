// Hugging Face checkpoint → GGUF conversion (the engine side of `nurllama convert` and of
// /api/create with safetensors files). A checkpoint directory holds config.json, the weights
// (model.safetensors, or shards with model.safetensors.index.json), tokenizer.json and/or
// tokenizer.model, tokenizer_config.json and optionally generation_config.json.
//
// The output is what llama.cpp's converter writes for the same checkpoint: architecture name,
// metadata keys, tensor names, shapes and the per-architecture transforms, so the file runs in
// both nurllama and llama.cpp. Tensors are streamed in row chunks from the mmapped shards into
// gguf::Writer; memory stays one chunk plus metadata whatever the checkpoint's size.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"

namespace nurl::convert {

// Where a conversion or quantisation stands; reported after every chunk and every tensor.
struct Progress {
  std::string stage;          // "reading checkpoint", "tokenizer", "tensors", "finishing"
  std::string tensor;         // the tensor being written (GGUF name)
  int tensor_index = 0;       // 0-based index of that tensor in the output
  int n_tensors = 0;
  uint64_t bytes_done = 0;    // output tensor bytes written so far
  uint64_t bytes_total = 0;   // output tensor bytes in all
};

// A point to resume from: the first `tensors_done` tensors of the output are complete.
// The output's header bytes and the prefix hash prove the partial file is intact.
struct ResumePoint {
  int tensors_done = 0;
  uint64_t file_offset = 0;   // bytes of the partial file that are complete
  std::string prefix_sha256;  // hex sha256 of those bytes
};

struct ConvertOptions {
  std::string out_type = "q8_0";  // f32, f16, bf16, q8_0, or any type/mixture of quant::quantize_types()
  int threads = 1;
  std::optional<ResumePoint> resume;                      // continue an interrupted run when intact
  bool keep_partial_on_cancel = false;                    // keep out + ".partial" for a later resume
  std::function<bool(const Progress&)> on_progress;       // return false to cancel
  std::function<void(const ResumePoint&)> on_checkpoint;  // after each completed tensor (persist it)
};

// What a checkpoint directory is, without converting it (listings, validation before a job).
struct CheckpointInfo {
  std::string architecture;  // GGUF architecture name: "llama", "qwen2", ...
  std::string hf_class;      // config.json "architectures"[0]: "LlamaForCausalLM", ...
  uint64_t bytes = 0;        // weight bytes in the checkpoint (all shards)
  std::string default_name;  // a model name derived from the checkpoint (directory or _name_or_path)
};
Result<CheckpointInfo> inspect_checkpoint(const std::filesystem::path& hf_dir);

// hf_dir → out. Written to out + ".partial" and renamed at the end; nothing is left behind on an
// error or a cancel, except the .partial when keep_partial_on_cancel asks for it (a resume reuses
// it when opts.resume matches its bytes, and starts over otherwise).
Result<void> convert_checkpoint(const std::filesystem::path& hf_dir, const std::filesystem::path& out,
                                const ConvertOptions& opts);

// The output types convert_checkpoint accepts (lowercase; quantisation mixtures included).
std::vector<std::string> convert_types();

}  // namespace nurl::convert
