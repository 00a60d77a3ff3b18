// A fake model for scheduler and route tests: bytes are tokens (id = byte + 2, EOG = 1), and the
// next token is a hash of the slot's whole history, so a sequence's output depends only on its
// own tokens — exactly the property batched decoding must preserve. The runner records how it
// was driven (batch sizes, prefill calls) so tests can tell that batching really happened.
#pragma once

#include <atomic>
#include <string>
#include <chrono>
#include <mutex>
#include <thread>

#include "scheduler/model.h"

namespace nurl::test {

struct FakeStats {
  std::atomic<int> loads{0};
  std::atomic<int> max_batch{0};
  std::atomic<int> prefill_calls{0};
  std::atomic<int> decode_calls{0};
  // Set before the model loads: the reply every sequence generates (then end of generation),
  // and which template features the fake claims (reasoning is <think>...</think>).
  std::string script;
  bool tools = false, thinking = false;
  // How the worker drove the constraint: constrain(now), and at which generated token
  // activate_constraint() came (-1: never).
  std::atomic<int> constrained{0};
  std::atomic<bool> constrained_now{false};
  std::atomic<int> activated_at{-1};
};

// <think>...</think> reasoning, the rest text; marker prefixes are held back.
class FakeThinkParser : public sched::ReplyParser {
 public:
  explicit FakeThinkParser(bool thinking) : thinking_(thinking) {}
  void push(std::string_view text, std::vector<sched::ReplyPiece>& out) override {
    buf_ += text;
    while (true) {
      const std::string m = thinking_ ? "</think>" : "<think>";
      const size_t p = buf_.find(m);
      if (p == std::string::npos) break;
      put(buf_.substr(0, p), out);
      buf_.erase(0, p + m.size());
      thought_ |= thinking_;
      thinking_ = !thinking_;
    }
    size_t hold = 0;
    for (size_t n = 1; n < 8 && n <= buf_.size(); ++n)
      if (std::string_view(thinking_ ? "</think>" : "<think>").substr(0, n) == std::string_view(buf_).substr(buf_.size() - n)) hold = n;
    put(buf_.substr(0, buf_.size() - hold), out);
    buf_.erase(0, buf_.size() - hold);
  }
  void finish(std::vector<sched::ReplyPiece>& out) override {
    put(buf_, out);
    buf_.clear();
  }
  bool thinking() const override { return thinking_; }
  bool thought() const override { return thought_; }
  const std::vector<std::string>& markers() const override { return markers_; }
  std::string open_thinking() override {
    thinking_ = true;
    return "<think>";
  }
  std::string close_thinking_text() const override { return "</think>"; }

 private:
  void put(const std::string& t, std::vector<sched::ReplyPiece>& out) {
    if (t.empty()) return;
    sched::ReplyPiece p;
    p.kind = thinking_ ? sched::ReplyPiece::Kind::thinking : sched::ReplyPiece::Kind::text;
    p.text = t;
    out.push_back(std::move(p));
  }
  bool thinking_, thought_ = false;
  std::string buf_;
  std::vector<std::string> markers_{"<think>", "</think>"};
};

struct FakeConstraint : sched::OutputConstraint {};

class FakeRunner : public sched::BatchRunner {
 public:
  FakeRunner(int n_slots, int n_ctx, FakeStats* stats, std::chrono::milliseconds step_delay, int eog_after)
      : n_slots_(n_slots), n_ctx_(n_ctx), stats_(stats), delay_(step_delay), eog_after_(eog_after),
        hist_(static_cast<size_t>(n_slots)), prompt_len_(static_cast<size_t>(n_slots), -1) {}
  int n_slots() const override { return n_slots_; }
  int n_ctx() const override { return n_ctx_; }
  void reset(int slot, const sched::Sampling&) override {
    hist_[static_cast<size_t>(slot)].clear();
    prompt_len_.resize(hist_.size());
    prompt_len_[static_cast<size_t>(slot)] = -1;
  }
  Result<void> constrain(int slot, std::shared_ptr<const sched::OutputConstraint>, bool now) override {
    (void)slot;
    stats_->constrained++;
    stats_->constrained_now = now;
    return ok();
  }
  void activate_constraint(int slot) override {
    const auto& h = hist_[static_cast<size_t>(slot)];
    stats_->activated_at = static_cast<int>(h.size()) - prompt_len_[static_cast<size_t>(slot)];
  }
  Result<int32_t> prefill(int slot, std::span<const int32_t> toks, bool want_next) override {
    stats_->prefill_calls++;
    std::this_thread::sleep_for(delay_);
    auto& h = hist_[static_cast<size_t>(slot)];
    h.insert(h.end(), toks.begin(), toks.end());
    if (want_next) prompt_len_[static_cast<size_t>(slot)] = static_cast<int>(h.size());
    return want_next ? sample(h, slot) : -1;
  }
  Result<void> decode(std::span<const sched::SlotToken> batch, std::span<int32_t> next) override {
    stats_->decode_calls++;
    int b = static_cast<int>(batch.size());
    int prev = stats_->max_batch.load();
    while (b > prev && !stats_->max_batch.compare_exchange_weak(prev, b)) {}
    std::this_thread::sleep_for(delay_);
    for (size_t i = 0; i < batch.size(); ++i) {
      auto& h = hist_[static_cast<size_t>(batch[i].slot)];
      h.push_back(batch[i].token);
      next[i] = sample(h, batch[i].slot);
    }
    return ok();
  }

 private:
  int32_t sample(const std::vector<int32_t>& h, int slot) const {
    if (!stats_->script.empty()) {  // the scripted reply, then end of generation
      const size_t k = h.size() - static_cast<size_t>(prompt_len_[static_cast<size_t>(slot)]);
      return k < stats_->script.size() ? static_cast<unsigned char>(stats_->script[k]) + 2 : 1;
    }
    if (eog_after_ > 0 && static_cast<int>(h.size()) >= eog_after_) return 1;
    uint64_t x = 1469598103934665603ull;
    for (int32_t t : h) x = (x ^ static_cast<uint64_t>(t)) * 1099511628211ull;
    return static_cast<int32_t>('a' + x % 26) + 2;  // a lowercase letter
  }
  int n_slots_, n_ctx_;
  FakeStats* stats_;
  std::chrono::milliseconds delay_;
  int eog_after_;
  std::vector<std::vector<int32_t>> hist_;
  std::vector<int> prompt_len_;  // per slot: the history length when generation started
};

class FakeModel : public sched::LoadedModel {
 public:
  FakeModel(FakeStats* stats, std::chrono::milliseconds delay, int eog_after)
      : stats_(stats), delay_(delay), eog_after_(eog_after) {
    facts_.architecture = "fake";
    facts_.size_bytes = 100;
    facts_.n_ctx_train = 4096;
    facts_.has_chat_template = true;  // render_chat below: "<role>content" per message
    facts_.tools = stats->tools;
    facts_.thinking = stats->thinking;
  }
  std::unique_ptr<sched::ReplyParser> reply_parser(const sched::ReplyRequest& r) const override {
    if (!stats_->thinking) return nullptr;
    return std::make_unique<FakeThinkParser>(r.rendered.ends_with("<think>"));
  }
  Result<std::shared_ptr<const sched::OutputConstraint>> compile_constraint(const sched::ConstraintRequest& r) const override {
    if (r.format == "bad") return Error(Code::invalid_argument, "format: unsupported keyword \"not\"");
    return std::shared_ptr<const sched::OutputConstraint>(std::make_shared<FakeConstraint>());
  }
  const sched::ModelFacts& facts() const override { return facts_; }
  Result<std::vector<int32_t>> tokenize(std::string_view text, bool) const override {
    std::vector<int32_t> out;
    for (unsigned char c : text) out.push_back(static_cast<int32_t>(c) + 2);
    return out;
  }
  std::string token_text(int32_t id) const override { return std::string(1, static_cast<char>(id - 2)); }
  bool is_end_of_generation(int32_t id) const override { return id == 1; }
  using sched::LoadedModel::render_chat;
  Result<std::string> render_chat(const std::vector<sched::ChatMessage>& msgs, const sched::ChatRender&) const override {
    std::string s;
    for (const auto& m : msgs) s += "<" + m.role + ">" + m.content;
    return s;
  }
  Result<std::unique_ptr<sched::BatchRunner>> make_runner(int n_slots, int n_ctx) override {
    return std::unique_ptr<sched::BatchRunner>(new FakeRunner(n_slots, n_ctx, stats_, delay_, eog_after_));
  }

 private:
  sched::ModelFacts facts_;
  FakeStats* stats_;
  std::chrono::milliseconds delay_;
  int eog_after_;
};

}  // namespace nurl::test
