// Gemma3ForCausalLM (text) → gemma3: every RMSNorm weight is stored as 1 + w (HF's Gemma norm
// multiplies by 1 + weight; GGML's by the stored value), q/k norms, four norms per layer, sliding
// window layers with their own rope base, tied embeddings. The sliding-window layout is written
// only when it is not the default (every 6th layer global).
#include "engine/convert/arch-map.h"
#include "engine/gguf/gguf-writer.h"

namespace nurl::convert {

namespace {

// The sliding-window flag of each layer from "layer_types" or "sliding_window_pattern".
Result<std::vector<bool>> swa_layers(const JsonDoc& c, int64_t n_layer) {
  std::vector<bool> swa(static_cast<size_t>(n_layer));
  if (const Json* lt = c.find("layer_types")) {
    if (!lt->is_array() || lt->size() != size_t(n_layer))
      return c.error("layer_types", "must list one entry per layer (" + std::to_string(n_layer) + ")");
    for (size_t i = 0; i < swa.size(); ++i) {
      const Json& e = (*lt)[i];
      if (!e.is_string() || (e != "sliding_attention" && e != "full_attention"))
        return c.error("layer_types", "entries must be \"sliding_attention\" or \"full_attention\"");
      swa[i] = e == "sliding_attention";
    }
    return swa;
  }
  NURL_ASSIGN(int64_t period, c.get_int_or("sliding_window_pattern", 6, 1, 1 << 16));
  for (int64_t i = 0; i < n_layer; ++i) swa[size_t(i)] = (i % period) < period - 1;
  return swa;
}

}  // namespace

Result<ArchPlan> plan_gemma3(const Checkpoint& ck) {
  const JsonDoc& c = ck.config();
  ArchPlan plan;
  plan.arch = "gemma3";
  NURL_ASSIGN(HfParams hp, read_hf_params(ck, /*tied_default=*/true, /*rope_theta_default=*/1e6));
  add_common_keys(plan, hp);
  add_head_dim_keys(plan, hp);
  NURL_ASSIGN(int64_t window, c.get_int_or("sliding_window", 4096, 1, int64_t(1) << 26));
  add_u32(plan, "attention.sliding_window", uint32_t(window));
  NURL_ASSIGN(double base_swa, c.get_number_or("rope_local_base_freq", 10000));
  if (!(base_swa > 0)) return c.error("rope_local_base_freq", "must be positive");
  add_f32(plan, "rope.freq_base_swa", float(base_swa));
  for (const char* cap : {"final_logit_softcapping", "attn_logit_softcapping"}) {
    NURL_ASSIGN(double v, c.get_number_or(cap, 0));
    if (v > 0) add_f32(plan, cap, float(v));
  }
  NURL_ASSIGN(std::vector<bool> swa, swa_layers(c, hp.n_layer));
  bool default_layout = true;
  for (size_t i = 0; i < swa.size(); ++i) default_layout &= swa[i] == ((i % 6) < 5);
  if (!default_layout) {
    std::vector<gguf::Value> items;
    for (bool b : swa) items.push_back(gguf::Value{gguf::Value::Storage(b)});
    plan.kv.push_back({"gemma3.attention.sliding_window_pattern", gguf::make_array(gguf::ValueType::boolean, items)});
  }
  NURL_TRY(add_rope_scaling(ck, hp, hp.head_dim, plan));
  DecoderLayout lay;
  lay.qk_norm = true;
  lay.gemma_norms = true;
  NURL_TRY(plan_decoder(ck, hp, lay, plan));
  return plan;
}

}  // namespace nurl::convert
