#include "scheduler/worker.h"

#include <algorithm>

#include "scheduler/reply-stream.h"

namespace nurl::sched {

struct Worker::Seq {
  std::shared_ptr<Job> job;
  int slot = -1;
  std::vector<int32_t> prompt;
  size_t n_fed = 0;       // prompt tokens already in the cache
  bool decoding = false;  // prefill finished
  int32_t pending = -1;   // sampled, not yet accepted
  int n_past = 0;         // tokens in the slot's cache
  std::vector<int32_t> generated;
  ReplyStream reply;
  std::optional<TokenLogprob> pending_lp;  // of `pending`
  bool armed = false;                      // the constraint starts once the reasoning block ends
  int n_thought = 0;                       // tokens accepted inside the reasoning block
  std::vector<int32_t> forced;             // written next instead of sampling (a spent budget's close)
  Nanos prompt_ns{0}, eval_ns{0};
  int truncated = 0;
  bool done = false;
  Clock::time_point last_token{};  // when the previous token was accepted (metrics)
};

namespace {

Nanos since(Clock::time_point t0) {
  return std::chrono::duration_cast<Nanos>(Clock::now() - t0);
}

}  // namespace

Worker::Worker(std::string name, std::shared_ptr<LoadedModel> model, std::unique_ptr<BatchRunner> runner, Logger& log,
               Hooks hooks)
    : name_(std::move(name)),
      model_(std::move(model)),
      runner_(std::move(runner)),
      log_(log),
      hooks_(std::move(hooks)) {
  for (int i = runner_->n_slots() - 1; i >= 0; --i) free_slots_.push_back(i);
  thread_ = std::thread([this] { run(); });
}

Worker::~Worker() {
  stop("model unloaded");
}

void Worker::enqueue(std::shared_ptr<Job> job) {
  {
    std::lock_guard lk(mu_);
    if (!stop_) {
      incoming_.push(std::move(job));
      cv_.notify_all();
      return;
    }
  }
  hooks_.admitted(*job);
  job->fail(Error(Code::cancelled, "model " + name_ + " is unloading"));
  hooks_.finished(*job);
}

void Worker::stop(const std::string& why) {
  {
    std::lock_guard lk(mu_);
    if (!stop_) {
      stop_ = true;
      stop_reason_ = why;
    }
    cv_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
}

void Worker::release(Seq& s) {
  if (s.done) return;
  s.done = true;
  if (s.job->out) s.job->out->close();
  free_slots_.push_back(s.slot);
  hooks_.finished(*s.job);
}

void Worker::fail(Seq& s, Error e) {
  if (s.done) return;
  s.job->fail(std::move(e));
  release(s);
}

void Worker::spend_thinking_budget(Seq& s) {
  ReplyParser* p = s.reply.parser();
  if (s.job->think_budget <= 0 || !p || !p->thinking() || !s.forced.empty()) return;
  if (++s.n_thought != s.job->think_budget) return;
  auto close = model_->tokenize(p->close_thinking_text(), false);
  if (close.ok()) s.forced = std::move(*close);
}

std::string Worker::piece_of(const Seq& s, int32_t id) const {
  std::string p = model_->token_text(id);
  if (p.empty() && s.reply.parser()) {
    // Control tokens print nothing, except the markers the reply parser reads (<|python_tag|>, ...).
    std::string c = model_->control_text(id);
    for (const auto& m : s.reply.parser()->markers())
      if (!c.empty() && m == c) return c;
  }
  return p;
}

std::optional<TokenLogprob> Worker::sampled_logprobs(const Seq& s) const {
  if (s.job->top_logprobs < 0) return std::nullopt;
  const SampledLogprobs* lp = runner_->last_logprobs(s.slot);
  if (!lp) return std::nullopt;
  TokenLogprob t;
  t.token = piece_of(s, lp->chosen.id);
  t.logprob = lp->chosen.logprob;
  for (const auto& alt : lp->top) t.top.emplace_back(piece_of(s, alt.id), alt.logprob);
  return t;
}

bool Worker::send_all(Seq& s, std::vector<Event>& events) {
  for (auto& e : events)
    if (!s.job->send(std::move(e))) return false;
  events.clear();
  return true;
}

void Worker::finish(Seq& s, const std::string& reason) {
  std::vector<Event> rest;
  s.reply.finish(rest);
  send_all(s, rest);
  Event e;
  e.kind = Event::Kind::done;
  e.done.reason = reason;
  e.done.load_duration = s.job->load_duration;
  e.done.prompt_eval_duration = s.prompt_ns;
  e.done.eval_duration = s.eval_ns;
  e.done.prompt_eval_count = static_cast<int>(s.prompt.size());
  e.done.eval_count = static_cast<int>(s.generated.size());
  e.done.truncated_tokens = s.truncated;
  e.done.stop_sequence = s.reply.matched_stop();
  e.done.context = s.prompt;
  e.done.context.insert(e.done.context.end(), s.generated.begin(), s.generated.end());
  s.job->send(std::move(e));
  release(s);
}

void Worker::start(std::shared_ptr<Job> job, int slot, std::vector<Seq>& active) {
  Seq s;
  s.job = job;
  s.slot = slot;
  auto fail = [&](Error e) { this->fail(s, std::move(e)); };
  if (job->cancelled()) return release(s);

  if (job->kind == Job::Kind::load) {
    Event e;
    e.kind = Event::Kind::done;
    e.done.reason = "load";
    e.done.load_duration = job->load_duration;
    job->send(std::move(e));
    release(s);
    return;
  }

  if (job->kind == Job::Kind::embed) {
    int total_tokens = 0;
    const size_t n_text = job->embed_inputs.size();
    for (size_t i = 0; i < n_text + job->embed_tokens.size(); ++i) {
      if (job->cancelled()) return release(s);
      auto toks = i < n_text ? model_->tokenize(job->embed_inputs[i], true)
                             : Result<std::vector<int32_t>>(job->embed_tokens[i - n_text]);
      if (!toks.ok()) return fail(toks.error());
      if (static_cast<int>(toks->size()) > runner_->n_ctx()) {
        if (!job->truncate)
          return fail(Error(Code::invalid_argument, "input length " + std::to_string(toks->size()) +
                                                        " exceeds the context length " +
                                                        std::to_string(runner_->n_ctx())));
        toks->resize(static_cast<size_t>(runner_->n_ctx()));
      }
      total_tokens += static_cast<int>(toks->size());
      runner_->reset(slot, job->sampling);
      auto t0 = Clock::now();
      auto emb = runner_->embed(slot, *toks);
      s.prompt_ns += since(t0);
      if (!emb.ok()) return fail(emb.error());
      Event e;
      e.kind = Event::Kind::embedding;
      e.embedding = std::move(*emb);
      e.embed_tokens = static_cast<int>(toks->size());
      if (!job->send(std::move(e))) return release(s);
    }
    Event e;
    e.kind = Event::Kind::done;
    e.done.reason = "stop";
    e.done.load_duration = job->load_duration;
    e.done.prompt_eval_count = total_tokens;
    e.done.prompt_eval_duration = s.prompt_ns;
    job->send(std::move(e));
    return release(s);
  }

  auto prepared = job->prepare ? job->prepare(*model_) : Result<PreparedPrompt>(Error(Code::internal, "no prompt"));
  if (!prepared.ok()) return fail(prepared.error());
  // Tools and thinking need the template's support (400, before any work).
  const ModelFacts facts = model_->template_facts(prepared->template_override);
  const bool wants_tools = !job->tools.empty() && job->tool_choice != "none";
  const bool wants_think = job->think && *job->think != "false";
  if (wants_tools && !facts.tools)
    return fail(Error(Code::invalid_argument, "\"" + job->model_name + "\" does not support tools"));
  if (wants_think && !facts.thinking)
    return fail(Error(Code::invalid_argument, "\"" + job->model_name + "\" does not support thinking"));
  if (job->render_only) {
    Event t;
    t.text = std::move(prepared->rendered);
    job->send(std::move(t));
    Event e;
    e.kind = Event::Kind::done;
    e.done.reason = "stop";
    e.done.load_duration = job->load_duration;
    e.done.prompt_eval_count = static_cast<int>(prepared->tokens.size());
    job->send(std::move(e));
    return release(s);
  }
  s.prompt = std::move(prepared->tokens);
  if (s.prompt.empty()) return fail(Error(Code::invalid_argument, "the prompt is empty after tokenization"));

  // Structured output: a format, or a forced tool call (which wins: the reply is then a call).
  const bool forced = wants_tools && job->tool_choice != "auto";
  std::shared_ptr<const OutputConstraint> constraint;
  if (!job->format.empty() || forced) {
    ConstraintRequest cr;
    cr.template_override = prepared->template_override;
    if (forced) {
      cr.tools = job->tools;
      cr.tool_choice = job->tool_choice;
      cr.parallel_tool_calls = job->parallel_tool_calls;
    } else {
      cr.format = job->format;
    }
    auto c = model_->compile_constraint(cr);
    if (!c.ok()) return fail(c.error());
    constraint = std::move(*c);
  }
  ReplyRequest rr;
  rr.template_override = prepared->template_override;
  rr.rendered = prepared->rendered;
  rr.constrained_answer = constraint && !forced;
  if (wants_tools && !rr.constrained_answer) rr.tools = job->tools;
  std::unique_ptr<ReplyParser> parser = model_->reply_parser(rr);
  // A constrained answer after reasoning: the constraint waits for the reasoning block to close;
  // with think on, the block is opened in the prompt so the model reasons first.
  if (constraint && parser) {
    if (parser->thinking()) {
      s.armed = true;
    } else if (wants_think) {
      const std::string open = parser->open_thinking();
      if (!open.empty()) {
        auto extra = model_->tokenize(open + "\n", false);
        if (!extra.ok()) return fail(extra.error());
        s.prompt.insert(s.prompt.end(), extra->begin(), extra->end());
        s.armed = true;
      }
    }
  }
  const int n_ctx = runner_->n_ctx();
  if (static_cast<int>(s.prompt.size()) >= n_ctx) {
    if (!job->truncate)
      return fail(Error(Code::invalid_argument, "the prompt is " + std::to_string(s.prompt.size()) +
                                                    " tokens but the context holds " + std::to_string(n_ctx) +
                                                    " (num_ctx); shorten it or allow truncation"));
    // Keep the first token (the BOS of most templates) and the most recent tokens, leaving room
    // for the answer.
    int reserve = job->num_predict > 0 ? std::min(job->num_predict, n_ctx / 2) : n_ctx / 4;
    size_t keep = static_cast<size_t>(std::max(2, n_ctx - reserve));
    s.truncated = static_cast<int>(s.prompt.size() - keep);
    std::vector<int32_t> kept{s.prompt[0]};
    kept.insert(kept.end(), s.prompt.end() - static_cast<long>(keep - 1), s.prompt.end());
    s.prompt = std::move(kept);
    log_.info("worker " + name_ + ": prompt truncated by " + std::to_string(s.truncated) + " tokens to fit num_ctx " +
              std::to_string(n_ctx));
  }
  s.reply = ReplyStream(job->stop, std::move(parser));
  Sampling sampling = job->sampling;
  sampling.top_logprobs = job->top_logprobs;
  runner_->reset(slot, sampling);
  if (constraint) {
    auto r = runner_->constrain(slot, std::move(constraint), !s.armed);
    if (!r.ok()) return fail(r.error());
    // The document must end within num_predict and the context's room (the last draw ends it).
    const int room = n_ctx - static_cast<int>(s.prompt.size()) + 1;
    const bool by_predict = job->num_predict >= 0 && job->num_predict <= room;
    const int draws = by_predict ? job->num_predict : room;
    auto lim = runner_->limit_tokens(slot, draws);
    if (!lim.ok())
      return fail(
          Error(lim.error().code, lim.error().msg + ", but " +
                                      (by_predict ? "num_predict " + std::to_string(job->num_predict)
                                                  : "the context (num_ctx " + std::to_string(n_ctx) + ", prompt " +
                                                        std::to_string(s.prompt.size()) + " tokens)") +
                                      " leaves room for " + std::to_string(std::max(draws - 1, 0)) +
                                      " (one more token ends the reply)"));
  }
  active.push_back(std::move(s));
}

void Worker::step(std::vector<Seq>& active) {
  // 1. Accept the sampled tokens; collect those that continue into the decode batch.
  std::vector<SlotToken> batch;
  std::vector<Seq*> owners;
  for (auto& s : active) {
    if (s.done || !s.decoding) continue;
    if (s.job->cancelled()) {
      log_.info("worker " + name_ + ": request cancelled");
      release(s);
      continue;
    }
    int32_t tok = s.pending;
    if (!s.forced.empty()) {  // the engine writes these; what was sampled is dropped
      tok = s.forced.front();
      s.forced.erase(s.forced.begin());
      s.pending_lp.reset();
    }
    if (model_->is_end_of_generation(tok)) {
      finish(s, "stop");
      continue;
    }
    s.generated.push_back(tok);
    if (hooks_.observer) {
      const auto now = Clock::now();
      if (s.generated.size() == 1) hooks_.observer->first_token(std::chrono::duration_cast<Nanos>(now - s.job->submitted));
      else hooks_.observer->next_token(std::chrono::duration_cast<Nanos>(now - s.last_token));
      s.last_token = now;
    }
    std::vector<Event> events;
    s.reply.push(piece_of(s, tok), std::move(s.pending_lp), events);
    s.pending_lp.reset();
    if (!send_all(s, events)) {
      release(s);
      continue;
    }
    spend_thinking_budget(s);
    if (s.armed && s.reply.parser()->thought()) {
      runner_->activate_constraint(s.slot);  // this token was free; the next one is constrained
      s.armed = false;
    }
    if (s.reply.stopped()) {
      finish(s, "stop");
      continue;
    }
    if (s.job->num_predict >= 0 && static_cast<int>(s.generated.size()) >= s.job->num_predict) {
      finish(s, "length");
      continue;
    }
    if (s.n_past >= runner_->n_ctx()) {
      finish(s, "length");
      continue;
    }
    batch.push_back({s.slot, tok});
    owners.push_back(&s);
  }

  // 2. The next prompt chunk of every sequence still prefilling (one chunk each per step, so
  // running sequences keep decoding meanwhile); a sequence whose prompt ends here samples its first
  // token, emitted next step.
  std::vector<SlotPrompt> prompts;
  std::vector<Seq*> prefilling;
  for (auto& s : active) {
    if (s.done || s.decoding) continue;
    if (s.job->cancelled()) {
      log_.info("worker " + name_ + ": request cancelled during prompt processing");
      release(s);
      continue;
    }
    const size_t n = std::min<size_t>(kPrefillChunk, s.prompt.size() - s.n_fed);
    const bool last = s.n_fed + n == s.prompt.size();
    prompts.push_back({s.slot, std::span<const int32_t>(s.prompt).subspan(s.n_fed, n), last});
    prefilling.push_back(&s);
  }

  // 3. One step for all of them: the runner reads the weights once for prompts and decode tokens.
  if (!batch.empty() || !prompts.empty()) {
    std::vector<int32_t> next(batch.size(), -1), first(prompts.size(), -1);
    auto t0 = Clock::now();
    auto r = runner_->step(prompts, first, batch, next);
    Nanos dt = since(t0);
    for (size_t i = 0; i < owners.size(); ++i) {
      Seq& s = *owners[i];
      if (!r.ok()) {
        fail(s, r.error());
        continue;
      }
      s.pending = next[i];
      s.pending_lp = sampled_logprobs(s);
      s.n_past += 1;
      s.eval_ns += dt;
    }
    for (size_t i = 0; i < prefilling.size(); ++i) {
      Seq& s = *prefilling[i];
      s.prompt_ns += dt;
      if (!r.ok()) {
        fail(s, r.error());
        continue;
      }
      s.n_fed += prompts[i].tokens.size();
      if (prompts[i].want_next) {
        s.decoding = true;
        s.pending = first[i];
        s.pending_lp = sampled_logprobs(s);
        s.n_past = static_cast<int>(s.prompt.size());
        if (hooks_.observer) hooks_.observer->prompt_evaluated(s.n_past);
      }
    }
  }
  active.erase(std::remove_if(active.begin(), active.end(), [](const Seq& s) { return s.done; }), active.end());
}

void Worker::run() {
  std::vector<Seq> active;
  while (true) {
    std::vector<std::shared_ptr<Job>> admitted;
    std::vector<int> slots;
    {
      std::unique_lock lk(mu_);
      cv_.wait(lk, [&] { return stop_ || !active.empty() || (!incoming_.empty() && !free_slots_.empty()); });
      if (stop_) break;
      while (!incoming_.empty() && !free_slots_.empty()) {
        admitted.push_back(incoming_.pop());
        slots.push_back(free_slots_.back());
        free_slots_.pop_back();
      }
    }
    for (size_t i = 0; i < admitted.size(); ++i) {
      hooks_.admitted(*admitted[i]);
      start(admitted[i], slots[i], active);
    }
    if (!active.empty()) step(active);
  }

  // Stopping: end everything with the reason.
  std::deque<std::shared_ptr<Job>> left;
  std::string why;
  {
    std::lock_guard lk(mu_);
    left = incoming_.drain();
    why = stop_reason_;
  }
  for (auto& s : active) fail(s, Error(Code::cancelled, why));
  for (auto& j : left) {
    hooks_.admitted(*j);
    j->fail(Error(Code::cancelled, why));
    hooks_.finished(*j);
  }
}

}  // namespace nurl::sched
