// Shared loading helpers: tensor binding with checks, the common llama-like hyperparameters
// and the standard per-layer tensor names.
#include <cmath>

#include "engine/arch/arch.h"
#include "engine/arch/linear.h"

namespace nurl {

std::string key(const TransformerConfig& c, std::string_view suffix) {
  return c.arch + "." + std::string(suffix);
}

std::string blk(int layer, std::string_view name) {
  return "blk." + std::to_string(layer) + "." + std::string(name);
}

namespace {

std::string shape_str(const gguf::TensorInfo& t) {
  std::string s = "[";
  for (uint32_t i = 0; i < t.n_dims; ++i) s += (i ? ", " : "") + std::to_string(t.ne[i]);
  return s + "]";
}

}  // namespace

TensorBinder::TensorBinder(const gguf::File& f) : f_(f), ref_(reference_kernel_set()) {}

Result<WeightMatrix> TensorBinder::matrix(const std::string& name, int64_t n_in, int64_t n_out) const {
  const gguf::TensorInfo* t = f_.tensor(name);
  if (!t) return Error(Code::not_found, "tensor " + name + " is missing");
  if (t->n_dims != 2 || static_cast<int64_t>(t->ne[0]) != n_in || static_cast<int64_t>(t->ne[1]) != n_out)
    return Error(Code::corrupt, "tensor " + name + " has shape " + shape_str(*t) + ", expected [" +
                                    std::to_string(n_in) + ", " + std::to_string(n_out) + "]");
  if (!ref_.supports(t->type))
    return Error(Code::unsupported,
                 "tensor " + name + ": type " + std::string(type_name(t->type)) + " is not supported for matmul");
  WeightMatrix w;
  w.type = t->type;
  w.data = t->data;
  w.n_in = n_in;
  w.n_out = n_out;
  w.row_bytes = row_bytes(type_info(t->type), static_cast<uint64_t>(n_in));
  return w;
}

Result<const float*> TensorBinder::vector(const std::string& name, int64_t n) const {
  const gguf::TensorInfo* t = f_.tensor(name);
  if (!t) return Error(Code::not_found, "tensor " + name + " is missing");
  return vector_opt(name, n);
}

Result<const float*> TensorBinder::vector_opt(const std::string& name, int64_t n) const {
  const gguf::TensorInfo* t = f_.tensor(name);
  if (!t) return static_cast<const float*>(nullptr);
  if (t->n_elements != static_cast<uint64_t>(n) || t->ne[0] != static_cast<uint64_t>(n))
    return Error(Code::corrupt,
                 "tensor " + name + " has shape " + shape_str(*t) + ", expected [" + std::to_string(n) + "]");
  if (t->type != GgmlType::F32)
    return Error(Code::unsupported,
                 "tensor " + name + ": type " + std::string(type_name(t->type)) + " (expected f32 for a 1-D weight)");
  if (reinterpret_cast<uintptr_t>(t->data) % alignof(float) != 0)
    return Error(Code::corrupt, "tensor " + name + " is not 4-byte aligned");
  return reinterpret_cast<const float*>(t->data);
}

Result<void> load_common_hparams(const gguf::File& f, TransformerConfig& c) {
  auto u32 = [&](std::string_view suffix) -> Result<int> {
    NURL_ASSIGN(uint32_t v, f.get_u32(key(c, suffix)));
    if (v == 0 || v > (1u << 24))
      return Error(Code::corrupt, key(c, suffix) + " = " + std::to_string(v) + " is out of range");
    return static_cast<int>(v);
  };
  NURL_ASSIGN(c.n_embd, u32("embedding_length"));
  NURL_ASSIGN(c.n_layer, u32("block_count"));
  NURL_ASSIGN(c.n_ff, u32("feed_forward_length"));
  NURL_ASSIGN(c.n_head, u32("attention.head_count"));
  NURL_ASSIGN(c.n_ctx_train, u32("context_length"));
  c.n_head_kv = c.n_head;
  if (f.has(key(c, "attention.head_count_kv"))) {
    NURL_ASSIGN(c.n_head_kv, u32("attention.head_count_kv"));
  }
  if (c.n_head % c.n_head_kv != 0)
    return Error(Code::corrupt, key(c, "attention.head_count") + " (" + std::to_string(c.n_head) +
                                    ") is not a multiple of head_count_kv (" + std::to_string(c.n_head_kv) + ")");
  c.head_dim = c.n_embd / c.n_head;
  if (f.has(key(c, "attention.key_length"))) {
    NURL_ASSIGN(c.head_dim, u32("attention.key_length"));
  }
  c.head_dim_v = c.head_dim;
  if (f.has(key(c, "attention.value_length"))) {
    NURL_ASSIGN(c.head_dim_v, u32("attention.value_length"));
  }
  NURL_ASSIGN(c.rms_eps, f.get_f32(key(c, "attention.layer_norm_rms_epsilon")));
  NURL_ASSIGN(c.rope_base, f.get_f32_or(key(c, "rope.freq_base"), 10000.0f));
  NURL_ASSIGN(uint32_t n_rot, f.get_u32_or(key(c, "rope.dimension_count"), static_cast<uint32_t>(c.head_dim)));
  if (n_rot == 0 || n_rot > static_cast<uint32_t>(c.head_dim) || n_rot % 2 != 0)
    return Error(Code::corrupt, key(c, "rope.dimension_count") + " = " + std::to_string(n_rot) +
                                    " must be even and at most head_dim " + std::to_string(c.head_dim));
  c.n_rot = static_cast<int>(n_rot);

  // Rope scaling: linear (positions divided by the factor); other types are refused by name.
  NURL_ASSIGN(std::string scaling, f.get_string_or(key(c, "rope.scaling.type"), ""));
  NURL_ASSIGN(float factor, f.get_f32_or(key(c, "rope.scaling.factor"), 0.0f));
  if (scaling.empty() || scaling == "none") {
    if (scaling.empty() && f.has(key(c, "rope.scale_linear"))) {
      NURL_ASSIGN(float lin, f.get_f32(key(c, "rope.scale_linear")));
      if (lin > 0) c.rope_freq_scale = 1.0f / lin;
    }
  } else if (scaling == "linear") {
    if (factor > 0) c.rope_freq_scale = 1.0f / factor;
  } else {
    return Error(Code::unsupported,
                 key(c, "rope.scaling.type") + " = \"" + scaling + "\" is not supported (only linear)");
  }
  NURL_ASSIGN(c.rope_attn_factor, f.get_f32_or(key(c, "rope.scaling.attn_factor"), 1.0f));
  NURL_ASSIGN(uint32_t n_ctx_orig,
              f.get_u32_or(key(c, "rope.scaling.original_context_length"), static_cast<uint32_t>(c.n_ctx_train)));
  c.n_ctx_orig = static_cast<int>(n_ctx_orig);
  c.rope_base_swa = c.rope_base;
  c.attn_scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  NURL_ASSIGN(c.attn_softcap, f.get_f32_or(key(c, "attn_logit_softcapping"), 0.0f));
  NURL_ASSIGN(c.final_softcap, f.get_f32_or(key(c, "final_logit_softcapping"), 0.0f));
  c.layer_is_swa.assign(static_cast<size_t>(c.n_layer), 0);

  const gguf::TensorInfo* emb = f.tensor("token_embd.weight");
  if (!emb) return Error(Code::not_found, "tensor token_embd.weight is missing");
  if (emb->n_dims != 2 || emb->ne[0] != static_cast<uint64_t>(c.n_embd))
    return Error(Code::corrupt, "tensor token_embd.weight has shape " + shape_str(*emb) + ", expected [" +
                                    std::to_string(c.n_embd) + ", n_vocab]");
  c.n_vocab = static_cast<int>(emb->ne[1]);
  return ok();
}

Result<void> bind_decoder(const gguf::File& f, const TransformerConfig& c, const LayerLayout& lay, ModelWeights& w) {
  TensorBinder b(f);
  NURL_ASSIGN(w.token_embd, b.matrix("token_embd.weight", c.n_embd, c.n_vocab));
  if (!can_dequant(w.token_embd.type))
    return Error(Code::unsupported, "tensor token_embd.weight: type " + std::string(type_name(w.token_embd.type)) +
                                        " cannot be dequantised");
  NURL_ASSIGN(w.output_norm, b.vector("output_norm.weight", c.n_embd));
  if (c.tied_output) {
    w.output = w.token_embd;
  } else {
    NURL_ASSIGN(w.output, b.matrix("output.weight", c.n_embd, c.n_vocab));
  }
  NURL_ASSIGN(w.rope_freqs, b.vector_opt("rope_freqs.weight", c.n_rot / 2));
  NURL_ASSIGN(w.rope_factors_short, b.vector_opt("rope_factors_short.weight", c.n_rot / 2));
  NURL_ASSIGN(w.rope_factors_long, b.vector_opt("rope_factors_long.weight", c.n_rot / 2));
  if (!w.rope_factors_short != !w.rope_factors_long)
    return Error(Code::not_found,
                 std::string("tensor ") +
                     (w.rope_factors_short ? "rope_factors_long.weight" : "rope_factors_short.weight") +
                     " is missing (LongRoPE needs both factor tensors)");

  const int q_dim = c.q_dim(), k_dim = c.k_dim(), v_dim = c.v_dim();
  w.layers.resize(static_cast<size_t>(c.n_layer));
  for (int il = 0; il < c.n_layer; ++il) {
    LayerWeights& L = w.layers[static_cast<size_t>(il)];
    NURL_ASSIGN(L.attn_norm, b.vector(blk(il, "attn_norm.weight"), c.n_embd));
    if (lay.fused_qkv) {
      NURL_ASSIGN(L.wqkv_fused, b.matrix(blk(il, "attn_qkv.weight"), c.n_embd, q_dim + k_dim + v_dim));
      L.wq = L.wqkv_fused.rows(0, q_dim);
      L.wk = L.wqkv_fused.rows(q_dim, k_dim);
      L.wv = L.wqkv_fused.rows(q_dim + k_dim, v_dim);
    } else {
      NURL_ASSIGN(L.wq, b.matrix(blk(il, "attn_q.weight"), c.n_embd, q_dim));
      NURL_ASSIGN(L.wk, b.matrix(blk(il, "attn_k.weight"), c.n_embd, k_dim));
      NURL_ASSIGN(L.wv, b.matrix(blk(il, "attn_v.weight"), c.n_embd, v_dim));
    }
    if (lay.qkv_bias) {
      NURL_ASSIGN(L.bq, b.vector(blk(il, "attn_q.bias"), q_dim));
      NURL_ASSIGN(L.bk, b.vector(blk(il, "attn_k.bias"), k_dim));
      NURL_ASSIGN(L.bv, b.vector(blk(il, "attn_v.bias"), v_dim));
    }
    if (lay.qk_norm) {
      NURL_ASSIGN(L.q_norm, b.vector(blk(il, "attn_q_norm.weight"), c.head_dim));
      NURL_ASSIGN(L.k_norm, b.vector(blk(il, "attn_k_norm.weight"), c.head_dim));
    }
    NURL_ASSIGN(L.wo, b.matrix(blk(il, "attn_output.weight"), c.n_head * c.head_dim_v, c.n_embd));
    if (lay.post_norms) {
      NURL_ASSIGN(L.post_attn_norm, b.vector(blk(il, "post_attention_norm.weight"), c.n_embd));
      NURL_ASSIGN(L.post_ffn_norm, b.vector(blk(il, "post_ffw_norm.weight"), c.n_embd));
    }
    NURL_ASSIGN(L.ffn_norm, b.vector(blk(il, "ffn_norm.weight"), c.n_embd));
    if (lay.fused_gate_up) {
      NURL_ASSIGN(L.w_gate_up_fused, b.matrix(blk(il, "ffn_up.weight"), c.n_embd, 2 * c.n_ff));
      L.w_gate = L.w_gate_up_fused.rows(0, c.n_ff);
      L.w_up = L.w_gate_up_fused.rows(c.n_ff, c.n_ff);
    } else {
      NURL_ASSIGN(L.w_gate, b.matrix(blk(il, "ffn_gate.weight"), c.n_embd, c.n_ff));
      NURL_ASSIGN(L.w_up, b.matrix(blk(il, "ffn_up.weight"), c.n_embd, c.n_ff));
    }
    NURL_ASSIGN(L.w_down, b.matrix(blk(il, "ffn_down.weight"), c.n_ff, c.n_embd));
  }
  return ok();
}

}  // namespace nurl
