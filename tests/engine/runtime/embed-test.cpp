// Embeddings (mean-pooled, L2-normalised final hidden states) on stories260K: unit length,
// deterministic, independent of the chunking, sensitive to the text, truncation visible.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/runtime/embed.h"
#include "engine/runtime/model.h"
#include "golden.h"

namespace nurl {
namespace {

double dot(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += static_cast<double>(a[i]) * b[i];
  return s;
}

class EmbedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    NURL_REQUIRE_TESTDATA();
    auto m = Model::load(test::testdata("models/stories260K.gguf"));
    ASSERT_TRUE(m.ok()) << m.error().msg;
    model_ = *m;
    golden_ = test::load_golden("stories260K", 0.1);
  }
  std::unique_ptr<Context> context(int n_ctx, int n_batch) {
    auto c = Context::create(model_, embedding_context_options(n_ctx, n_batch, 2));
    EXPECT_TRUE(c.ok()) << c.error().msg;
    return c.ok() ? std::move(*c) : nullptr;
  }
  std::shared_ptr<const Model> model_;
  std::vector<test::GoldenPrompt> golden_;
};

TEST_F(EmbedTest, UnitLengthDeterministicAndChunkIndependent) {
  auto big = context(2048, 512), small = context(2048, 16);
  ASSERT_TRUE(big && small);
  for (const auto& g : golden_) {
    SCOPED_TRACE(g.id);
    auto a = embed(*big, g.prompt_tokens);
    ASSERT_TRUE(a.ok()) << a.error().msg;
    EXPECT_EQ(a->values.size(), static_cast<size_t>(model_->n_embd()));
    EXPECT_EQ(a->n_tokens, static_cast<int32_t>(g.prompt_tokens.size()));
    for (float v : a->values) ASSERT_TRUE(std::isfinite(v));
    EXPECT_NEAR(dot(a->values, a->values), 1.0, 1e-5);
    auto again = embed(*big, g.prompt_tokens);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->values, a->values);
    if (g.prompt_tokens.size() > 200) continue;  // keeps the test fast; chunking is covered below
    auto chunked = embed(*small, g.prompt_tokens);
    ASSERT_TRUE(chunked.ok());
    EXPECT_NEAR(dot(a->values, chunked->values), 1.0, 1e-4);
  }
}

TEST_F(EmbedTest, DifferentTextsDiffer) {
  auto ctx = context(2048, 512);
  ASSERT_TRUE(ctx);
  auto a = embed(*ctx, golden_[0].prompt_tokens), b = embed(*ctx, golden_[1].prompt_tokens);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_LT(dot(a->values, b->values), 0.999);
}

TEST_F(EmbedTest, TruncationVisible) {
  auto ctx = context(64, 64);
  ASSERT_TRUE(ctx);
  const auto& longest = golden_.back().prompt_tokens;
  ASSERT_GT(longest.size(), 64u);
  auto t = embed(*ctx, longest, true);
  ASSERT_TRUE(t.ok()) << t.error().msg;
  EXPECT_TRUE(t->truncated);
  EXPECT_EQ(t->n_tokens, 64);
  auto head = embed(*ctx, std::span<const int32_t>(longest).first(64));
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(head->values, t->values);
  auto e = embed(*ctx, longest, false);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().code, Code::invalid_argument);
  EXPECT_FALSE(embed(*ctx, std::vector<int32_t>{}).ok());
}

}  // namespace
}  // namespace nurl
