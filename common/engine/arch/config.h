// TransformerConfig and the weight views of one decoder-only model. The config is data: every
// architecture maps its GGUF keys onto it (arch/<name>.cpp) and the one shared decoder
// (arch/transformer.cpp) branches on its flags. Weights are views into the mmapped GGUF file;
// all shapes and types were checked at load, so the forward trusts them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/quant/types.h"

namespace nurl {

// Element type of the KV cache.
enum class KvType { f16, f32 };

enum class RopeStyle {
  norm,  // rotate adjacent pairs (x[2i], x[2i+1])           — llama
  neox,  // rotate half-split pairs (x[i], x[i + n_rot/2])  — qwen2, qwen3, gemma3, phi3
};

enum class FfnActivation {
  silu,       // SwiGLU: down(silu(gate·x) * up·x)
  gelu_tanh,  // GeGLU:  down(gelu_tanh(gate·x) * up·x)
};

// A 2-D weight in GGUF order: n_in elements per row (ne[0], contiguous), n_out rows (ne[1]).
// y = W·x means y[r] = dot(row r, x). A view may cover a row range of a fused tensor (phi3).
struct WeightMatrix {
  GgmlType type = GgmlType::F32;
  const uint8_t* data = nullptr;
  int64_t n_in = 0;
  int64_t n_out = 0;
  size_t row_bytes = 0;  // bytes per row of n_in elements
  // The same rows in the interleaved layout of the model's kernels (MatKernels::packed), when the
  // model packed them at load: matmul reads these instead of `data` (which stays the file's rows,
  // for a matrix that was not packed). Groups of packed_rows rows, packed_group_bytes apart.
  const uint8_t* packed = nullptr;
  size_t packed_group_bytes = 0;
  int packed_rows = 0;

  bool present() const { return data != nullptr; }
  const uint8_t* row(int64_t r) const { return data + static_cast<size_t>(r) * row_bytes; }
  // Rows [r0, r0 + n) in the file's layout (a view of the packed groups would need r0 on a group).
  WeightMatrix rows(int64_t r0, int64_t n) const {
    WeightMatrix w = *this;
    w.data = row(r0);
    w.n_out = n;
    w.packed = nullptr;
    w.packed_group_bytes = 0;
    w.packed_rows = 0;
    return w;
  }
};

struct LayerWeights {
  const float* attn_norm = nullptr;       // (n_embd)
  WeightMatrix wq;                        // n_embd → n_head·head_dim
  WeightMatrix wk;                        // n_embd → n_head_kv·head_dim
  WeightMatrix wv;                        // n_embd → n_head_kv·head_dim_v
  const float* bq = nullptr;              // (n_head·head_dim)      optional (qwen2)
  const float* bk = nullptr;              // (n_head_kv·head_dim)   optional
  const float* bv = nullptr;              // (n_head_kv·head_dim_v) optional
  const float* q_norm = nullptr;          // (head_dim) per-head RMSNorm before rope, optional
  const float* k_norm = nullptr;          // (head_dim)
  WeightMatrix wo;                        // n_head·head_dim_v → n_embd
  const float* post_attn_norm = nullptr;  // (n_embd) optional (gemma3)
  const float* ffn_norm = nullptr;        // (n_embd)
  WeightMatrix w_gate;                    // n_embd → n_ff
  WeightMatrix w_up;                      // n_embd → n_ff
  WeightMatrix w_down;                    // n_ff → n_embd
  const float* post_ffn_norm = nullptr;   // (n_embd) optional (gemma3)
  // When the file fuses q|k|v (phi3), wq/wk/wv are row ranges of this one tensor and the
  // decoder runs one matmul over it; same for gate|up.
  WeightMatrix wqkv_fused;
  WeightMatrix w_gate_up_fused;
};

struct ModelWeights {
  WeightMatrix token_embd;             // n_embd → n_vocab rows (row t = embedding of token t)
  const float* output_norm = nullptr;  // (n_embd)
  WeightMatrix output;                 // n_embd → n_vocab (== token_embd when tied)
  const float* rope_freqs = nullptr;   // (n_rot/2) frequency divisors, optional (llama 3)
  // LongRoPE (phi3): frequency divisors for contexts up to rope.scaling.original_context_length
  // (short) and beyond it (long); both or neither.
  const float* rope_factors_short = nullptr;
  const float* rope_factors_long = nullptr;
  std::vector<LayerWeights> layers;
};

struct TransformerConfig {
  std::string arch;  // general.architecture
  int n_vocab = 0;
  int n_embd = 0;
  int n_layer = 0;
  int n_head = 0;
  int n_head_kv = 0;
  int head_dim = 0;    // attention.key_length, default n_embd / n_head
  int head_dim_v = 0;  // attention.value_length, default head_dim
  int n_ff = 0;
  int n_ctx_train = 0;  // context_length
  float rms_eps = 1e-5f;

  // Rotary embedding: theta_i = pos · freq_scale · base^(-2i/n_rot) / rope_freqs[i].
  RopeStyle rope_style = RopeStyle::norm;
  int n_rot = 0;  // rotated dims per head (rope.dimension_count, default head_dim)
  float rope_base = 10000.0f;
  float rope_freq_scale = 1.0f;    // 1 / rope.scaling.factor for linear scaling
  float rope_base_swa = 10000.0f;  // sliding-window layers (gemma3)
  float rope_freq_scale_swa = 1.0f;
  float rope_attn_factor = 1.0f;  // rope.scaling.attn_factor: multiplies cos and sin (LongRoPE)
  int n_ctx_orig = 0;             // rope.scaling.original_context_length (default n_ctx_train)

  // Attention.
  float attn_scale = 0.0f;            // multiplies q·k; 1/sqrt(head_dim) unless the file says otherwise
  float attn_softcap = 0.0f;          // 0 = off; else scores = c·tanh(scores / c)
  int n_swa = 0;                      // sliding window (keys with pos_q - pos_k < n_swa), 0 = none
  std::vector<uint8_t> layer_is_swa;  // (n_layer) 1 where the layer uses the sliding window

  // Embedding and output.
  float embd_scale = 1.0f;     // gemma3: sqrt(n_embd)
  float final_softcap = 0.0f;  // 0 = off
  bool tied_output = false;    // no output.weight: logits use token_embd

  FfnActivation ffn_act = FfnActivation::silu;

  int q_dim() const { return n_head * head_dim; }
  int k_dim() const { return n_head_kv * head_dim; }
  int v_dim() const { return n_head_kv * head_dim_v; }
};

}  // namespace nurl
