// Architecture registry and the helpers arch files share. An architecture is a function that
// maps one GGUF file's keys and tensors onto a TransformerConfig and ModelWeights, checking
// everything it reads (keys, tensor presence, shapes, types) and returning an Error naming the
// key or tensor otherwise. The registry is one explicit table (registry.cpp).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "engine/arch/config.h"
#include "engine/gguf/gguf.h"
#include "kernels/kernel-set.h"

namespace nurl {

using ArchLoadFn = Result<void> (*)(const gguf::File& f, TransformerConfig& c, ModelWeights& w);

struct ArchEntry {
  std::string_view name;  // general.architecture
  ArchLoadFn load;
};

// The registered architectures (llama, qwen2, qwen3, gemma3, phi3).
std::span<const ArchEntry> arch_registry();
const ArchEntry* find_arch(std::string_view name);

// One loader per file in this folder.
Result<void> load_llama(const gguf::File& f, TransformerConfig& c, ModelWeights& w);
Result<void> load_qwen2(const gguf::File& f, TransformerConfig& c, ModelWeights& w);
Result<void> load_qwen3(const gguf::File& f, TransformerConfig& c, ModelWeights& w);
Result<void> load_gemma3(const gguf::File& f, TransformerConfig& c, ModelWeights& w);
Result<void> load_phi3(const gguf::File& f, TransformerConfig& c, ModelWeights& w);

// ---- shared by the arch files (arch-common.cpp) ----

// Binds tensors by name with checks; every error names the tensor.
class TensorBinder {
 public:
  explicit TensorBinder(const gguf::File& f);
  bool has(const std::string& name) const { return f_.tensor(name) != nullptr; }
  // A 2-D weight with ne = [n_in, n_out] whose type has a dot product.
  Result<WeightMatrix> matrix(const std::string& name, int64_t n_in, int64_t n_out) const;
  // A 1-D F32 vector of n elements.
  Result<const float*> vector(const std::string& name, int64_t n) const;
  // nullptr when absent; an error when present with another shape or type.
  Result<const float*> vector_opt(const std::string& name, int64_t n) const;

 private:
  const gguf::File& f_;
  KernelSet ref_;  // a type is accepted when its reference kernels exist (SIMD falls back per type)
};

// Reads the keys every llama-like architecture has under "<arch>.": sizes, heads, head_dim
// (attention.key_length), context length, rms eps, rope base/dims/scaling, sliding window,
// soft-capping. n_vocab comes from token_embd. Arch-specific defaults are set by the caller after.
Result<void> load_common_hparams(const gguf::File& f, TransformerConfig& c);

struct LayerLayout {
  bool qkv_bias = false;       // attn_{q,k,v}.bias (qwen2)
  bool qk_norm = false;        // attn_{q,k}_norm (qwen3, gemma3)
  bool post_norms = false;     // post_attention_norm + post_ffw_norm (gemma3)
  bool fused_qkv = false;      // attn_qkv (phi3)
  bool fused_gate_up = false;  // ffn_up holds gate then up (phi3)
};

// Binds token_embd, output_norm, output (or ties it), rope_freqs and every layer's tensors.
Result<void> bind_decoder(const gguf::File& f, const TransformerConfig& c, const LayerLayout& layout,
                          ModelWeights& w);

std::string key(const TransformerConfig& c, std::string_view suffix);  // "<arch>.<suffix>"
std::string blk(int layer, std::string_view name);                     // "blk.<layer>.<name>"

}  // namespace nurl
