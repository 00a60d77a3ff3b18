// Model: one GGUF file opened for inference. The file stays mmapped and the weights are read in
// place, still quantised. load() picks the architecture from general.architecture through the
// registry (arch/registry.h), fills the TransformerConfig from metadata and binds every tensor,
// checking presence, shape and type; any problem is an Error naming the key or tensor, so the
// forward pass (Context::decode) has no error paths. A Model is immutable and shared by contexts.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/error.h"
#include "engine/arch/config.h"
#include "engine/gguf/gguf.h"
#include "kernels/cpu/cpu-features.h"
#include "kernels/kernel-set.h"

namespace nurl {

struct LoadOptions {
  // Touch every weight page once at load (so the first request does not pay the page faults).
  bool prefault = false;
  // Repack the matrices into the interleaved layouts of this CPU's kernels, where they have one
  // (kernels/cpu/packed-layout.h); the file's pages of those matrices leave the resident set.
  bool pack_weights = true;
  // The highest kernel tier to use (a lower one to compare tiers on one machine).
  CpuTier max_tier = CpuTier::avx512;
};

class Model {
 public:
  static Result<std::shared_ptr<const Model>> load(const std::string& path, const LoadOptions& opts = {});
  // For tests and tools: a file already opened (parse() of caller-owned bytes works too).
  static Result<std::shared_ptr<const Model>> from_file(gguf::File file, const LoadOptions& opts = {});

  const TransformerConfig& config() const { return config_; }
  const ModelWeights& weights() const { return weights_; }
  const gguf::File& file() const { return file_; }
  const KernelSet& kernels() const { return kernels_; }  // chosen once at load from the CPU features  // all metadata (tokenizer, template, /api/show)
  const std::string& arch() const { return config_.arch; }
  int n_vocab() const { return config_.n_vocab; }
  int n_embd() const { return config_.n_embd; }
  int n_ctx_train() const { return config_.n_ctx_train; }
  uint64_t file_size() const { return file_.bytes().size(); }
  // Bytes of matrices repacked at load (0 when none was: no layout for this CPU, or not asked).
  uint64_t packed_bytes() const { return packed_bytes_; }

  // Bytes of KV cache for n_seq sequences of n_ctx positions each.
  uint64_t kv_cache_bytes(int n_ctx, int n_seq = 1, KvType kv = KvType::f16) const;
  // Resident memory estimate for a context: weights (file size) + KV cache + scratch.
  uint64_t memory_estimate(int n_ctx, int n_seq = 1, KvType kv = KvType::f16, int n_batch = 512) const;

 private:
  Model() = default;
  void pack_weights();

  gguf::File file_;
  TransformerConfig config_;
  ModelWeights weights_;
  KernelSet kernels_;
  std::shared_ptr<uint8_t> packed_;  // the packed matrices (one anonymous mapping)
  uint64_t packed_bytes_ = 0;
};

}  // namespace nurl
