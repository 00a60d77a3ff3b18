// Hugging Face architecture → GGUF: one small mapping per architecture (the mirror of
// engine/arch), each turning config.json and the checkpoint's tensor names into the metadata keys
// and the tensor list llama.cpp's converter writes for it. A mapping checks what it reads:
// config values in range, every tensor it needs present with the shape config.json implies, and
// no tensor left over (a config.json that lies about the layer count is caught both ways).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "engine/convert/checkpoint.h"
#include "engine/gguf/gguf.h"

namespace nurl::convert {

enum class Transform {
  none,
  rope_permute,  // llama: q/k rows from HF's half-split rotary pairs to GGML's adjacent pairs
  plus_one,      // gemma: RMSNorm weights stored as 1 + w
};

struct PlannedTensor {
  std::string name;          // GGUF name
  std::vector<uint64_t> ne;  // GGUF order: ne[0] is the row length
  std::string source;        // checkpoint tensor; empty for generated data
  Transform transform = Transform::none;
  int n_head = 0;            // rope_permute: heads in this tensor
  std::vector<float> data;   // generated tensors (rope factors), F32
  bool matrix = false;       // a 2-D weight: gets the output type; everything else stays F32

  uint64_t n_rows() const;
};

struct ArchPlan {
  std::string arch;                  // general.architecture
  std::vector<gguf::KeyValue> kv;    // "<arch>.*" keys
  std::vector<PlannedTensor> tensors;
  int64_t vocab_size = 0;            // rows of token_embd (config.json vocab_size)
  int n_head = 0, n_head_kv = 0;     // for the quantisation mixtures
  bool tied_output = false;
};

using PlanFn = Result<ArchPlan> (*)(const Checkpoint& ck);

struct ArchMapping {
  std::string_view hf_class;  // config.json "architectures"[0]
  std::string_view arch;      // GGUF architecture
  PlanFn plan;
};

// The supported classes: LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM,
// Qwen3ForCausalLM, Gemma3ForCausalLM, Phi3ForCausalLM.
std::span<const ArchMapping> arch_mappings();
// The mapping for this checkpoint's config.json, or an error naming the class (and the known ones).
Result<const ArchMapping*> find_mapping(const JsonDoc& config);

// One file per architecture.
Result<ArchPlan> plan_llama(const Checkpoint& ck);
Result<ArchPlan> plan_qwen2(const Checkpoint& ck);
Result<ArchPlan> plan_qwen3(const Checkpoint& ck);
Result<ArchPlan> plan_gemma3(const Checkpoint& ck);
Result<ArchPlan> plan_phi3(const Checkpoint& ck);

// ---- shared by the mapping files (map-common.cpp) ----

// The llama-like hyperparameters from config.json, range-checked.
struct HfParams {
  int64_t n_embd = 0, n_ff = 0, n_layer = 0, n_head = 0, n_head_kv = 0, head_dim = 0, n_vocab = 0;
  int64_t n_ctx = 0;
  double rms_eps = 1e-6;
  double rope_theta = 10000;
  bool head_dim_given = false;  // config.json names head_dim (llama.cpp then writes key/value_length)
  bool tied = false;            // output is token_embd
};
// tied_default: the class's default for tie_word_embeddings. Also decides tied from lm_head's presence.
Result<HfParams> read_hf_params(const Checkpoint& ck, bool tied_default, double rope_theta_default = 10000);

struct DecoderLayout {
  bool qkv_bias = false;        // q/k/v biases (qwen2)
  bool qk_norm = false;         // q_norm / k_norm (qwen3, gemma3)
  bool gemma_norms = false;     // gemma3: post_attention / pre_ and post_feedforward norms, all norms + 1
  bool fused = false;           // phi3: qkv_proj and gate_up_proj
  bool permute_qk = false;      // llama: rope_permute on q and k
};

// token_embd, every layer's tensors, output_norm and output (unless tied), each checked against
// the checkpoint (presence, dtype, shape); then no checkpoint tensor may be left unused.
Result<void> plan_decoder(const Checkpoint& ck, const HfParams& hp, const DecoderLayout& layout, ArchPlan& plan);

// The "<arch>.*" keys every llama-like architecture has (sizes, heads, eps, rope base).
void add_common_keys(ArchPlan& plan, const HfParams& hp);
// attention.key_length / value_length = head_dim.
void add_head_dim_keys(ArchPlan& plan, const HfParams& hp);
void add_u32(ArchPlan& plan, std::string suffix, uint32_t v);
void add_f32(ArchPlan& plan, std::string suffix, float v);
void add_string(ArchPlan& plan, std::string suffix, std::string v);

// Llama 3.1's frequency-dependent rope scaling as per-dimension divisors (the rope_freqs tensor,
// n_rot / 2 values): 1 for wavelengths below orig_ctx / high, `factor` above orig_ctx / low,
// interpolated in between.
std::vector<float> llama3_rope_factors(int64_t n_rot, double base, double factor, double low, double high, double orig_ctx);

// Rope scaling from config.json "rope_scaling": linear (keys), llama3 (a rope_freqs tensor);
// anything else is refused by name. n_rot: rotated dimensions.
Result<void> add_rope_scaling(const Checkpoint& ck, const HfParams& hp, int64_t n_rot, ArchPlan& plan);

}  // namespace nurl::convert
