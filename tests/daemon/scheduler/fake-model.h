// A fake model for scheduler and route tests: bytes are tokens (id = byte + 2, EOG = 1), and the
// next token is a hash of the slot's whole history, so a sequence's output depends only on its
// own tokens — exactly the property batched decoding must preserve. The runner records how it
// was driven (batch sizes, prefill calls) so tests can tell that batching really happened.
#pragma once

#include <atomic>
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
};

class FakeRunner : public sched::BatchRunner {
 public:
  FakeRunner(int n_slots, int n_ctx, FakeStats* stats, std::chrono::milliseconds step_delay, int eog_after)
      : n_slots_(n_slots), n_ctx_(n_ctx), stats_(stats), delay_(step_delay), eog_after_(eog_after),
        hist_(static_cast<size_t>(n_slots)) {}
  int n_slots() const override { return n_slots_; }
  int n_ctx() const override { return n_ctx_; }
  void reset(int slot, const sched::Sampling&) override { hist_[static_cast<size_t>(slot)].clear(); }
  Result<int32_t> prefill(int slot, std::span<const int32_t> toks, bool want_next) override {
    stats_->prefill_calls++;
    std::this_thread::sleep_for(delay_);
    auto& h = hist_[static_cast<size_t>(slot)];
    h.insert(h.end(), toks.begin(), toks.end());
    return want_next ? sample(h) : -1;
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
      next[i] = sample(h);
    }
    return ok();
  }

 private:
  int32_t sample(const std::vector<int32_t>& h) const {
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
};

class FakeModel : public sched::LoadedModel {
 public:
  FakeModel(FakeStats* stats, std::chrono::milliseconds delay, int eog_after)
      : stats_(stats), delay_(delay), eog_after_(eog_after) {
    facts_.architecture = "fake";
    facts_.size_bytes = 100;
    facts_.n_ctx_train = 4096;
    facts_.has_chat_template = true;  // render_chat below: "<role>content" per message
  }
  const sched::ModelFacts& facts() const override { return facts_; }
  Result<std::vector<int32_t>> tokenize(std::string_view text, bool) const override {
    std::vector<int32_t> out;
    for (unsigned char c : text) out.push_back(static_cast<int32_t>(c) + 2);
    return out;
  }
  std::string token_text(int32_t id) const override { return std::string(1, static_cast<char>(id - 2)); }
  bool is_end_of_generation(int32_t id) const override { return id == 1; }
  Result<std::string> render_chat(const std::vector<sched::ChatMessage>& msgs, const std::string&,
                                  bool) const override {
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
