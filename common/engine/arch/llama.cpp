// llama: the reference layout. RMSNorm, GQA attention with NORM rope (adjacent pairs), SwiGLU,
// optional rope_freqs (llama 3 frequency factors) and linear rope scaling; untied or tied output.
#include "engine/arch/arch.h"

namespace nurl {

Result<void> load_llama(const gguf::File& f, TransformerConfig& c, ModelWeights& w) {
  NURL_TRY(load_common_hparams(f, c));
  c.rope_style = RopeStyle::norm;
  c.ffn_act = FfnActivation::silu;
  c.tied_output = !f.tensor("output.weight");
  return bind_decoder(f, c, LayerLayout{}, w);
}

}  // namespace nurl
