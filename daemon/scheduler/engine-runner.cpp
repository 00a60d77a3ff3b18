#include "scheduler/engine-runner.h"

#include <algorithm>

#include "engine/runtime/budget.h"
#include "engine/runtime/embed.h"

namespace nurl::sched {

Options engine_options(const Sampling& s, int n_ctx) {
  Options o;
  o.num_ctx = n_ctx;
  o.temperature = s.temperature;
  o.top_k = s.top_k;
  o.top_p = s.top_p;
  o.min_p = s.min_p;
  o.typical_p = s.typical_p;
  o.repeat_penalty = s.repeat_penalty;
  o.repeat_last_n = s.repeat_last_n;
  o.presence_penalty = s.presence_penalty;
  o.frequency_penalty = s.frequency_penalty;
  o.seed = s.seed_set ? static_cast<int64_t>(s.seed & 0x7fffffffffffffffull) : -1;
  o.logprobs = s.top_logprobs >= 0;
  o.top_logprobs = std::clamp(s.top_logprobs, 0, 20);
  return o;
}

EngineRunner::EngineRunner(std::shared_ptr<const Model> model, std::unique_ptr<Context> ctx)
    : model_(std::move(model)), ctx_(std::move(ctx)), slots_(static_cast<size_t>(ctx_->n_seq())) {}

void EngineRunner::reset(int slot, const Sampling& s) {
  ctx_->clear(slot);
  Slot& st = slots_[static_cast<size_t>(slot)];
  st.sampler = std::make_unique<Sampler>(engine_options(s, ctx_->n_ctx()), model_->n_vocab());
  st.constraint.reset();
  st.phase = Slot::Phase::off;
  st.has_lp = false;
  st.draws_left = -1;
}

Result<void> EngineRunner::constrain(int slot, std::shared_ptr<const OutputConstraint> c, bool now) {
  const auto* ec = dynamic_cast<const EngineConstraint*>(c.get());
  if (!ec) return Error(Code::internal, "constraint from another engine");
  Slot& st = slots_[static_cast<size_t>(slot)];
  st.constraint = std::make_unique<grammar::Constraint>(ec->filter);
  st.mask.assign(ec->filter->n_words(), 0);
  st.phase = now ? Slot::Phase::on : Slot::Phase::armed;
  return ok();
}

void EngineRunner::activate_constraint(int slot) {
  Slot& st = slots_[static_cast<size_t>(slot)];
  if (st.phase == Slot::Phase::armed) st.phase = Slot::Phase::starting;
}

Result<void> EngineRunner::limit_tokens(int slot, int draws) {
  Slot& st = slots_[static_cast<size_t>(slot)];
  st.draws_left = std::max(draws, 0);
  if (!st.constraint) return ok();
  st.shortest.assign(st.mask.size(), 0);
  const int64_t room = st.draws_left - 1;  // the last draw ends the reply
  const uint64_t bytes = st.constraint->distance();
  if (static_cast<int64_t>(bytes) <= room) return ok();  // fits at one byte per token
  const int64_t cap = room + 1024;
  const int64_t need = shortest_document_tokens(*st.constraint, cap);
  if (need < 0 || need <= room) return ok();
  return Error(Code::invalid_argument,
               "the format's shortest document takes " +
                   std::string(need > cap ? "more than " + std::to_string(cap) : std::to_string(need)) + " tokens (" +
                   std::to_string(bytes) + " bytes)");
}

const SampledLogprobs* EngineRunner::last_logprobs(int slot) const {
  const Slot& st = slots_[static_cast<size_t>(slot)];
  return st.has_lp ? &st.lp : nullptr;
}

Result<int32_t> EngineRunner::sample(int slot, std::span<const float> logits) {
  Slot& st = slots_[static_cast<size_t>(slot)];
  const int64_t draws = st.draws_left;
  if (st.draws_left > 0) --st.draws_left;
  Sample s;
  if (st.phase == Slot::Phase::on) {
    st.constraint->mask(st.mask);
    if (std::all_of(st.mask.begin(), st.mask.end(), [](uint64_t w) { return w == 0; }))
      return Error(Code::internal, "the output constraint allows no token of this vocabulary");
    s = sample_within(*st.sampler, *st.constraint, logits, st.mask, st.shortest, draws);
  } else {
    s = st.sampler->sample(logits);
  }
  st.has_lp = st.sampler->options().logprobs;
  if (st.has_lp) {
    st.lp.chosen = {s.id, s.logprob};
    st.lp.top.clear();
    for (const auto& t : s.top) st.lp.top.push_back({t.id, t.logprob});
  }
  return s.id;
}

Result<void> EngineRunner::accept(int slot, int32_t token) {
  Slot& st = slots_[static_cast<size_t>(slot)];
  st.sampler->accept(token);
  if (st.phase == Slot::Phase::starting) {
    st.phase = Slot::Phase::on;  // this token was sampled before the constraint started
  } else if (st.phase == Slot::Phase::on && !st.constraint->accept(token)) {
    return Error(Code::internal, "token " + std::to_string(token) + " breaks the output constraint");
  }
  return ok();
}

Result<int32_t> EngineRunner::prefill(int slot, std::span<const int32_t> tokens, bool want_next) {
  const SlotPrompt p{slot, tokens, want_next};
  int32_t next = -1;
  NURL_TRY(step({&p, 1}, {&next, 1}, {}, {}));
  return next;
}

Result<void> EngineRunner::decode(std::span<const SlotToken> batch, std::span<int32_t> next) {
  return step({}, {}, batch, next);
}

// The decode tokens first, then each prompt chunk (its last token wanting logits when want_next):
// the outputs come in that order. Context::decode cuts the whole into n_batch forwards.
Result<void> EngineRunner::step(std::span<const SlotPrompt> prompts, std::span<int32_t> prompt_next,
                                std::span<const SlotToken> batch, std::span<int32_t> next) {
  batch_.clear();
  for (const auto& st : batch) {
    NURL_TRY(accept(st.slot, st.token));
    batch_.push_back({st.token, ctx_->n_pos(st.slot), st.slot, true});
  }
  for (const auto& p : prompts) {
    const int32_t pos = ctx_->n_pos(p.slot);
    for (size_t k = 0; k < p.tokens.size(); ++k)
      batch_.push_back({p.tokens[k], pos + static_cast<int32_t>(k), p.slot, p.want_next && k + 1 == p.tokens.size()});
  }
  if (batch_.empty()) return ok();
  NURL_TRY(ctx_->decode(batch_));
  int out = 0;
  for (size_t i = 0; i < batch.size(); ++i) {
    NURL_ASSIGN(next[i], sample(batch[i].slot, ctx_->logits(out++)));
  }
  for (size_t i = 0; i < prompts.size(); ++i) {
    slots_[static_cast<size_t>(prompts[i].slot)].sampler->accept(prompts[i].tokens);
    prompt_next[i] = -1;
    if (prompts[i].want_next) {
      NURL_ASSIGN(prompt_next[i], sample(prompts[i].slot, ctx_->logits(out++)));
    }
  }
  return ok();
}

Result<std::vector<float>> EngineRunner::embed(int, std::span<const int32_t> tokens) {
  if (!embed_ctx_) {
    NURL_ASSIGN(embed_ctx_, Context::create(model_, embedding_context_options(ctx_->n_ctx())));
  }
  NURL_ASSIGN(Embedding e, nurl::embed(*embed_ctx_, tokens, true, 0));
  return std::move(e.values);
}

}  // namespace nurl::sched
