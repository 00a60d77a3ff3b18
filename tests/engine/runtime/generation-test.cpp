// Generation state machine with scripted logits (one-hot rows, so greedy picks a chosen id) and
// the real stories260K vocabulary: end-of-generation ids, num_predict, the context bound, stop
// strings across tokens, UTF-8 hold-back through byte pieces, cancellation and prefill pings.
// No forward pass is involved; the expected texts are the vocabulary's pieces, written here.
#include <gtest/gtest.h>

#include "engine/gguf/gguf.h"
#include "engine/runtime/session.h"
#include "engine/tokenizer/tokenizer.h"
#include "testdata.h"

namespace nurl {
namespace {

class GenerationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    NURL_REQUIRE_TESTDATA();
    auto f = gguf::File::open(test::testdata("models/stories260K.gguf"));
    ASSERT_TRUE(f.ok()) << f.error().msg;
    auto t = Tokenizer::from_gguf(*f);
    ASSERT_TRUE(t.ok()) << t.error().msg;
    tok_ = std::make_unique<Tokenizer>(*t);
    n_vocab_ = tok_->n_vocab();
  }
  int32_t id(std::string_view text) {
    auto i = tok_->find_token(text);
    EXPECT_TRUE(i.has_value()) << "no token " << text;
    return i.value_or(0);
  }
  std::vector<float> one_hot(int32_t id) {
    std::vector<float> l(static_cast<size_t>(n_vocab_), 0.0f);
    l[static_cast<size_t>(id)] = 10.0f;
    return l;
  }
  // Feeds the prompt in one go, then the scripted ids until the generation ends.
  struct Run {
    GenerateResult result;
    std::vector<std::string> texts;  // text of every event, in order
    std::vector<int32_t> event_ids;
    int n_logits = 0;                // rows consumed
  };
  Run run(const Options& o, std::vector<int32_t> prompt, const std::vector<int32_t>& script, int32_t n_ctx = 2048,
          int stop_after_events = -1) {
    Run r;
    int events = 0;
    Generation g(*tok_, o, std::move(prompt), n_ctx, n_vocab_, [&](const TokenEvent& ev) {
      r.texts.emplace_back(ev.text);
      r.event_ids.push_back(ev.token);
      return ++events != stop_after_events;
    });
    g.prompt_fed(static_cast<int32_t>(g.pending_prompt().size()));
    for (int32_t s : script) {
      ++r.n_logits;
      if (!g.on_logits(one_hot(s))) break;
    }
    r.result = g.take_result();
    return r;
  }

  std::unique_ptr<Tokenizer> tok_;
  int32_t n_vocab_ = 0;
};

TEST_F(GenerationTest, EndOfGenerationIdStopsAndIsNotEmitted) {
  const int32_t eos = tok_->eos();
  ASSERT_TRUE(tok_->is_eog(eos));
  auto r = run(greedy_options(), {1, id("▁Once")}, {id("▁upon"), id("▁a"), eos, id("▁time")});
  EXPECT_EQ(r.result.done_reason, DoneReason::stop);
  EXPECT_EQ(r.result.tokens, (std::vector<int32_t>{id("▁upon"), id("▁a")}));
  EXPECT_EQ(r.result.text, " upon a");
  EXPECT_EQ(r.n_logits, 3);
}

TEST_F(GenerationTest, NumPredictEndsWithLength) {
  Options o = greedy_options();
  o.num_predict = 2;
  auto r = run(o, {1}, {id("▁upon"), id("▁a"), id("▁time")});
  EXPECT_EQ(r.result.done_reason, DoneReason::length);
  EXPECT_EQ(r.result.tokens.size(), 2u);
  EXPECT_EQ(r.result.timings.eval_count, 2);
  EXPECT_EQ(r.result.timings.prompt_eval_count, 1);
}

TEST_F(GenerationTest, ContextBoundEndsWithLength) {
  // 3 prompt positions in a context of 5: tokens 1 and 2 are fed at positions 3 and 4; token 3
  // comes from the logits at position 4 and cannot be fed, so generation ends there.
  auto r = run(greedy_options(), {1, 2, 3}, std::vector<int32_t>(10, id("▁a")), 5);
  EXPECT_EQ(r.result.done_reason, DoneReason::length);
  EXPECT_EQ(r.result.tokens.size(), 3u);
  EXPECT_EQ(r.result.n_ctx, 5);
}

TEST_F(GenerationTest, StopStringAcrossTokensIsNeverEmitted) {
  Options o = greedy_options();
  o.stop = {"a time"};
  auto r = run(o, {1}, {id("▁upon"), id("▁a"), id("▁time"), id("▁there")});
  EXPECT_EQ(r.result.done_reason, DoneReason::stop);
  EXPECT_EQ(r.result.text, " upon ");
  std::string joined;
  for (auto& t : r.texts) joined += t;
  EXPECT_EQ(joined, " upon ");
  // " a" was held back (could start "a time") until " time" resolved it.
  ASSERT_EQ(r.texts.size(), 3u);
  EXPECT_EQ(r.texts[0], " upon");
  EXPECT_EQ(r.texts[1], " ");
  EXPECT_EQ(r.texts[2], "");
}

TEST_F(GenerationTest, HeldBackTextIsFlushedAtTheEnd) {
  Options o = greedy_options();
  o.stop = {"a time"};
  o.num_predict = 2;
  auto r = run(o, {1}, {id("▁upon"), id("▁a"), id("▁time")});
  EXPECT_EQ(r.result.done_reason, DoneReason::length);
  EXPECT_EQ(r.result.text, " upon a");
  ASSERT_FALSE(r.event_ids.empty());
  EXPECT_EQ(r.event_ids.back(), -1);  // the flush event
  EXPECT_EQ(r.texts.back(), "a");
}

TEST_F(GenerationTest, Utf8CharacterHeldUntilComplete) {
  // "é" = C3 A9 as two byte-fallback pieces.
  auto r = run(greedy_options(), {1}, {id("<0xC3>"), id("<0xA9>"), id("▁a"), tok_->eos()});
  ASSERT_GE(r.texts.size(), 3u);
  EXPECT_EQ(r.texts[0], "");
  EXPECT_EQ(r.texts[1], "é");
  EXPECT_EQ(r.result.text, "é a");
}

TEST_F(GenerationTest, OnTokenFalseCancelsAtOnce) {
  auto r = run(greedy_options(), {1}, std::vector<int32_t>(10, id("▁a")), 2048, 3);
  EXPECT_EQ(r.result.done_reason, DoneReason::cancelled);
  EXPECT_EQ(r.result.tokens.size(), 3u);
  EXPECT_EQ(r.n_logits, 3);
}

TEST_F(GenerationTest, PrefillPingCanCancel) {
  int pings = 0;
  Generation g(*tok_, greedy_options(), std::vector<int32_t>(100, id("▁a")), 2048, n_vocab_, [&](const TokenEvent& ev) {
    EXPECT_EQ(ev.token, -1);
    EXPECT_EQ(ev.n_prompt, 100);
    EXPECT_EQ(ev.n_prompt_done, 32 * (pings + 1));
    return ++pings < 2;
  });
  EXPECT_TRUE(g.prompt_fed(32));
  EXPECT_FALSE(g.prompt_fed(32));
  EXPECT_TRUE(g.done());
  EXPECT_EQ(g.result().done_reason, DoneReason::cancelled);
  EXPECT_EQ(g.result().timings.prompt_eval_count, 64);
  EXPECT_EQ(g.result().timings.eval_count, 0);
}

TEST_F(GenerationTest, LogprobsReachTheEvents) {
  Options o = greedy_options();
  o.logprobs = true;
  o.top_logprobs = 2;
  o.num_predict = 1;
  float lp = 1, top0 = 1;
  int32_t top_id = -1;
  Generation g(*tok_, o, {1}, 2048, n_vocab_, [&](const TokenEvent& ev) {
    if (ev.sample) {
      lp = ev.sample->logprob;
      top_id = ev.sample->top.at(0).id;
      top0 = ev.sample->top.at(0).logprob;
    }
    return true;
  });
  g.prompt_fed(1);
  auto l = one_hot(id("▁a"));  // 10 at one id, 0 elsewhere: p = e^10 / (e^10 + n_vocab - 1)
  g.on_logits(l);
  const double want = 10.0 - std::log(std::exp(10.0) + (n_vocab_ - 1));
  EXPECT_NEAR(lp, want, 1e-4);
  EXPECT_EQ(top_id, id("▁a"));
  EXPECT_NEAR(top0, want, 1e-4);
}

TEST(PlanPrompt, FitsOrTruncatesVisibly) {
  Options o;
  std::vector<int32_t> p(100);
  for (int i = 0; i < 100; ++i) p[static_cast<size_t>(i)] = i;
  auto fit = plan_prompt(p, 101, o);
  ASSERT_TRUE(fit.ok());
  EXPECT_EQ(fit->n_dropped, 0);
  EXPECT_EQ(fit->tokens, p);

  o.num_keep = 4;
  o.num_predict = 10;  // reserve 10 of 64 positions → 54 prompt tokens: 4 kept + the last 50
  auto cut = plan_prompt(p, 64, o);
  ASSERT_TRUE(cut.ok());
  EXPECT_EQ(cut->n_dropped, 46);
  ASSERT_EQ(cut->tokens.size(), 54u);
  EXPECT_EQ(cut->tokens[3], 3);
  EXPECT_EQ(cut->tokens[4], 50);
  EXPECT_EQ(cut->tokens.back(), 99);

  o.truncate = false;
  auto err = plan_prompt(p, 64, o);
  ASSERT_FALSE(err.ok());
  EXPECT_NE(err.error().msg.find("does not fit"), std::string::npos);
}

}  // namespace
}  // namespace nurl
