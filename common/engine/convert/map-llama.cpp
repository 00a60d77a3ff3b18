// LlamaForCausalLM (and MistralForCausalLM, the same layout) → llama. HF stores q and k with the
// rotary pairs split into halves (rotate_half); GGML's llama rope rotates adjacent pairs, so
// their rows are permuted per head. Rope scaling: linear, or llama3 as a rope_freqs tensor.
#include "engine/convert/arch-map.h"

namespace nurl::convert {

Result<ArchPlan> plan_llama(const Checkpoint& ck) {
  ArchPlan plan;
  plan.arch = "llama";
  NURL_ASSIGN(HfParams hp, read_hf_params(ck, /*tied_default=*/false));
  add_common_keys(plan, hp);
  add_u32(plan, "vocab_size", uint32_t(hp.n_vocab));
  add_u32(plan, "rope.dimension_count", uint32_t(hp.head_dim));
  if (hp.head_dim_given) {
    add_head_dim_keys(plan, hp);
  }
  NURL_TRY(add_rope_scaling(ck, hp, hp.head_dim, plan));
  DecoderLayout lay;
  lay.permute_qk = true;
  NURL_TRY(plan_decoder(ck, hp, lay, plan));
  return plan;
}

}  // namespace nurl::convert
