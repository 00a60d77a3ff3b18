// Qwen2ForCausalLM → qwen2: the llama layout with q/k/v biases and NEOX rope (HF's rotate_half
// is GGML's NEOX, so no permutation).
#include "engine/convert/arch-map.h"

namespace nurl::convert {

Result<ArchPlan> plan_qwen2(const Checkpoint& ck) {
  ArchPlan plan;
  plan.arch = "qwen2";
  NURL_ASSIGN(HfParams hp, read_hf_params(ck, /*tied_default=*/false));
  add_common_keys(plan, hp);
  NURL_TRY(add_rope_scaling(ck, hp, hp.head_dim, plan));
  DecoderLayout lay;
  lay.qkv_bias = true;
  NURL_TRY(plan_decoder(ck, hp, lay, plan));
  return plan;
}

}  // namespace nurl::convert
