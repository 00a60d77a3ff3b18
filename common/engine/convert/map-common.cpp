// What the architecture mappings share: the registry, llama-like hyperparameters, the decoder's
// tensor list with its checks, and rope scaling.
#include <cmath>
#include <set>

#include "engine/convert/arch-map.h"

namespace nurl::convert {

namespace {

constexpr ArchMapping kMappings[] = {
    {"LlamaForCausalLM", "llama", plan_llama},   {"MistralForCausalLM", "llama", plan_llama},
    {"Qwen2ForCausalLM", "qwen2", plan_qwen2},   {"Qwen3ForCausalLM", "qwen3", plan_qwen3},
    {"Gemma3ForCausalLM", "gemma3", plan_gemma3}, {"Phi3ForCausalLM", "phi3", plan_phi3},
};

std::string shape_str(std::span<const uint64_t> s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

gguf::Value u32v(uint32_t v) { return gguf::Value{gguf::Value::Storage(v)}; }

// Builds the plan's tensors while recording which checkpoint tensors were used.
class Planner {
 public:
  Planner(const Checkpoint& ck, const HfParams& hp, ArchPlan& plan) : ck_(ck), hp_(hp), plan_(plan) {}

  // `hf_shape` in PyTorch order ([out, in] for a matrix). `why` explains the expected shape.
  Result<PlannedTensor*> add(std::string gguf_name, const std::string& hf_name, std::vector<uint64_t> hf_shape,
                             const std::string& why, bool matrix) {
    const TensorRef r = ck_.find(hf_name);
    if (!r.tensor)
      return Error(Code::not_found, ck_.dir().string() + ": tensor " + hf_name + " is missing (config.json: " +
                                        std::to_string(hp_.n_layer) + " layers; needed for " + gguf_name + ")");
    const StTensor& t = *r.tensor;
    if (t.dtype != StDtype::F32 && t.dtype != StDtype::F16 && t.dtype != StDtype::BF16)
      return Error(Code::unsupported, r.file->path + ": tensor " + hf_name + " at offset " +
                                          std::to_string(r.file->data_start + t.begin) + " is " +
                                          std::string(dtype_name(t.dtype)) + " (weights must be F32, F16 or BF16)");
    if (t.shape != hf_shape)
      return Error(Code::corrupt, r.file->path + ": tensor " + hf_name + " at offset " +
                                      std::to_string(r.file->data_start + t.begin) + " has shape " + shape_str(t.shape) +
                                      ", config.json implies " + shape_str(hf_shape) + " (" + why + ")");
    used_.insert(hf_name);
    PlannedTensor p;
    p.name = std::move(gguf_name);
    p.source = hf_name;
    p.ne.assign(hf_shape.rbegin(), hf_shape.rend());
    p.matrix = matrix;
    plan_.tensors.push_back(std::move(p));
    return &plan_.tensors.back();
  }

  // Every checkpoint tensor must have been used, except rotary caches and a tied lm_head copy.
  Result<void> check_all_used() const {
    for (const auto& name : ck_.names()) {
      if (used_.count(name)) continue;
      if (name.ends_with("rotary_emb.inv_freq")) continue;
      if (name == "lm_head.weight" && hp_.tied) continue;
      const TensorRef r = ck_.find(name);
      return Error(Code::corrupt, r.file->path + ": tensor " + name + " does not belong to the model config.json describes (" +
                                      std::to_string(hp_.n_layer) + " layers, hidden_size " + std::to_string(hp_.n_embd) + ")");
    }
    return {};
  }

 private:
  const Checkpoint& ck_;
  const HfParams& hp_;
  ArchPlan& plan_;
  std::set<std::string> used_;
};

}  // namespace

uint64_t PlannedTensor::n_rows() const {
  uint64_t n = 1;
  for (size_t i = 1; i < ne.size(); ++i) n *= ne[i];
  return n;
}

std::span<const ArchMapping> arch_mappings() { return kMappings; }

Result<const ArchMapping*> find_mapping(const JsonDoc& config) {
  const Json* a = config.find("architectures");
  std::string known;
  for (const auto& m : kMappings) known += (known.empty() ? "" : ", ") + std::string(m.hf_class);
  if (!a || !a->is_array() || a->empty() || !(*a)[0].is_string())
    return Error(Code::unsupported, config.name + ": no \"architectures\" list naming the model class (supported: " + known + ")");
  const std::string cls = (*a)[0].get<std::string>();
  for (const auto& m : kMappings)
    if (m.hf_class == cls) return &m;
  return Error(Code::unsupported, config.name + ": architecture " + cls.substr(0, 80) + " is not supported (supported: " + known + ")");
}

Result<HfParams> read_hf_params(const Checkpoint& ck, bool tied_default, double rope_theta_default) {
  const JsonDoc& c = ck.config();
  HfParams hp;
  NURL_ASSIGN(hp.n_embd, c.get_int("hidden_size", 1, 1 << 20));
  NURL_ASSIGN(hp.n_ff, c.get_int("intermediate_size", 1, 1 << 22));
  NURL_ASSIGN(hp.n_layer, c.get_int("num_hidden_layers", 1, 4096));
  NURL_ASSIGN(hp.n_head, c.get_int("num_attention_heads", 1, 4096));
  NURL_ASSIGN(hp.n_head_kv, c.get_int_or("num_key_value_heads", hp.n_head, 1, hp.n_head));
  if (hp.n_head % hp.n_head_kv != 0)
    return c.error("num_attention_heads", "(" + std::to_string(hp.n_head) + ") is not a multiple of num_key_value_heads (" +
                                              std::to_string(hp.n_head_kv) + ")");
  hp.head_dim_given = c.has("head_dim");
  if (!hp.head_dim_given && hp.n_embd % hp.n_head != 0)
    return c.error("hidden_size", "is not a multiple of num_attention_heads and there is no head_dim");
  NURL_ASSIGN(hp.head_dim, c.get_int_or("head_dim", hp.n_embd / hp.n_head, 2, 4096));
  if (hp.head_dim % 2 != 0) return c.error("head_dim", "must be even");
  NURL_ASSIGN(hp.n_vocab, c.get_int("vocab_size", 1, 1 << 24));
  NURL_ASSIGN(hp.n_ctx, c.get_int_or("max_position_embeddings", 2048, 1, int64_t(1) << 26));
  NURL_ASSIGN(hp.rms_eps, c.get_number_or("rms_norm_eps", 1e-6));
  if (!(hp.rms_eps > 0 && hp.rms_eps < 1)) return c.error("rms_norm_eps", "must be in (0, 1)");
  NURL_ASSIGN(hp.rope_theta, c.get_number_or("rope_theta", rope_theta_default));
  if (!(hp.rope_theta > 0)) return c.error("rope_theta", "must be positive");
  NURL_ASSIGN(bool tie, c.get_bool_or("tie_word_embeddings", tied_default));
  hp.tied = tie || !ck.has("lm_head.weight");
  return hp;
}

void add_u32(ArchPlan& plan, std::string suffix, uint32_t v) {
  plan.kv.push_back({plan.arch + "." + suffix, u32v(v)});
}
void add_f32(ArchPlan& plan, std::string suffix, float v) {
  plan.kv.push_back({plan.arch + "." + suffix, gguf::Value{gguf::Value::Storage(v)}});
}
void add_string(ArchPlan& plan, std::string suffix, std::string v) {
  plan.kv.push_back({plan.arch + "." + suffix, gguf::Value{gguf::Value::Storage(std::move(v))}});
}

void add_common_keys(ArchPlan& plan, const HfParams& hp) {
  add_u32(plan, "block_count", uint32_t(hp.n_layer));
  add_u32(plan, "context_length", uint32_t(hp.n_ctx));
  add_u32(plan, "embedding_length", uint32_t(hp.n_embd));
  add_u32(plan, "feed_forward_length", uint32_t(hp.n_ff));
  add_u32(plan, "attention.head_count", uint32_t(hp.n_head));
  add_u32(plan, "attention.head_count_kv", uint32_t(hp.n_head_kv));
  add_f32(plan, "rope.freq_base", float(hp.rope_theta));
  add_f32(plan, "attention.layer_norm_rms_epsilon", float(hp.rms_eps));
  plan.vocab_size = hp.n_vocab;
  plan.n_head = int(hp.n_head);
  plan.n_head_kv = int(hp.n_head_kv);
  plan.tied_output = hp.tied;
}

void add_head_dim_keys(ArchPlan& plan, const HfParams& hp) {
  add_u32(plan, "attention.key_length", uint32_t(hp.head_dim));
  add_u32(plan, "attention.value_length", uint32_t(hp.head_dim));
}

Result<void> plan_decoder(const Checkpoint& ck, const HfParams& hp, const DecoderLayout& lay, ArchPlan& plan) {
  Planner p(ck, hp, plan);
  const uint64_t E = uint64_t(hp.n_embd), F = uint64_t(hp.n_ff), hd = uint64_t(hp.head_dim);
  const uint64_t q_dim = uint64_t(hp.n_head) * hd, kv_dim = uint64_t(hp.n_head_kv) * hd;
  const std::string sizes = "hidden_size " + std::to_string(E);
  const std::string qs = "num_attention_heads " + std::to_string(hp.n_head) + " × head_dim " + std::to_string(hd);
  const std::string kvs = "num_key_value_heads " + std::to_string(hp.n_head_kv) + " × head_dim " + std::to_string(hd);
  const std::string ffs = "intermediate_size " + std::to_string(F);

  NURL_TRY(p.add("token_embd.weight", "model.embed_tokens.weight", {uint64_t(hp.n_vocab), E},
                 "vocab_size " + std::to_string(hp.n_vocab) + ", " + sizes, true));
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    const std::string b = "blk." + std::to_string(il) + ".";
    const std::string h = "model.layers." + std::to_string(il) + ".";
    auto norm = [&](const std::string& gguf, const std::string& hf, uint64_t n, const std::string& why) -> Result<void> {
      NURL_ASSIGN(PlannedTensor * t, p.add(b + gguf, h + hf, {n}, why, false));
      if (lay.gemma_norms) t->transform = Transform::plus_one;
      return {};
    };
    NURL_TRY(norm("attn_norm.weight", "input_layernorm.weight", E, sizes));
    if (lay.fused) {
      NURL_TRY(p.add(b + "attn_qkv.weight", h + "self_attn.qkv_proj.weight", {q_dim + 2 * kv_dim, E},
                     qs + " + 2 × " + kvs + ", " + sizes, true));
    } else {
      // (a pointer from add() is valid until the next add)
      NURL_ASSIGN(PlannedTensor * q, p.add(b + "attn_q.weight", h + "self_attn.q_proj.weight", {q_dim, E}, qs + ", " + sizes, true));
      if (lay.permute_qk) {
        q->transform = Transform::rope_permute;
        q->n_head = int(hp.n_head);
      }
      NURL_ASSIGN(PlannedTensor * k, p.add(b + "attn_k.weight", h + "self_attn.k_proj.weight", {kv_dim, E}, kvs + ", " + sizes, true));
      if (lay.permute_qk) {
        k->transform = Transform::rope_permute;
        k->n_head = int(hp.n_head_kv);
      }
      NURL_TRY(p.add(b + "attn_v.weight", h + "self_attn.v_proj.weight", {kv_dim, E}, kvs + ", " + sizes, true));
    }
    if (lay.qkv_bias) {
      NURL_TRY(p.add(b + "attn_q.bias", h + "self_attn.q_proj.bias", {q_dim}, qs, false));
      NURL_TRY(p.add(b + "attn_k.bias", h + "self_attn.k_proj.bias", {kv_dim}, kvs, false));
      NURL_TRY(p.add(b + "attn_v.bias", h + "self_attn.v_proj.bias", {kv_dim}, kvs, false));
    }
    if (lay.qk_norm) {
      NURL_TRY(norm("attn_q_norm.weight", "self_attn.q_norm.weight", hd, "head_dim " + std::to_string(hd)));
      NURL_TRY(norm("attn_k_norm.weight", "self_attn.k_norm.weight", hd, "head_dim " + std::to_string(hd)));
    }
    NURL_TRY(p.add(b + "attn_output.weight", h + "self_attn.o_proj.weight", {E, q_dim}, sizes + ", " + qs, true));
    if (lay.gemma_norms) {
      NURL_TRY(norm("post_attention_norm.weight", "post_attention_layernorm.weight", E, sizes));
      NURL_TRY(norm("ffn_norm.weight", "pre_feedforward_layernorm.weight", E, sizes));
      NURL_TRY(norm("post_ffw_norm.weight", "post_feedforward_layernorm.weight", E, sizes));
    } else {
      NURL_TRY(norm("ffn_norm.weight", "post_attention_layernorm.weight", E, sizes));
    }
    if (lay.fused) {
      NURL_TRY(p.add(b + "ffn_up.weight", h + "mlp.gate_up_proj.weight", {2 * F, E}, "2 × " + ffs + ", " + sizes, true));
    } else {
      NURL_TRY(p.add(b + "ffn_gate.weight", h + "mlp.gate_proj.weight", {F, E}, ffs + ", " + sizes, true));
      NURL_TRY(p.add(b + "ffn_up.weight", h + "mlp.up_proj.weight", {F, E}, ffs + ", " + sizes, true));
    }
    NURL_TRY(p.add(b + "ffn_down.weight", h + "mlp.down_proj.weight", {E, F}, sizes + ", " + ffs, true));
  }
  NURL_ASSIGN(PlannedTensor * on, p.add("output_norm.weight", "model.norm.weight", {E}, sizes, false));
  if (lay.gemma_norms) on->transform = Transform::plus_one;
  if (!hp.tied) {
    NURL_TRY(p.add("output.weight", "lm_head.weight", {uint64_t(hp.n_vocab), E},
                   "vocab_size " + std::to_string(hp.n_vocab) + ", " + sizes, true));
  }
  return p.check_all_used();
}

std::vector<float> llama3_rope_factors(int64_t n_rot, double base, double factor, double low, double high, double orig_ctx) {
  const double low_wavelen = orig_ctx / low, high_wavelen = orig_ctx / high;
  std::vector<float> f;
  for (int64_t i = 0; i < n_rot; i += 2) {
    const double wavelen = 2 * M_PI * std::pow(base, double(i) / double(n_rot));
    double v = 1;
    if (wavelen > low_wavelen) {
      v = factor;
    } else if (wavelen >= high_wavelen) {
      const double smooth = (orig_ctx / wavelen - low) / (high - low);
      v = 1 / ((1 - smooth) / factor + smooth);
    }
    f.push_back(float(v));
  }
  return f;
}

Result<void> add_rope_scaling(const Checkpoint& ck, const HfParams& hp, int64_t n_rot, ArchPlan& plan) {
  const JsonDoc& c = ck.config();
  const Json* rs = c.find("rope_scaling");
  if (!rs) return {};
  if (!rs->is_object()) return c.error("rope_scaling", "is not an object");
  std::string type;
  for (const char* k : {"rope_type", "type"}) {
    auto it = rs->find(k);
    if (it != rs->end() && it->is_string()) type = it->get<std::string>();
  }
  auto number = [&](const char* k, double dflt) -> Result<double> {
    auto it = rs->find(k);
    if (it == rs->end() || it->is_null()) return dflt;
    if (!it->is_number() || !std::isfinite(it->get<double>()))
      return c.error(std::string("rope_scaling.") + k, "is not a finite number");
    return it->get<double>();
  };
  if (type == "default" || type.empty()) return {};
  NURL_ASSIGN(double factor, number("factor", 1.0));
  if (!(factor > 0)) return c.error("rope_scaling.factor", "must be positive");
  if (type == "linear") {
    add_string(plan, "rope.scaling.type", "linear");
    add_f32(plan, "rope.scaling.factor", float(factor));
    return {};
  }
  if (type == "llama3") {
    // Llama 3.1's frequency-dependent scaling, stored as per-dimension divisors (rope_freqs).
    NURL_ASSIGN(double low, number("low_freq_factor", 1.0));
    NURL_ASSIGN(double high, number("high_freq_factor", 4.0));
    NURL_ASSIGN(double orig, number("original_max_position_embeddings", 8192));
    if (!(high > low) || !(orig > 0)) return c.error("rope_scaling", "has inconsistent llama3 factors");
    PlannedTensor t;
    t.name = "rope_freqs.weight";
    t.ne = {uint64_t(n_rot / 2)};
    t.data = llama3_rope_factors(n_rot, hp.rope_theta, factor, low, high, orig);
    plan.tensors.insert(plan.tensors.begin(), std::move(t));
    return {};
  }
  return c.error("rope_scaling", "type \"" + type.substr(0, 40) + "\" is not supported (linear and llama3 are)");
}

}  // namespace nurl::convert
