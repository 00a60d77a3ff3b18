// The shared decoder forward, in paper order: embed → per layer [norm → q,k,v → (q/k norm) → rope →
// cache → attention → wo → (post norm) → residual → norm → gate/up → act → down → (post norm) →
// residual] → final norm → logits. Numerics follow llama.cpp's CPU backend: RMSNorm sums in double,
// activations converted to the weight's dot type, q rounded to the cache type before q·k,
// GELU through f16 rounding (its lookup table), rope angles stepped by a float ratio.
#include "engine/arch/transformer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>

#include "engine/arch/half.h"
#include "engine/runtime/thread-pool.h"

namespace nurl {
namespace {

constexpr int kParallelRows = 4;  // below this many rows, elementwise work stays on the caller

template <typename F>
void for_rows(ThreadPool& pool, int n, F&& fn) {
  if (n < kParallelRows) {
    for (int i = 0; i < n; ++i) fn(i);
  } else {
    pool.parallel_for(n, [&](int i, int) { fn(i); });
  }
}

// y = x / sqrt(mean(x²) + eps) * w   (w may be null)
void rms_norm(const float* x, const float* w, float* y, int n, float eps) {
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += static_cast<double>(x[i]) * x[i];
  const float scale = 1.0f / std::sqrt(static_cast<float>(sum / n) + eps);
  if (w) {
    for (int i = 0; i < n; ++i) y[i] = (x[i] * scale) * w[i];
  } else {
    for (int i = 0; i < n; ++i) y[i] = x[i] * scale;
  }
}

float gelu_tanh(float x) {
  constexpr float kSqrt2OverPi = 0.79788456080286535587989211986876f;
  return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * x * (1.0f + 0.044715f * x * x)));
}

// llama.cpp evaluates GELU through a table indexed by the f16 of x and storing f16 results.
float gelu_f16_table(float x) {
  if (x <= -10.0f) return 0.0f;
  if (x >= 10.0f) return x;
  return round_f16(gelu_tanh(round_f16(x)));
}

// cos/sin table of one position: n_rot/2 (cos, sin) pairs.
void rope_table(float* cs, int pos, int n_rot, float base, float freq_scale, const float* freq_factors, float mscale) {
  const float theta_scale = std::pow(base, -2.0f / static_cast<float>(n_rot));
  float theta_base = static_cast<float>(pos);
  for (int i = 0; i < n_rot / 2; ++i) {
    const float ff = freq_factors ? freq_factors[i] : 1.0f;
    const float theta = freq_scale * (theta_base / ff);
    cs[2 * i] = std::cos(theta) * mscale;
    cs[2 * i + 1] = std::sin(theta) * mscale;
    theta_base *= theta_scale;
  }
}

void rope_apply(float* v, const float* cs, int n_rot, RopeStyle style) {
  const int half = n_rot / 2;
  if (style == RopeStyle::norm) {
    for (int i = 0; i < half; ++i) {
      const float c = cs[2 * i], s = cs[2 * i + 1];
      const float x0 = v[2 * i], x1 = v[2 * i + 1];
      v[2 * i] = x0 * c - x1 * s;
      v[2 * i + 1] = x0 * s + x1 * c;
    }
  } else {
    for (int i = 0; i < half; ++i) {
      const float c = cs[2 * i], s = cs[2 * i + 1];
      const float x0 = v[i], x1 = v[i + half];
      v[i] = x0 * c - x1 * s;
      v[i + half] = x0 * s + x1 * c;
    }
  }
}

// Runs linear layers on one input buffer, quantising the activations once per activation type.
class LinearInput {
 public:
  LinearInput(const KernelSet& ks, ForwardState& st, ThreadPool& pool, const float* x, int64_t x_stride, int n_rows,
              int64_t n)
      : ks_(ks), st_(st), pool_(pool), x_(x), x_stride_(x_stride), n_rows_(n_rows), n_(n) {}

  // Jobs whose weights share an activation type run as one parallel job.
  void apply(std::initializer_list<MatJob> jobs) {
    MatJob group[4];
    size_t n_group = 0;
    GgmlType act = GgmlType::F32;
    for (const MatJob& j : jobs) {
      const GgmlType a = ks_.mat_for(j.w->type)->act_type;
      if (n_group > 0 && a != act) {
        run(std::span<const MatJob>(group, n_group));
        n_group = 0;
      }
      act = a;
      group[n_group++] = j;
    }
    if (n_group > 0) run(std::span<const MatJob>(group, n_group));
  }

 private:
  void run(std::span<const MatJob> jobs) {
    const GgmlType wt = jobs[0].w->type;
    const GgmlType a = ks_.mat_for(wt)->act_type;
    if (!have_ || a != act_type_) {
      quantize_activations(ks_, wt, x_, x_stride_, n_rows_, n_, st_.act.data(), st_.act_stride, pool_);
      have_ = true;
      act_type_ = a;
    }
    matmul(ks_, jobs, st_.act.data(), st_.act_stride, n_rows_, pool_);
  }

  const KernelSet& ks_;
  ForwardState& st_;
  ThreadPool& pool_;
  const float* x_;
  int64_t x_stride_;
  int n_rows_;
  int64_t n_;
  bool have_ = false;
  GgmlType act_type_ = GgmlType::F32;
};

// Cuts the batch into attention blocks: runs of consecutive positions of one sequence, at most
// max_tokens each. starts[b] is block b's first token, starts[n_blocks] = n; returns n_blocks.
int query_blocks(const int32_t* pos, const int32_t* seq, int n, int max_tokens, int* starts) {
  int n_blocks = 0;
  for (int i = 0; i < n;) {
    starts[n_blocks++] = i;
    int j = i + 1;
    while (j < n && j - i < max_tokens && seq[j] == seq[i] && pos[j] == pos[j - 1] + 1) ++j;
    i = j;
  }
  starts[n_blocks] = n;
  return n_blocks;
}

void store_row(const KernelSet& ks, uint8_t* dst, const float* src, int n, KvType type) {
  if (type == KvType::f16) {
    ks.f32_to_f16_row(src, reinterpret_cast<uint16_t*>(dst), n);
  } else {
    std::memcpy(dst, src, static_cast<size_t>(n) * 4);
  }
}

}  // namespace

uint64_t KvCache::bytes_for(const TransformerConfig& c, int n_ctx, int n_seq, KvType type) {
  const uint64_t elem = type == KvType::f16 ? 2 : 4;
  return static_cast<uint64_t>(c.n_layer) * n_seq * n_ctx * (c.k_dim() + c.v_dim()) * elem;
}

uint64_t ForwardState::scratch_bytes(const TransformerConfig& c, int n_ctx, int n_batch, int n_threads) {
  const uint64_t widest = std::max({c.n_embd, c.n_ff, c.q_dim(), c.n_head * c.head_dim_v});
  uint64_t floats = static_cast<uint64_t>(n_batch) * (3ull * c.n_embd + c.q_dim() + c.k_dim() + c.v_dim() +
                                                      c.n_head * c.head_dim_v + 2ull * c.n_ff + 2ull * c.n_rot);
  // The attention kernels' per-thread scratch (kernels/attention.h). One token: a query-head
  // group's rounded q, scores over the context and accumulators, plus a chunk of converted cache
  // rows. A block of tokens: about kAttnBlockRows rows' q, scores of one key block, outputs and
  // softmax state, plus one converted key and value block.
  const uint64_t group = static_cast<uint64_t>(c.n_head / std::max(1, c.n_head_kv));
  const uint64_t block_rows = std::max<uint64_t>(group, kAttnBlockRows);
  floats += static_cast<uint64_t>(n_threads) *
            (group * (static_cast<uint64_t>(n_ctx) + 8 + c.head_dim + c.head_dim_v + 1) +
             32ull * std::max(c.head_dim, c.head_dim_v) + block_rows * (c.head_dim + c.head_dim_v + kAttnKeyBlock + 3) +
             static_cast<uint64_t>(kAttnKeyBlock) * (c.head_dim + c.head_dim_v));
  return floats * 4 + static_cast<uint64_t>(n_batch) * (widest * 4 + 64);
}

std::unique_ptr<ForwardState> ForwardState::create(const TransformerConfig& c, int n_ctx, int n_seq, int n_batch,
                                                   KvType kv, int n_threads) {
  auto st = std::make_unique<ForwardState>();
  st->kv.type = kv;
  st->kv.n_layer = c.n_layer;
  st->kv.n_seq = n_seq;
  st->kv.n_ctx = n_ctx;
  st->kv.k_dim = c.k_dim();
  st->kv.v_dim = c.v_dim();
  const size_t kv_rows = static_cast<size_t>(c.n_layer) * n_seq * n_ctx;
  st->kv.k = ZeroPages<uint8_t>(kv_rows * c.k_dim() * st->kv.elem_bytes());
  st->kv.v = ZeroPages<uint8_t>(kv_rows * c.v_dim() * st->kv.elem_bytes());
  st->n_batch = n_batch;
  st->n_threads = n_threads;
  const size_t nb = static_cast<size_t>(n_batch);
  st->x = ZeroPages<float>(nb * c.n_embd);
  st->h = ZeroPages<float>(nb * c.n_embd);
  st->qkv = ZeroPages<float>(nb * (c.q_dim() + c.k_dim() + c.v_dim()));
  st->attn = ZeroPages<float>(nb * c.n_head * c.head_dim_v);
  st->ff = ZeroPages<float>(nb * 2 * c.n_ff);
  st->out = ZeroPages<float>(nb * c.n_embd);
  // Widest activation row any matmul converts: f32 of the widest input is an upper bound for
  // every dot type (f16/bf16/q8 rows are smaller).
  const int64_t widest = std::max({c.n_embd, c.n_ff, c.n_head * c.head_dim_v});
  st->act_stride = (static_cast<size_t>(widest) * 4 + 63) / 64 * 64;
  st->act = ZeroPages<uint8_t>(nb * st->act_stride);
  st->rope_cs.assign(nb * std::max(c.n_rot, 2), 0);
  st->rope_cs_swa.assign(nb * std::max(c.n_rot, 2), 0);
  st->pos_c.assign(nb, 0);
  st->seq_c.assign(nb, 0);
  st->rows_c.assign(nb, 0);
  st->attn_blocks.assign(nb + 1, 0);
  return st;
}

void transformer_forward(const TransformerConfig& c, const ModelWeights& w, const KernelSet& ks, ForwardState& st,
                         ThreadPool& pool, const int32_t* tokens, const int32_t* pos, const int32_t* seq, int n,
                         std::span<const int> out_rows, float* logits, float* hidden) {
  const int n_out = static_cast<int>(out_rows.size());
  const int n_embd = c.n_embd;
  const int q_dim = c.q_dim(), k_dim = c.k_dim(), v_dim = c.v_dim();
  const int qkv_stride = q_dim + k_dim + v_dim;
  const int attn_dim = c.n_head * c.head_dim_v;
  const int n_ff = c.n_ff;
  const int group = c.n_head / c.n_head_kv;
  const float attn_scale = c.attn_scale;
  KvCache& kv = st.kv;
  const size_t kv_elem = kv.elem_bytes();

  // Embeddings.
  for_rows(pool, n, [&](int i) {
    float* xi = st.x.data() + static_cast<size_t>(i) * n_embd;
    dequant_row(w.token_embd, tokens[i], xi);
    if (c.embd_scale != 1.0f)
      for (int j = 0; j < n_embd; ++j) xi[j] *= c.embd_scale;
  });

  // Rope tables per token (global and sliding-window bases).
  bool any_swa = false;
  for (int l = 0; l < c.n_layer; ++l) any_swa |= c.layer_is_swa[static_cast<size_t>(l)] != 0;
  // Frequency divisors: llama 3's rope_freqs, or LongRoPE's short/long set chosen by this
  // context's length against the original one (as llama.cpp chooses).
  const float* freq_factors = w.rope_freqs;
  if (!freq_factors && w.rope_factors_short)
    freq_factors = kv.n_ctx > c.n_ctx_orig ? w.rope_factors_long : w.rope_factors_short;
  for (int i = 0; i < n; ++i) {
    rope_table(st.rope_cs.data() + static_cast<size_t>(i) * c.n_rot, pos[i], c.n_rot, c.rope_base, c.rope_freq_scale,
               freq_factors, c.rope_attn_factor);
    if (any_swa)
      rope_table(st.rope_cs_swa.data() + static_cast<size_t>(i) * c.n_rot, pos[i], c.n_rot, c.rope_base_swa,
                 c.rope_freq_scale_swa, freq_factors, c.rope_attn_factor);
  }

  for (int il = 0; il < c.n_layer; ++il) {
    const LayerWeights& L = w.layers[static_cast<size_t>(il)];
    const bool swa = c.layer_is_swa[static_cast<size_t>(il)] != 0;
    const float* cs_all = swa ? st.rope_cs_swa.data() : st.rope_cs.data();

    // --- attention block ---
    for_rows(pool, n, [&](int i) {
      rms_norm(st.x.data() + static_cast<size_t>(i) * n_embd, L.attn_norm,
               st.h.data() + static_cast<size_t>(i) * n_embd, n_embd, c.rms_eps);
    });
    {
      LinearInput in(ks, st, pool, st.h.data(), n_embd, n, n_embd);
      float* qkv = st.qkv.data();
      if (L.wqkv_fused.present()) {
        in.apply({{&L.wqkv_fused, qkv, qkv_stride, nullptr}});
      } else {
        in.apply({{&L.wq, qkv, qkv_stride, L.bq},
                  {&L.wk, qkv + q_dim, qkv_stride, L.bk},
                  {&L.wv, qkv + q_dim + k_dim, qkv_stride, L.bv}});
      }
    }
    // q/k norm, rope, store K/V.
    for_rows(pool, n, [&](int i) {
      float* q = st.qkv.data() + static_cast<size_t>(i) * qkv_stride;
      float* k = q + q_dim;
      float* v = k + k_dim;
      const float* cs = cs_all + static_cast<size_t>(i) * c.n_rot;
      for (int hh = 0; hh < c.n_head; ++hh) {
        float* qh = q + hh * c.head_dim;
        if (L.q_norm) rms_norm(qh, L.q_norm, qh, c.head_dim, c.rms_eps);
        rope_apply(qh, cs, c.n_rot, c.rope_style);
      }
      for (int hh = 0; hh < c.n_head_kv; ++hh) {
        float* kh = k + hh * c.head_dim;
        if (L.k_norm) rms_norm(kh, L.k_norm, kh, c.head_dim, c.rms_eps);
        rope_apply(kh, cs, c.n_rot, c.rope_style);
      }
      store_row(ks, kv.k_row(il, seq[i], pos[i]), k, k_dim, kv.type);
      store_row(ks, kv.v_row(il, seq[i], pos[i]), v, v_dim, kv.type);
    });
    // Last layer: past the cache writes only the output rows matter; compact them to the front
    // (out_rows is ascending, so row j never overwrites a row still to be moved).
    if (il == c.n_layer - 1 && n_out < n) {
      for (int j = 0; j < n_out; ++j) {
        const int r = out_rows[static_cast<size_t>(j)];
        st.pos_c[static_cast<size_t>(j)] = pos[r];
        st.seq_c[static_cast<size_t>(j)] = seq[r];
        st.rows_c[static_cast<size_t>(j)] = j;
        if (r == j) continue;
        std::memcpy(st.x.data() + static_cast<size_t>(j) * n_embd, st.x.data() + static_cast<size_t>(r) * n_embd,
                    static_cast<size_t>(n_embd) * 4);
        std::memcpy(st.qkv.data() + static_cast<size_t>(j) * qkv_stride,
                    st.qkv.data() + static_cast<size_t>(r) * qkv_stride, static_cast<size_t>(q_dim) * 4);
      }
      pos = st.pos_c.data();
      seq = st.seq_c.data();
      out_rows = std::span<const int>(st.rows_c.data(), static_cast<size_t>(n_out));
      n = n_out;
      if (n == 0) return;
    }
    // Attention: one task per (block of query tokens, KV head, part of its query-head group).
    // A block is a run of consecutive positions of one sequence, about kAttnBlockRows query rows
    // (tokens × heads), so a prompt chunk reads each cache row once per block, not per token. A
    // group is split only when there are too few tasks to keep every thread busy (decode). The
    // blocks with the most keys go first (tasks are claimed in order).
    const int n_blocks = query_blocks(pos, seq, n, std::max(1, kAttnBlockRows / group), st.attn_blocks.data());
    const int parts = std::min(group, std::max(1, 2 * pool.n_threads() / std::max(1, n_blocks * c.n_head_kv)));
    const int per_part = (group + parts - 1) / parts;
    const int window = swa && c.n_swa > 0 ? c.n_swa : 0;
    pool.parallel_for(n_blocks * c.n_head_kv * parts, [&](int task, int) {
      const int b = n_blocks - 1 - task / (c.n_head_kv * parts);
      const int kvh = task / parts % c.n_head_kv;
      const int h0 = kvh * group + task % parts * per_part;
      const int h1 = std::min((kvh + 1) * group, h0 + per_part);
      if (h0 >= h1) return;
      const int i0 = st.attn_blocks[static_cast<size_t>(b)], n_tok = st.attn_blocks[static_cast<size_t>(b) + 1] - i0;
      // The window's first key, rounded down to a key block: the kernel masks the rest, and a
      // token's result is the same however the prompt is chunked.
      const int p0 = window > 0 ? std::max(0, pos[i0] - window + 1) / kAttnKeyBlock * kAttnKeyBlock : 0;
      AttnArgs a;
      a.f16 = kv.type == KvType::f16;
      a.q = st.qkv.data() + static_cast<size_t>(i0) * qkv_stride + h0 * c.head_dim;
      a.q_stride = c.head_dim;
      a.q_tok_stride = qkv_stride;
      a.k = kv.k_row(il, seq[i0], p0) + static_cast<size_t>(kvh) * c.head_dim * kv_elem;
      a.k_stride = static_cast<size_t>(k_dim) * kv_elem;
      a.v = kv.v_row(il, seq[i0], p0) + static_cast<size_t>(kvh) * c.head_dim_v * kv_elem;
      a.v_stride = static_cast<size_t>(v_dim) * kv_elem;
      a.n_q = h1 - h0;
      a.n_tok = n_tok;
      a.n_kv = pos[i0 + n_tok - 1] - p0 + 1;
      a.window = window;
      a.head_dim = c.head_dim;
      a.head_dim_v = c.head_dim_v;
      a.scale = attn_scale;
      a.softcap = c.attn_softcap;
      a.out = st.attn.data() + static_cast<size_t>(i0) * attn_dim + h0 * c.head_dim_v;
      a.out_stride = c.head_dim_v;
      a.out_tok_stride = attn_dim;
      ks.attend(a);
    });
    {
      LinearInput in(ks, st, pool, st.attn.data(), attn_dim, n, attn_dim);
      in.apply({{&L.wo, st.out.data(), n_embd, nullptr}});
    }
    for_rows(pool, n, [&](int i) {
      float* o = st.out.data() + static_cast<size_t>(i) * n_embd;
      if (L.post_attn_norm) rms_norm(o, L.post_attn_norm, o, n_embd, c.rms_eps);
      float* xi = st.x.data() + static_cast<size_t>(i) * n_embd;
      for (int j = 0; j < n_embd; ++j) xi[j] += o[j];
      rms_norm(xi, L.ffn_norm, st.h.data() + static_cast<size_t>(i) * n_embd, n_embd, c.rms_eps);
    });

    // --- feed-forward block ---
    {
      LinearInput in(ks, st, pool, st.h.data(), n_embd, n, n_embd);
      if (L.w_gate_up_fused.present()) {
        in.apply({{&L.w_gate_up_fused, st.ff.data(), 2 * n_ff, nullptr}});
      } else {
        in.apply({{&L.w_gate, st.ff.data(), 2 * n_ff, nullptr}, {&L.w_up, st.ff.data() + n_ff, 2 * n_ff, nullptr}});
      }
    }
    for_rows(pool, n, [&](int i) {
      float* g = st.ff.data() + static_cast<size_t>(i) * 2 * n_ff;
      const float* u = g + n_ff;
      if (c.ffn_act == FfnActivation::silu) {
        ks.silu_mul(g, u, n_ff);
      } else {
        for (int j = 0; j < n_ff; ++j) g[j] = gelu_f16_table(g[j]) * u[j];
      }
    });
    {
      LinearInput in(ks, st, pool, st.ff.data(), 2 * n_ff, n, n_ff);
      in.apply({{&L.w_down, st.out.data(), n_embd, nullptr}});
    }
    for_rows(pool, n, [&](int i) {
      float* o = st.out.data() + static_cast<size_t>(i) * n_embd;
      if (L.post_ffn_norm) rms_norm(o, L.post_ffn_norm, o, n_embd, c.rms_eps);
      float* xi = st.x.data() + static_cast<size_t>(i) * n_embd;
      for (int j = 0; j < n_embd; ++j) xi[j] += o[j];
    });
  }

  // Output rows: final norm (compacted into h), hidden copy, logits.
  if (n_out == 0) return;
  for (int j = 0; j < n_out; ++j)
    rms_norm(st.x.data() + static_cast<size_t>(out_rows[static_cast<size_t>(j)]) * n_embd, w.output_norm,
             st.h.data() + static_cast<size_t>(j) * n_embd, n_embd, c.rms_eps);
  if (hidden) std::memcpy(hidden, st.h.data(), static_cast<size_t>(n_out) * n_embd * 4);
  if (logits) {
    LinearInput in(ks, st, pool, st.h.data(), n_embd, n_out, n_embd);
    in.apply({{&w.output, logits, c.n_vocab, nullptr}});
    if (c.final_softcap > 0) {
      const float cap = c.final_softcap;
      for (size_t j = 0; j < static_cast<size_t>(n_out) * c.n_vocab; ++j) logits[j] = cap * std::tanh(logits[j] / cap);
    }
  }
}

}  // namespace nurl
