// gemma3 — differences from llama: embeddings × sqrt(n_embd); q/k RMSNorm; post-attention and
// post-FFN RMSNorm; GeGLU (tanh GELU); NEOX rope; interleaved sliding-window layers with their own
// rope base (rope.freq_base_swa, no scaling) while global layers use rope.freq_base and the
// file's scaling; head_dim from key_length. Norm weights are stored as 1 + w by the converter, so
// they multiply as stored. Without a pattern key every 6th layer is global (the Gemma 3 layout).
#include <cmath>

#include "engine/arch/arch.h"

namespace nurl {

Result<void> load_gemma3(const gguf::File& f, TransformerConfig& c, ModelWeights& w) {
  NURL_TRY(load_common_hparams(f, c));
  c.rope_style = RopeStyle::neox;
  c.ffn_act = FfnActivation::gelu_tanh;
  c.tied_output = !f.tensor("output.weight");
  c.embd_scale = std::sqrt(static_cast<float>(c.n_embd));
  NURL_ASSIGN(c.rope_base_swa, f.get_f32_or(key(c, "rope.freq_base_swa"), 10000.0f));
  c.rope_freq_scale_swa = 1.0f;
  NURL_ASSIGN(uint32_t n_swa, f.get_u32_or(key(c, "attention.sliding_window"), 0));
  c.n_swa = static_cast<int>(n_swa);
  // Query scaling: the 27B model was trained with query_pre_attn_scalar = n_embd / n_head
  // (62 layers); the others with head_dim. An explicit attention.scale key wins.
  if (c.n_layer == 62) c.attn_scale = 1.0f / std::sqrt(static_cast<float>(c.n_embd / c.n_head));
  if (f.has(key(c, "attention.scale"))) {
    NURL_ASSIGN(c.attn_scale, f.get_f32(key(c, "attention.scale")));
  }

  if (c.n_swa > 0) {
    const std::string pkey = key(c, "attention.sliding_window_pattern");
    const gguf::Value* pattern = f.find(pkey);
    if (!pattern) {
      for (int il = 0; il < c.n_layer; ++il) c.layer_is_swa[static_cast<size_t>(il)] = (il % 6) < 5;
    } else if (auto period = pattern->as_int()) {
      if (*period <= 0) return Error(Code::corrupt, pkey + " must be positive");
      for (int il = 0; il < c.n_layer; ++il) c.layer_is_swa[static_cast<size_t>(il)] = (il % *period) < *period - 1;
    } else if (const gguf::Array* a = pattern->get_if<gguf::Array>()) {
      if (a->items.size() != static_cast<size_t>(c.n_layer))
        return Error(Code::corrupt, pkey + " has " + std::to_string(a->items.size()) + " entries, expected block_count");
      for (int il = 0; il < c.n_layer; ++il) {
        const bool* b = a->items[static_cast<size_t>(il)].get_if<bool>();
        if (!b) return Error(Code::corrupt, pkey + " must be an array of bool");
        c.layer_is_swa[static_cast<size_t>(il)] = *b;
      }
    } else {
      return Error(Code::corrupt, pkey + " must be an integer or an array of bool");
    }
  }
  LayerLayout lay;
  lay.qk_norm = true;
  lay.post_norms = true;
  return bind_decoder(f, c, lay, w);
}

}  // namespace nurl
