// BatchRunner: continuous batching of up to ctx.n_seq() sequences on one Context. Each step()
// runs one batched forward: one token for every decoding sequence, then prefill chunks of new
// sequences with what is left of the batch budget (n_batch tokens). A sequence occupies one
// Context sequence slot from add() until it finishes; a finished slot keeps its cached tokens,
// and add() picks the free slot sharing the longest prefix with the new prompt (prompt-cache reuse).
//
// Threading: a BatchRunner and its Context are used by one thread (the model's worker); callbacks
// run on it. Cross-thread cancellation goes through on_token returning false (the worker's
// caller checks its own flag there) or through cancel() posted to that thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "core/error.h"
#include "engine/runtime/context.h"
#include "engine/runtime/session.h"

namespace nurl {

class BatchRunner {
 public:
  using SeqId = uint64_t;
  // Called exactly once per added sequence, from step() (or cancel()), with the outcome.
  using OnDone = std::function<void(SeqId, Result<GenerateResult>)>;

  BatchRunner(Context& ctx, const Tokenizer& tok);

  // Queues a sequence. Errors: no free slot (busy), invalid options, empty prompt, a prompt that
  // does not fit with truncate off. Nothing is evaluated before the next step().
  Result<SeqId> add(std::vector<int32_t> prompt, const Options& opts, OnToken on_token, OnDone on_done);
  // Finishes a sequence with done_reason cancelled (its on_done runs now). False: unknown id.
  bool cancel(SeqId id);

  // One batched forward over all active sequences. Returns the number still active afterwards.
  // A forward error fails the sequences that were in the batch (their on_done gets the error)
  // and is returned.
  Result<int> step();

  int n_active() const;
  int n_free() const { return static_cast<int>(slots_.size()) - n_active(); }

 private:
  struct Slot {
    SeqId id = 0;
    std::unique_ptr<Generation> gen;  // null when free
    OnDone on_done;
    std::optional<int32_t> next;      // token to feed in the next step (decoding)
    std::vector<int32_t> cached;      // tokens whose K/V are in the cache, positions 0..
    int32_t n_dropped = 0;
    // Filled while building a batch.
    int32_t n_in_batch = 0;
    int output = -1;
  };
  void finish(Slot& s);

  Context* ctx_;
  const Tokenizer* tok_;
  std::vector<Slot> slots_;
  std::vector<BatchEntry> batch_;
  SeqId next_id_ = 1;
};

}  // namespace nurl
