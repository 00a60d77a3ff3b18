// Context: the mutable state for running a Model — the KV cache for up to n_seq sequences of
// n_ctx positions each, scratch buffers (all allocated at creation, nothing in decode) and the
// thread pool. decode() runs one batched forward over a list of (seq, pos, token) entries,
// possibly from several sequences; outputs of a sequence never depend on the others in the batch.
//
// Cache invariant: sequence s holds positions [0, n_pos(s)) in slots 0..n_pos(s)-1. A batch
// must extend each sequence contiguously: its entries for s have positions n_pos(s), n_pos(s)+1,
// ... in batch order. truncate() drops a suffix (prompt-cache reuse), clear() empties.
// A Context is used by one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/error.h"
#include "engine/runtime/model.h"

namespace nurl {

class ThreadPool;
struct ForwardState;

struct ContextOptions {
  int n_ctx = 4096;       // positions per sequence; clamped to the model's context length
  int n_seq = 1;          // sequences that can live in the cache at once
  int n_batch = 512;      // most entries one forward pass takes; longer batches are split
  int n_threads = 0;      // 0: all usable cores
  bool adaptive_threads = true;  // drop a thread while another process holds one of our cores
  KvType kv_type = KvType::f16;
  bool embeddings = false;  // keep the final (normed) hidden state of output entries
  bool logits = true;       // compute logits for output entries (off: embeddings only)
  int max_outputs = 0;      // output entries per decode() call; 0: n_seq (one per sequence)
};

struct BatchEntry {
  int32_t token = 0;
  int32_t pos = 0;
  int32_t seq = 0;
  bool logits = false;  // produce a logits row (and hidden row when embeddings are on)
};

class Context {
 public:
  static Result<std::unique_ptr<Context>> create(std::shared_ptr<const Model> model, const ContextOptions& opts = {});
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  // Runs the forward over `batch`. Errors only for an invalid batch (token out of range, seq out
  // of range, non-contiguous positions, cache full), checked before any state changes.
  // Output rows are numbered in batch order among the entries with logits = true.
  Result<void> decode(std::span<const BatchEntry> batch);

  int n_outputs() const { return n_outputs_; }
  std::span<const float> logits(int i) const;  // (n_vocab) of output row i of the last decode
  std::span<const float> hidden(int i) const;  // (n_embd) final normed hidden state; needs embeddings

  // Convenience for one sequence: decode `tokens` at positions n_pos(seq)... and return the
  // logits of the last one (the other entries produce none).
  Result<std::span<const float>> eval(std::span<const int32_t> tokens, int seq = 0);

  void clear(int seq);               // forget all positions of seq
  void clear_all();
  void truncate(int seq, int n_pos); // keep positions [0, n_pos) of seq (no-op when already shorter)
  int n_pos(int seq) const { return n_pos_[static_cast<size_t>(seq)]; }

  int n_ctx() const { return n_ctx_; }
  int n_seq() const { return static_cast<int>(n_pos_.size()); }
  int n_batch() const { return n_batch_; }
  int n_threads() const;
  void set_n_threads(int n);  // 1..the pool size given at creation
  const Model& model() const { return *model_; }
  const std::shared_ptr<const Model>& model_ptr() const { return model_; }

 private:
  Context() = default;
  std::shared_ptr<const Model> model_;
  int n_ctx_ = 0;
  int n_batch_ = 0;
  bool embeddings_ = false;
  std::vector<int> n_pos_;  // per sequence
  std::unique_ptr<ForwardState> state_;  // KV cache + scratch (arch/transformer.h)
  std::vector<float> logits_;  // (n_outputs, n_vocab)
  std::vector<float> hidden_;  // (n_outputs, n_embd) when embeddings
  int n_outputs_ = 0;
  int max_outputs_ = 0;
  bool want_logits_ = true;
  // Declared last, destroyed first: a thread finishing a recomputed task late may still read the
  // weights and the state above until the pool has joined it.
  std::unique_ptr<ThreadPool> pool_;
};

}  // namespace nurl
