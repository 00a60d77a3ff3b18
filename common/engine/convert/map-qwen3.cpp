// Qwen3ForCausalLM → qwen3: per-head q/k RMSNorm, head_dim from config.json (n_head·head_dim may
// differ from hidden_size), NEOX rope, no biases.
#include "engine/convert/arch-map.h"

namespace nurl::convert {

Result<ArchPlan> plan_qwen3(const Checkpoint& ck) {
  ArchPlan plan;
  plan.arch = "qwen3";
  NURL_ASSIGN(HfParams hp, read_hf_params(ck, /*tied_default=*/false));
  add_common_keys(plan, hp);
  add_head_dim_keys(plan, hp);
  NURL_TRY(add_rope_scaling(ck, hp, hp.head_dim, plan));
  DecoderLayout lay;
  lay.qk_norm = true;
  NURL_TRY(plan_decoder(ck, hp, lay, plan));
  return plan;
}

}  // namespace nurl::convert
