// BatchRunner on the real stories260K model: sequences decoded together give exactly the greedy
// ids of each decoded alone, which in turn match llama.cpp's goldens; sequences join while others
// run; cancel and slot exhaustion behave.
#include <gtest/gtest.h>

#include <map>

#include "engine/runtime/batch.h"
#include "engine/runtime/model.h"
#include "engine/tokenizer/tokenizer.h"
#include "golden.h"

namespace nurl {
namespace {

constexpr double kTol = 0.1;
constexpr int kPredict = 16;

class BatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::load_stories260k(model_, tok_);
    if (HasFatalFailure()) return;
    golden_ = test::load_golden("stories260K", kTol);
  }
  std::unique_ptr<Context> context(int n_seq, int n_batch) {
    ContextOptions co;
    co.n_ctx = 2048;
    co.n_seq = n_seq;
    co.n_batch = n_batch;
    co.n_threads = 2;
    auto c = Context::create(model_, co);
    EXPECT_TRUE(c.ok()) << c.error().msg;
    return c.ok() ? std::move(*c) : nullptr;
  }
  static Options opts() {
    Options o = greedy_options();
    o.num_predict = kPredict;
    return o;
  }

  std::shared_ptr<const Model> model_;
  std::unique_ptr<Tokenizer> tok_;
  std::vector<test::GoldenPrompt> golden_;
};

TEST_F(BatchTest, ParallelEqualsAlone) {
  // Alone: one sequence at a time through a Session.
  std::map<std::string, GenerateResult> alone;
  {
    auto ctx = context(1, 512);
    ASSERT_TRUE(ctx);
    for (const auto& g : golden_) {
      Session s(*ctx, *tok_);
      auto r = s.generate(g.prompt_tokens, opts(), nullptr);
      ASSERT_TRUE(r.ok()) << r.error().msg;
      alone[g.id] = *r;
      // The solo runs are right: they agree with llama.cpp on the comparable steps.
      const int n = std::min(g.comparable, kPredict);
      EXPECT_EQ(std::vector<int32_t>(r->tokens.begin(), r->tokens.begin() + n),
                std::vector<int32_t>(g.greedy_ids.begin(), g.greedy_ids.begin() + n))
          << g.id;
    }
  }
  // Together: all six prompts in one runner; a 128-token budget makes the long prompts prefill
  // over several steps while the short ones already decode.
  auto ctx = context(static_cast<int>(golden_.size()), 128);
  ASSERT_TRUE(ctx);
  BatchRunner runner(*ctx, *tok_);
  std::map<BatchRunner::SeqId, std::string> names;
  std::map<std::string, GenerateResult> together;
  std::map<std::string, std::string> streamed;
  for (const auto& g : golden_) {
    auto id = runner.add(g.prompt_tokens, opts(),
                         [&streamed, name = g.id](const TokenEvent& ev) {
                           streamed[name].append(ev.text);
                           return true;
                         },
                         [&](BatchRunner::SeqId sid, Result<GenerateResult> r) {
                           ASSERT_TRUE(r.ok()) << r.error().msg;
                           together[names[sid]] = *r;
                         });
    ASSERT_TRUE(id.ok()) << id.error().msg;
    names[*id] = g.id;
  }
  int steps = 0;
  while (runner.n_active() > 0 && steps < 1000) {
    auto r = runner.step();
    ASSERT_TRUE(r.ok()) << r.error().msg;
    ++steps;
  }
  EXPECT_EQ(runner.n_active(), 0);
  for (const auto& g : golden_) {
    SCOPED_TRACE(g.id);
    ASSERT_TRUE(together.count(g.id));
    EXPECT_EQ(together[g.id].tokens, alone[g.id].tokens);
    EXPECT_EQ(together[g.id].text, alone[g.id].text);
    EXPECT_EQ(streamed[g.id], alone[g.id].text);
    EXPECT_EQ(together[g.id].done_reason, DoneReason::length);
  }
}

TEST_F(BatchTest, JoinCancelAndBusy) {
  auto ctx = context(2, 512);
  ASSERT_TRUE(ctx);
  BatchRunner runner(*ctx, *tok_);
  std::map<BatchRunner::SeqId, GenerateResult> done;
  auto on_done = [&](BatchRunner::SeqId id, Result<GenerateResult> r) {
    ASSERT_TRUE(r.ok());
    done[id] = *r;
  };
  auto a = runner.add(golden_[0].prompt_tokens, opts(), nullptr, on_done);
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(runner.step().ok());
  ASSERT_TRUE(runner.step().ok());
  auto b = runner.add(golden_[1].prompt_tokens, opts(), nullptr, on_done);  // joins mid-flight
  ASSERT_TRUE(b.ok());
  auto c = runner.add(golden_[2].prompt_tokens, opts(), nullptr, on_done);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().code, Code::busy);
  ASSERT_TRUE(runner.step().ok());
  EXPECT_TRUE(runner.cancel(*a));
  EXPECT_FALSE(runner.cancel(*a));
  ASSERT_TRUE(done.count(*a));
  EXPECT_EQ(done[*a].done_reason, DoneReason::cancelled);
  EXPECT_EQ(done[*a].tokens.size(), 3u);
  while (runner.n_active() > 0) ASSERT_TRUE(runner.step().ok());
  ASSERT_TRUE(done.count(*b));
  const auto& g = golden_[1];
  const int n = std::min(g.comparable, kPredict);
  EXPECT_EQ(std::vector<int32_t>(done[*b].tokens.begin(), done[*b].tokens.begin() + n),
            std::vector<int32_t>(g.greedy_ids.begin(), g.greedy_ids.begin() + n));
}

TEST_F(BatchTest, FreeSlotWithLongestPrefixIsReused) {
  auto ctx = context(2, 512);
  ASSERT_TRUE(ctx);
  BatchRunner runner(*ctx, *tok_);
  GenerateResult last;
  auto on_done = [&](BatchRunner::SeqId, Result<GenerateResult> r) {
    ASSERT_TRUE(r.ok());
    last = *r;
  };
  const auto& g = golden_[0];
  Options o = opts();
  ASSERT_TRUE(runner.add(golden_[1].prompt_tokens, o, nullptr, on_done).ok());
  ASSERT_TRUE(runner.add(g.prompt_tokens, o, nullptr, on_done).ok());
  while (runner.n_active() > 0) ASSERT_TRUE(runner.step().ok());
  // Same prompt again: the slot that holds it is chosen and everything but its last token reused.
  ASSERT_TRUE(runner.add(g.prompt_tokens, o, nullptr, on_done).ok());
  while (runner.n_active() > 0) ASSERT_TRUE(runner.step().ok());
  EXPECT_EQ(last.timings.prompt_cached, static_cast<int32_t>(g.prompt_tokens.size()) - 1);
  EXPECT_EQ(last.timings.prompt_eval_count, 1);
  const int n = std::min(g.comparable, kPredict);
  EXPECT_EQ(std::vector<int32_t>(last.tokens.begin(), last.tokens.begin() + n),
            std::vector<int32_t>(g.greedy_ids.begin(), g.greedy_ids.begin() + n));
}

}  // namespace
}  // namespace nurl
