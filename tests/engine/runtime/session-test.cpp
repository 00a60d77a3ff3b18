// Session::generate on the real stories260K model against llama.cpp's greedy goldens: ids and
// text, chunked prefill, prefix reuse, cancellation between prefill chunks, truncation, the
// context bound and seeded sampling.
#include <gtest/gtest.h>

#include "engine/runtime/context.h"
#include "engine/runtime/model.h"
#include "engine/runtime/session.h"
#include "engine/tokenizer/tokenizer.h"
#include "golden.h"

namespace nurl {
namespace {

constexpr double kTol = 0.1;  // F32 model (testdata README, "Tolerances")

class SessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::load_stories260k(model_, tok_);
    if (HasFatalFailure()) return;
    ContextOptions co;
    co.n_ctx = 2048;
    co.n_threads = 2;
    auto c = Context::create(model_, co);
    ASSERT_TRUE(c.ok()) << c.error().msg;
    ctx_ = std::move(*c);
    golden_ = test::load_golden("stories260K", kTol);
  }
  const test::GoldenPrompt& golden(const std::string& id) {
    for (const auto& g : golden_)
      if (g.id == id) return g;
    ADD_FAILURE() << "no golden prompt " << id;
    return golden_.front();
  }
  static std::vector<int32_t> first(const std::vector<int32_t>& v, int n) { return {v.begin(), v.begin() + n}; }

  std::shared_ptr<const Model> model_;
  std::unique_ptr<Tokenizer> tok_;
  std::unique_ptr<Context> ctx_;
  std::vector<test::GoldenPrompt> golden_;
};

TEST_F(SessionTest, GreedyMatchesGoldenIdsAndText) {
  for (const auto& g : golden_) {
    SCOPED_TRACE(g.id);
    ASSERT_EQ(tok_->encode(g.text, true, true), g.prompt_tokens);
    ASSERT_GT(g.comparable, 0);
    Session s(*ctx_, *tok_);
    Options o = greedy_options();
    o.num_predict = g.comparable;
    o.num_batch = 64;  // the longer prompts are evaluated in several chunks
    std::string streamed;
    auto r = s.generate(g.prompt_tokens, o, [&](const TokenEvent& ev) {
      streamed.append(ev.text);
      return true;
    });
    ASSERT_TRUE(r.ok()) << r.error().msg;
    EXPECT_EQ(r->tokens, first(g.greedy_ids, g.comparable));
    std::string want;
    for (int i = 0; i < g.comparable; ++i) want += g.pieces[static_cast<size_t>(i)];
    EXPECT_EQ(r->text, want);
    EXPECT_EQ(streamed, want);
    EXPECT_EQ(r->done_reason, DoneReason::length);
    EXPECT_EQ(r->timings.prompt_eval_count, static_cast<int32_t>(g.prompt_tokens.size()));
    EXPECT_EQ(r->timings.eval_count, g.comparable);
    EXPECT_GT(r->timings.prompt_eval_ns, 0);
    EXPECT_GE(r->timings.total_ns, r->timings.prompt_eval_ns + r->timings.eval_ns);
    EXPECT_FALSE(r->truncated);
  }
}

TEST_F(SessionTest, ReusesTheCachedPrefix) {
  const auto& g = golden("plain_english");
  const int half = static_cast<int>(g.prompt_tokens.size()) / 2;
  Session s(*ctx_, *tok_);
  Options o = greedy_options();
  o.num_predict = 1;
  ASSERT_TRUE(s.generate(first(g.prompt_tokens, half), o, nullptr).ok());
  o.num_predict = g.comparable;
  auto r = s.generate(g.prompt_tokens, o, nullptr);
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(r->timings.prompt_cached, half);
  EXPECT_EQ(r->timings.prompt_eval_count, static_cast<int32_t>(g.prompt_tokens.size()) - half);
  EXPECT_EQ(r->tokens, first(g.greedy_ids, g.comparable));
}

TEST_F(SessionTest, CancelBetweenPrefillChunks) {
  const auto& g = golden("long");
  Session s(*ctx_, *tok_);
  Options o = greedy_options();
  o.num_batch = 64;
  int pings = 0;
  auto r = s.generate(g.prompt_tokens, o, [&](const TokenEvent& ev) {
    EXPECT_EQ(ev.token, -1);
    ++pings;
    return false;
  });
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(pings, 1);
  EXPECT_EQ(r->done_reason, DoneReason::cancelled);
  EXPECT_EQ(r->timings.prompt_eval_count, 64);
  EXPECT_TRUE(r->tokens.empty());
  // What was evaluated stays cached and is reused; the answer is still the golden one.
  o.num_predict = g.comparable;
  auto again = s.generate(g.prompt_tokens, o, nullptr);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->timings.prompt_cached, 64);
  EXPECT_EQ(again->tokens, first(g.greedy_ids, g.comparable));
}

TEST_F(SessionTest, CancelDuringGeneration) {
  const auto& g = golden("plain_english");
  Session s(*ctx_, *tok_);
  int n = 0;
  auto r = s.generate(g.prompt_tokens, greedy_options(), [&](const TokenEvent& ev) { return ev.token < 0 || ++n < 3; });
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->done_reason, DoneReason::cancelled);
  EXPECT_EQ(r->tokens.size(), 3u);
}

TEST_F(SessionTest, TruncationIsReportedOrRefused) {
  const auto& g = golden("long");  // 947 tokens
  Session s(*ctx_, *tok_);
  Options o = greedy_options();
  o.num_ctx = 128;
  o.num_predict = 5;
  auto r = s.generate(g.prompt_tokens, o, nullptr);
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_TRUE(r->truncated);
  EXPECT_EQ(r->n_ctx, 128);
  EXPECT_EQ(r->n_dropped, 947 - (128 - 5));
  EXPECT_EQ(r->timings.prompt_eval_count, 128 - 5);
  EXPECT_EQ(r->tokens.size(), 5u);

  o.truncate = false;
  auto e = s.generate(g.prompt_tokens, o, nullptr);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().code, Code::invalid_argument);
}

TEST_F(SessionTest, ContextLengthBoundedByTheContext) {
  Session s(*ctx_, *tok_);
  Options o = greedy_options();
  o.num_ctx = 1 << 20;
  o.num_predict = 1;
  auto r = s.generate(golden("code").prompt_tokens, o, nullptr);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->n_ctx, ctx_->n_ctx());
  EXPECT_LE(ctx_->n_ctx(), model_->n_ctx_train());
}

TEST_F(SessionTest, SameSeedSameText) {
  const auto& g = golden("plain_english");
  auto sample = [&](int64_t seed) {
    Session s(*ctx_, *tok_);
    Options o;  // ollama defaults: temperature 0.8, top_k 40, top_p 0.9, repeat_penalty 1.1
    o.seed = seed;
    o.num_predict = 24;
    auto r = s.generate(g.prompt_tokens, o, nullptr);
    EXPECT_TRUE(r.ok());
    return r.ok() ? r->text : std::string();
  };
  const std::string a = sample(7);
  EXPECT_EQ(a, sample(7));
  EXPECT_NE(a, sample(8));
}

TEST_F(SessionTest, RejectsBadInput) {
  Session s(*ctx_, *tok_);
  EXPECT_FALSE(s.generate({}, greedy_options(), nullptr).ok());
  Options o = greedy_options();
  o.top_logprobs = 99;
  EXPECT_FALSE(s.generate(golden("code").prompt_tokens, o, nullptr).ok());
}

}  // namespace
}  // namespace nurl
