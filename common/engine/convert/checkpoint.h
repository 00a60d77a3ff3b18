// A Hugging Face checkpoint directory: config.json, and the weights in model.safetensors or in
// shards listed by model.safetensors.index.json ("weight_map": tensor → shard file). Every shard
// is mapped and its header checked when the checkpoint is opened; a tensor name resolves to its
// shard and byte range. Shard names from the index must be plain file names in the directory.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/error.h"
#include "engine/convert/hf-json.h"
#include "engine/convert/safetensors.h"

namespace nurl::convert {

struct TensorRef {
  const StFile* file = nullptr;
  const StTensor* tensor = nullptr;
};

class Checkpoint {
 public:
  static Result<Checkpoint> open(const std::filesystem::path& dir);

  const std::filesystem::path& dir() const { return dir_; }
  const JsonDoc& config() const { return config_; }
  uint64_t weight_bytes() const { return weight_bytes_; }
  const std::vector<std::shared_ptr<const StFile>>& shards() const { return shards_; }

  // nullptr-file ref when absent.
  TensorRef find(std::string_view name) const;
  bool has(std::string_view name) const { return find(name).tensor != nullptr; }
  // Every tensor name, in shard order then header order.
  std::vector<std::string> names() const;

 private:
  std::filesystem::path dir_;
  JsonDoc config_;
  std::vector<std::shared_ptr<const StFile>> shards_;
  std::unordered_map<std::string, TensorRef> tensors_;
  uint64_t weight_bytes_ = 0;
};

}  // namespace nurl::convert
