// qwen2 — differences from llama: q/k/v biases, NEOX rope (half-split pairs), usually tied output.
#include "engine/arch/arch.h"

namespace nurl {

Result<void> load_qwen2(const gguf::File& f, TransformerConfig& c, ModelWeights& w) {
  NURL_TRY(load_common_hparams(f, c));
  c.rope_style = RopeStyle::neox;
  c.ffn_act = FfnActivation::silu;
  c.tied_output = !f.tensor("output.weight");
  LayerLayout lay;
  lay.qkv_bias = true;
  return bind_decoder(f, c, lay, w);
}

}  // namespace nurl
