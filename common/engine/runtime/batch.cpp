// Continuous batching over Context sequence slots (see batch.h).
#include "engine/runtime/batch.h"

#include <algorithm>

namespace nurl {

BatchRunner::BatchRunner(Context& ctx, const Tokenizer& tok) : ctx_(&ctx), tok_(&tok) {
  slots_.resize(static_cast<size_t>(ctx.n_seq()));
}

int BatchRunner::n_active() const {
  return static_cast<int>(std::count_if(slots_.begin(), slots_.end(), [](const Slot& s) { return s.gen != nullptr; }));
}

Result<BatchRunner::SeqId> BatchRunner::add(std::vector<int32_t> prompt, const Options& opts, OnToken on_token,
                                            OnDone on_done) {
  NURL_TRY(opts.validate());
  if (prompt.empty()) return Error(Code::invalid_argument, "generate: empty prompt (nothing to condition on)");
  const int32_t n_ctx = std::min(opts.num_ctx, ctx_->n_ctx());
  NURL_ASSIGN(PromptPlan plan, plan_prompt(prompt, n_ctx, opts));

  // The free slot whose cache shares the longest prefix with the prompt.
  Slot* best = nullptr;
  size_t best_common = 0;
  for (size_t i = 0; i < slots_.size(); ++i) {
    Slot& s = slots_[i];
    if (s.gen) continue;
    const size_t in_cache = std::min(s.cached.size(), static_cast<size_t>(ctx_->n_pos(static_cast<int>(i))));
    size_t common = 0;
    while (common < in_cache && common < plan.tokens.size() && s.cached[common] == plan.tokens[common]) ++common;
    if (!best || common > best_common) {
      best = &s;
      best_common = common;
    }
  }
  if (!best)
    return Error(Code::busy, "all " + std::to_string(slots_.size()) + " sequence slots of the context are in use");

  const int seq = static_cast<int>(best - slots_.data());
  best->gen = std::make_unique<Generation>(*tok_, opts, std::move(plan.tokens), n_ctx, ctx_->model().n_vocab(),
                                           std::move(on_token));
  best->gen->skip_cached(static_cast<int32_t>(best_common));
  const int32_t reused = best->gen->result().timings.prompt_cached;
  ctx_->truncate(seq, reused);
  best->cached.resize(static_cast<size_t>(reused));
  best->id = next_id_++;
  best->on_done = std::move(on_done);
  best->next.reset();
  best->n_dropped = plan.n_dropped;
  return best->id;
}

void BatchRunner::finish(Slot& s) {
  GenerateResult r = s.gen->take_result();
  r.truncated = s.n_dropped > 0;
  r.n_dropped = s.n_dropped;
  s.gen.reset();
  s.next.reset();
  OnDone done = std::move(s.on_done);
  s.on_done = nullptr;
  if (done) done(s.id, std::move(r));
}

bool BatchRunner::cancel(SeqId id) {
  for (Slot& s : slots_) {
    if (s.gen && s.id == id) {
      s.gen->cancel();
      finish(s);
      return true;
    }
  }
  return false;
}

Result<int> BatchRunner::step() {
  // Decoding sequences first (one token each, they are latency-bound), then prefill chunks.
  batch_.clear();
  int budget = ctx_->n_batch();
  int n_outputs = 0;
  for (size_t i = 0; i < slots_.size(); ++i) {
    Slot& s = slots_[i];
    s.n_in_batch = 0;
    s.output = -1;
    if (!s.gen || !s.next || budget == 0) continue;
    batch_.push_back({*s.next, ctx_->n_pos(static_cast<int>(i)), static_cast<int>(i), true});
    s.n_in_batch = 1;
    s.output = n_outputs++;
    --budget;
  }
  for (size_t i = 0; i < slots_.size() && budget > 0; ++i) {
    Slot& s = slots_[i];
    if (!s.gen || s.next || !s.gen->prefilling()) continue;
    auto pending = s.gen->pending_prompt();
    const int chunk = std::min({budget, static_cast<int>(pending.size()), std::max(1, s.gen->num_batch())});
    const bool last = chunk == static_cast<int>(pending.size());
    const int pos0 = ctx_->n_pos(static_cast<int>(i));
    for (int k = 0; k < chunk; ++k)
      batch_.push_back({pending[static_cast<size_t>(k)], pos0 + k, static_cast<int>(i), last && k == chunk - 1});
    s.n_in_batch = chunk;
    if (last) s.output = n_outputs++;
    budget -= chunk;
  }
  if (batch_.empty()) return n_active();

  if (auto r = ctx_->decode(batch_); !r.ok()) {
    Error e = r.error().context("batched decode");
    for (Slot& s : slots_) {
      if (!s.gen || s.n_in_batch == 0) continue;
      s.gen.reset();
      s.next.reset();
      OnDone done = std::move(s.on_done);
      s.on_done = nullptr;
      if (done) done(s.id, e);
    }
    return e;
  }

  for (Slot& s : slots_) {
    if (!s.gen || s.n_in_batch == 0) continue;
    if (s.next) {
      s.cached.push_back(*s.next);
    } else {
      auto pending = s.gen->pending_prompt();
      s.cached.insert(s.cached.end(), pending.begin(), pending.begin() + s.n_in_batch);
      if (!s.gen->prompt_fed(s.n_in_batch)) {
        finish(s);
        continue;
      }
    }
    if (s.output >= 0) {
      s.next = s.gen->on_logits(ctx_->logits(s.output));
      if (!s.next) finish(s);
    }
  }
  return n_active();
}

}  // namespace nurl
