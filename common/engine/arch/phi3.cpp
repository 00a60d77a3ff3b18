// phi3 — differences from llama: fused attn_qkv (rows q | k | v) and fused ffn_up (rows gate | up),
// bound as row ranges of one tensor (no copies); NEOX rope. attention.sliding_window is ignored,
// as llama.cpp does for phi3 (real Phi-3-mini-4k files carry 2047 but are run with full attention).
// LongRoPE (Phi-3.5, Phi-3-*-128k): rope_factors_short/long divide the rotation frequencies (short
// while the context is at most rope.scaling.original_context_length, long beyond it) and
// rope.scaling.attn_factor scales cos/sin; bound by bind_decoder, applied by the decoder.
#include "engine/arch/arch.h"

namespace nurl {

Result<void> load_phi3(const gguf::File& f, TransformerConfig& c, ModelWeights& w) {
  NURL_TRY(load_common_hparams(f, c));
  c.rope_style = RopeStyle::neox;
  c.ffn_act = FfnActivation::silu;
  c.tied_output = !f.tensor("output.weight");
  LayerLayout lay;
  lay.fused_qkv = true;
  lay.fused_gate_up = true;
  return bind_decoder(f, c, lay, w);
}

}  // namespace nurl
