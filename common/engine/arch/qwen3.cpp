// qwen3 — differences from llama: per-head RMSNorm of q and k (attn_q_norm/attn_k_norm, size
// head_dim) before the rotation, head_dim from attention.key_length (n_head·head_dim may differ
// from n_embd), NEOX rope, no biases.
#include "engine/arch/arch.h"

namespace nurl {

Result<void> load_qwen3(const gguf::File& f, TransformerConfig& c, ModelWeights& w) {
  NURL_TRY(load_common_hparams(f, c));
  c.rope_style = RopeStyle::neox;
  c.ffn_act = FfnActivation::silu;
  c.tied_output = !f.tensor("output.weight");
  LayerLayout lay;
  lay.qk_norm = true;
  return bind_decoder(f, c, lay, w);
}

}  // namespace nurl
