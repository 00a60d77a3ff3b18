// phi3 — differences from llama: fused attn_qkv (rows q | k | v) and fused ffn_up (rows gate | up),
// bound as row ranges of one tensor (no copies); NEOX rope. attention.sliding_window is ignored,
// as llama.cpp does for phi3 (real Phi-3-mini-4k files carry 2047 but are run with full attention).
// LongRoPE factor tensors (rope_factors_short/long) are not supported yet and are refused by name.
#include "engine/arch/arch.h"

namespace nurl {

Result<void> load_phi3(const gguf::File& f, TransformerConfig& c, ModelWeights& w) {
  NURL_TRY(load_common_hparams(f, c));
  c.rope_style = RopeStyle::neox;
  c.ffn_act = FfnActivation::silu;
  c.tied_output = !f.tensor("output.weight");
  for (const char* name : {"rope_factors_long.weight", "rope_factors_short.weight"})
    if (f.tensor(name))
      return Error(Code::unsupported, std::string("tensor ") + name + ": LongRoPE scaling is not supported");
  LayerLayout lay;
  lay.fused_qkv = true;
  lay.fused_gate_up = true;
  return bind_decoder(f, c, lay, w);
}

}  // namespace nurl
