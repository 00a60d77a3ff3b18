// Phi3ForCausalLM → phi3: fused qkv_proj (rows q | k | v) and gate_up_proj (rows gate | up) are
// kept fused, as GGML's phi3 graph reads them; NEOX rope over partial_rotary_factor·head_dim
// dimensions; LongRoPE ("longrope"/"su" rope_scaling) becomes rope_factors_short/long tensors and
// rope.scaling.attn_factor.
#include <cmath>

#include "engine/convert/arch-map.h"

namespace nurl::convert {

namespace {

Result<std::vector<float>> factor_list(const JsonDoc& c, const Json& rs, const char* key, int64_t n) {
  auto it = rs.find(key);
  if (it == rs.end() || !it->is_array() || it->size() != size_t(n))
    return c.error(std::string("rope_scaling.") + key, "must list " + std::to_string(n) + " numbers");
  std::vector<float> v;
  for (const auto& x : *it) {
    if (!x.is_number() || !std::isfinite(x.get<double>()) || x.get<double>() <= 0)
      return c.error(std::string("rope_scaling.") + key, "must hold positive numbers");
    v.push_back(x.get<float>());
  }
  return v;
}

}  // namespace

Result<ArchPlan> plan_phi3(const Checkpoint& ck) {
  const JsonDoc& c = ck.config();
  ArchPlan plan;
  plan.arch = "phi3";
  NURL_ASSIGN(HfParams hp, read_hf_params(ck, /*tied_default=*/false));
  add_common_keys(plan, hp);
  NURL_ASSIGN(int64_t orig_ctx, c.get_int_or("original_max_position_embeddings", hp.n_ctx, 1, int64_t(1) << 26));
  add_u32(plan, "rope.scaling.original_context_length", uint32_t(orig_ctx));
  NURL_ASSIGN(double rot, c.get_number_or("partial_rotary_factor", 1.0));
  const int64_t n_rot = int64_t(rot * double(hp.head_dim));
  if (!(rot > 0 && rot <= 1) || n_rot < 2 || n_rot % 2 != 0)
    return c.error("partial_rotary_factor", "must give an even number of rotated dimensions up to head_dim");
  add_u32(plan, "rope.dimension_count", uint32_t(n_rot));
  if (c.has("sliding_window")) {
    NURL_ASSIGN(int64_t window, c.get_int("sliding_window", 1, int64_t(1) << 26));
    add_u32(plan, "attention.sliding_window", uint32_t(window));
  }
  if (const Json* rs = c.find("rope_scaling")) {
    std::string type;
    if (rs->is_object())
      for (const char* k : {"rope_type", "type"})
        if (auto it = rs->find(k); it != rs->end() && it->is_string()) type = it->get<std::string>();
    if (type == "longrope" || type == "su") {
      NURL_ASSIGN(std::vector<float> shortf, factor_list(c, *rs, "short_factor", n_rot / 2));
      NURL_ASSIGN(std::vector<float> longf, factor_list(c, *rs, "long_factor", n_rot / 2));
      const double scale = double(hp.n_ctx) / double(orig_ctx);
      const double attn = scale <= 1 ? 1.0 : std::sqrt(1 + std::log(scale) / std::log(double(orig_ctx)));
      add_f32(plan, "rope.scaling.attn_factor", float(attn));
      for (auto [name, data] : {std::pair{"rope_factors_long.weight", &longf}, std::pair{"rope_factors_short.weight", &shortf}}) {
        PlannedTensor t;
        t.name = name;
        t.ne = {uint64_t(n_rot / 2)};
        t.data = *data;
        plan.tensors.push_back(std::move(t));
      }
    } else {
      NURL_TRY(add_rope_scaling(ck, hp, n_rot, plan));
    }
  }
  DecoderLayout lay;
  lay.fused = true;
  NURL_TRY(plan_decoder(ck, hp, lay, plan));
  return plan;
}

}  // namespace nurl::convert
