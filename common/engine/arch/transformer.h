// The one shared decoder: a pre-norm transformer forward over a batch of tokens from one or more
// sequences, driven by TransformerConfig flags (rope style, biases, q/k norms, post norms, GeGLU,
// sliding windows, soft-capping, fused tensors). ForwardState holds the KV cache and every
// scratch buffer, sized at creation for n_batch tokens; the forward allocates nothing and has no
// error paths (the caller validated the batch, the loader validated the weights).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/zero-pages.h"
#include "engine/arch/config.h"
#include "engine/arch/linear.h"

namespace nurl {

class ThreadPool;

// KV cache: per layer and sequence, n_ctx rows of k_dim (K, after rope) and v_dim (V) elements;
// row p holds position p. f16 by default (what llama.cpp's golden runs used).
struct KvCache {
  KvType type = KvType::f16;
  int n_layer = 0, n_seq = 0, n_ctx = 0, k_dim = 0, v_dim = 0;
  ZeroPages<uint8_t> k, v;  // resident only as far as positions were written

  size_t elem_bytes() const { return type == KvType::f16 ? 2 : 4; }
  uint8_t* k_row(int layer, int seq, int pos) {
    return k.data() + ((static_cast<size_t>(layer) * n_seq + seq) * n_ctx + pos) * k_dim * elem_bytes();
  }
  uint8_t* v_row(int layer, int seq, int pos) {
    return v.data() + ((static_cast<size_t>(layer) * n_seq + seq) * n_ctx + pos) * v_dim * elem_bytes();
  }
  static uint64_t bytes_for(const TransformerConfig& c, int n_ctx, int n_seq, KvType type);
};

struct ForwardState {
  // Sizes every buffer for batches of up to n_batch tokens and n_threads threads.
  static std::unique_ptr<ForwardState> create(const TransformerConfig& c, int n_ctx, int n_seq, int n_batch,
                                              KvType kv, int n_threads);
  // Bytes of scratch create() would allocate, plus the attention kernel's per-thread scratch
  // (memory estimates).
  static uint64_t scratch_bytes(const TransformerConfig& c, int n_ctx, int n_batch, int n_threads);

  KvCache kv;
  int n_batch = 0;
  int n_threads = 0;
  // Activations, row-major (n_batch rows); a batch of fewer tokens touches only its rows' pages.
  ZeroPages<float> x;       // (n_batch, n_embd) residual stream
  ZeroPages<float> h;       // (n_batch, n_embd) normed input of a sub-block
  ZeroPages<float> qkv;     // (n_batch, q_dim + k_dim + v_dim)
  ZeroPages<float> attn;    // (n_batch, n_head·head_dim_v)
  ZeroPages<float> ff;      // (n_batch, 2·n_ff) gate | up
  ZeroPages<float> out;     // (n_batch, n_embd) sub-block output
  ZeroPages<uint8_t> act;   // converted activations for the current matmul input
  size_t act_stride = 0;
  std::vector<float> rope_cs;      // (n_batch, n_rot) cos,sin pairs for the global rope
  std::vector<float> rope_cs_swa;  // (n_batch, n_rot) for sliding-window layers
  std::vector<int32_t> pos_c, seq_c;  // (n_batch) output rows' positions/sequences (last layer)
  std::vector<int> rows_c;            // (n_batch) 0, 1, ... for the compacted output rows
  std::vector<int> attn_blocks;       // (n_batch + 1) first token of each attention block
};

// Runs n tokens (n <= state.n_batch): tokens[i] at position pos[i] of sequence seq[i]. K/V of
// every token are stored in the cache first, then each token attends to positions
// [window start, pos[i]] of its own sequence. For each index in out_rows (ascending), writes the
// final normed hidden state to hidden (row-major, may be null) and the logits to logits (may be null).
void transformer_forward(const TransformerConfig& c, const ModelWeights& w, const KernelSet& ks, ForwardState& st,
                         ThreadPool& pool,
                         const int32_t* tokens, const int32_t* pos, const int32_t* seq, int n,
                         std::span<const int> out_rows, float* logits, float* hidden);

}  // namespace nurl
