// EngineRunner: the BatchRunner over the engine's Context (KV cache of n_slots sequences) with one
// Sampler per slot and, when a job asks for one, its output constraint: the constraint's token
// mask goes into the sampler before its chain, and every accepted token advances the constraint.
// With a token limit the constrained document is finished within it (engine/runtime/budget.h).
// Sequences never influence each other: the Context guarantees per-sequence outputs in a batch,
// and each slot samples with its own RNG, penalty window and constraint.
#pragma once

#include <memory>
#include <vector>

#include "engine/grammar/token-filter.h"
#include "engine/runtime/context.h"
#include "engine/runtime/model.h"
#include "engine/runtime/sampler.h"
#include "scheduler/model.h"

namespace nurl::sched {

// The engine's OutputConstraint: a token filter shared by every sequence that uses it.
struct EngineConstraint final : OutputConstraint {
  explicit EngineConstraint(std::shared_ptr<grammar::TokenFilter> f) : filter(std::move(f)) {}
  std::shared_ptr<grammar::TokenFilter> filter;
};

Options engine_options(const Sampling& s, int n_ctx);

class EngineRunner final : public BatchRunner {
 public:
  EngineRunner(std::shared_ptr<const Model> model, std::unique_ptr<Context> ctx);

  int n_slots() const override { return ctx_->n_seq(); }
  int n_ctx() const override { return ctx_->n_ctx(); }
  void reset(int slot, const Sampling& s) override;
  Result<int32_t> prefill(int slot, std::span<const int32_t> tokens, bool want_next) override;
  Result<void> decode(std::span<const SlotToken> batch, std::span<int32_t> next) override;
  // One Context::decode for the decode tokens and the prompt chunks together.
  Result<void> step(std::span<const SlotPrompt> prompts, std::span<int32_t> prompt_next,
                    std::span<const SlotToken> batch, std::span<int32_t> next) override;
  Result<void> constrain(int slot, std::shared_ptr<const OutputConstraint> c, bool now) override;
  void activate_constraint(int slot) override;
  Result<void> limit_tokens(int slot, int draws) override;
  const SampledLogprobs* last_logprobs(int slot) const override;
  Result<std::vector<float>> embed(int slot, std::span<const int32_t> tokens) override;

 private:
  struct Slot {
    std::unique_ptr<Sampler> sampler;
    std::unique_ptr<grammar::Constraint> constraint;
    enum class Phase { off, armed, starting, on } phase = Phase::off;
    std::vector<uint64_t> mask;      // n_vocab bits
    std::vector<uint64_t> shortest;  // n_vocab bits: scratch for finishing within the limit
    int64_t draws_left = -1;         // tokens still to be sampled, this one included (-1: no limit)
    SampledLogprobs lp;
    bool has_lp = false;
  };
  Result<int32_t> sample(int slot, std::span<const float> logits);
  Result<void> accept(int slot, int32_t token);

  std::shared_ptr<const Model> model_;
  std::unique_ptr<Context> ctx_;
  std::unique_ptr<Context> embed_ctx_;  // created on the first embed request
  std::vector<Slot> slots_;
  std::vector<BatchEntry> batch_;
};

}  // namespace nurl::sched
