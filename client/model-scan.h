// What `nurllama start` offers as models: the store's models (manifests under <dir>/manifests),
// loose .gguf files in the directory, and Hugging Face checkpoint folders (config.json +
// *.safetensors), which must be converted before they can be served.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nurl::client {

struct FoundModel {
  enum class Kind { store, gguf, checkpoint };
  Kind kind = Kind::gguf;
  std::string name;  // store: "qwen2:latest"; gguf: the absolute path; checkpoint: the folder
  std::string label;  // what the list shows
  uint64_t size = 0;
  std::string family;
};

// Store models first (by name), then .gguf files, then checkpoints; never throws.
std::vector<FoundModel> scan_models(const std::string& dir);

}  // namespace nurl::client
