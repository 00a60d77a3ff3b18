// Generation state machine and the one-sequence Session (see session.h).
#include "engine/runtime/session.h"

#include <algorithm>

namespace nurl {

namespace {

int64_t ns_between(Generation::Clock::time_point a, Generation::Clock::time_point b) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count();
}

}  // namespace

Result<PromptPlan> plan_prompt(std::span<const int32_t> prompt, int32_t n_ctx, const Options& opts) {
  const auto n = static_cast<int32_t>(prompt.size());
  PromptPlan plan;
  if (n < n_ctx) {
    plan.tokens.assign(prompt.begin(), prompt.end());
    return plan;
  }
  if (!opts.truncate)
    return Error(Code::invalid_argument, "prompt of " + std::to_string(n) + " tokens does not fit the context of " +
                                             std::to_string(n_ctx) + " (raise num_ctx or allow truncation)");
  const int32_t reserve = std::clamp(opts.num_predict > 0 ? opts.num_predict : n_ctx / 4, 1, std::max(1, n_ctx / 2));
  const int32_t budget = n_ctx - reserve;
  const int32_t keep = std::clamp(opts.num_keep < 0 ? n : opts.num_keep, 0, budget - 1);
  plan.tokens.assign(prompt.begin(), prompt.begin() + keep);
  plan.tokens.insert(plan.tokens.end(), prompt.end() - (budget - keep), prompt.end());
  plan.n_dropped = n - budget;
  return plan;
}

Generation::Generation(const Tokenizer& tok, const Options& opts, std::vector<int32_t> prompt, int32_t n_ctx,
                       int32_t n_vocab, OnToken on_token)
    : tok_(&tok),
      opts_(opts),
      prompt_(std::move(prompt)),
      n_ctx_(n_ctx),
      on_token_(std::move(on_token)),
      sampler_(opts, n_vocab),
      stream_(tok),
      stop_(opts.stop),
      t_start_(Clock::now()) {
  sampler_.accept(prompt_);
  result_.n_ctx = n_ctx;
}

void Generation::skip_cached(int32_t n_cached) {
  prompt_pos_ = std::clamp(n_cached, 0, static_cast<int32_t>(prompt_.size()) - 1);
  result_.timings.prompt_cached = prompt_pos_;
}

std::span<const int32_t> Generation::pending_prompt() const {
  return std::span<const int32_t>(prompt_).subspan(static_cast<size_t>(prompt_pos_));
}

bool Generation::prompt_fed(int32_t n) {
  prompt_pos_ += n;
  result_.timings.prompt_eval_count += n;
  if (!prefilling() || !on_token_) return true;
  TokenEvent ev;
  ev.n_prompt_done = result_.timings.prompt_eval_count;
  ev.n_prompt = static_cast<int32_t>(prompt_.size()) - result_.timings.prompt_cached;
  if (on_token_(ev)) return true;
  cancel();
  return false;
}

bool Generation::emit(int32_t token, std::string_view text, const Sample* s) {
  result_.text.append(text);
  if (!on_token_) return true;
  TokenEvent ev;
  ev.token = token;
  ev.text = text;
  ev.sample = s;
  ev.n_prompt_done = result_.timings.prompt_eval_count;
  ev.n_prompt = ev.n_prompt_done;
  return on_token_(ev);
}

std::optional<int32_t> Generation::on_logits(std::span<const float> logits) {
  if (done_) return std::nullopt;
  if (result_.timings.eval_count == 0) {
    t_first_ = Clock::now();
    result_.timings.prompt_eval_ns = ns_between(t_start_, t_first_);
  }
  Sample s = sampler_.sample(logits);
  result_.timings.eval_count++;
  const Sample* sp = (opts_.logprobs || opts_.top_logprobs > 0) ? &s : nullptr;
  if (tok_->is_eog(s.id)) {
    finish(DoneReason::stop);
    return std::nullopt;
  }
  sampler_.accept(s.id);
  result_.tokens.push_back(s.id);
  std::string text = stop_.push(stream_.push(s.id));
  if (!emit(s.id, text, sp)) {
    cancel();
    return std::nullopt;
  }
  if (stop_.stopped()) {
    finish(DoneReason::stop);
    return std::nullopt;
  }
  const auto n_gen = static_cast<int32_t>(result_.tokens.size());
  // The new token must be fed at position prompt + n_gen - 1 to produce more.
  if ((opts_.num_predict >= 0 && n_gen >= opts_.num_predict) ||
      static_cast<int32_t>(prompt_.size()) + n_gen > n_ctx_) {
    finish(DoneReason::length);
    return std::nullopt;
  }
  return s.id;
}

void Generation::cancel() {
  if (done_) return;
  cancelled_ = true;
  finish(DoneReason::cancelled);
}

void Generation::finish(DoneReason why) {
  done_ = true;
  result_.done_reason = why;
  if (!cancelled_) {
    std::string tail = stop_.push(stream_.flush());
    if (!stop_.stopped()) tail += stop_.flush();
    if (!tail.empty()) emit(-1, tail, nullptr);
  }
  const auto now = Clock::now();
  if (result_.timings.eval_count == 0) result_.timings.prompt_eval_ns = ns_between(t_start_, now);
  else result_.timings.eval_ns = ns_between(t_first_, now);
  result_.timings.total_ns = ns_between(t_start_, now);
}

void Session::reset() {
  ctx_->clear(seq_);
  cached_.clear();
}

Result<GenerateResult> Session::generate(std::span<const int32_t> prompt, const Options& opts,
                                         const OnToken& on_token) {
  NURL_TRY(opts.validate());
  if (prompt.empty()) return Error(Code::invalid_argument, "generate: empty prompt (nothing to condition on)");
  const int32_t n_ctx = std::min(opts.num_ctx, ctx_->n_ctx());
  NURL_ASSIGN(PromptPlan plan, plan_prompt(prompt, n_ctx, opts));
  Generation g(*tok_, opts, std::move(plan.tokens), n_ctx, ctx_->model().n_vocab(), on_token);

  // Reuse the cached prefix; at least the last prompt token is evaluated again for its logits.
  size_t common = 0;
  const auto& p = g.prompt();
  const size_t in_cache = std::min(cached_.size(), static_cast<size_t>(ctx_->n_pos(seq_)));
  while (common < in_cache && common < p.size() && cached_[common] == p[common]) ++common;
  g.skip_cached(static_cast<int32_t>(common));
  const int32_t reused = g.result().timings.prompt_cached;
  ctx_->truncate(seq_, reused);
  cached_.resize(static_cast<size_t>(reused));

  const int32_t chunk = std::max(1, std::min(opts.num_batch, ctx_->n_batch()));
  while (g.prefilling()) {
    auto pending = g.pending_prompt();
    const auto n = static_cast<int32_t>(std::min<size_t>(pending.size(), static_cast<size_t>(chunk)));
    const bool last = n == static_cast<int32_t>(pending.size());
    batch_.clear();
    for (int32_t i = 0; i < n; ++i)
      batch_.push_back({pending[static_cast<size_t>(i)], ctx_->n_pos(seq_) + i, seq_, last && i == n - 1});
    if (auto r = ctx_->decode(batch_); !r.ok()) return r.error().context("generate: prompt evaluation");
    cached_.insert(cached_.end(), pending.begin(), pending.begin() + n);
    if (!g.prompt_fed(n)) break;
  }

  if (!g.done()) {
    std::span<const float> logits = ctx_->logits(0);
    while (auto next = g.on_logits(logits)) {
      BatchEntry e{*next, ctx_->n_pos(seq_), seq_, true};
      if (auto r = ctx_->decode(std::span<const BatchEntry>(&e, 1)); !r.ok())
        return r.error().context("generate: decoding token " + std::to_string(g.result().tokens.size()));
      cached_.push_back(*next);
      logits = ctx_->logits(0);
    }
  }
  GenerateResult res = g.take_result();
  res.truncated = plan.n_dropped > 0;
  res.n_dropped = plan.n_dropped;
  return res;
}

}  // namespace nurl
