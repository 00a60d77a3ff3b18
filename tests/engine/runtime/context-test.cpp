// Context behaviour on real test models: batches mixing sequences give each sequence the same
// logits as decoding it alone, cache truncation and chunked prompts match a plain run, hidden
// states are what the output matrix multiplies, and invalid batches are refused before any
// state changes. The reference in each case is the same engine run the plain way (the numbers
// themselves are checked against llama.cpp in arch/golden-forward-test.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "engine/arch/linear.h"
#include "engine/runtime/context.h"
#include "engine/runtime/model.h"
#include "testdata.h"

namespace nurl {
namespace {

std::shared_ptr<const Model> load(const std::string& name) {
  auto m = Model::load(test::testdata("models/" + name));
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().msg);
  return m.ok() ? *m : nullptr;
}

std::unique_ptr<Context> make_ctx(std::shared_ptr<const Model> m, int n_seq = 1, int n_batch = 512, int n_ctx = 256) {
  ContextOptions o;
  o.n_seq = n_seq;
  o.n_batch = n_batch;
  o.n_ctx = n_ctx;
  o.n_threads = 2;
  auto c = Context::create(std::move(m), o);
  EXPECT_TRUE(c.ok());
  return std::move(c).value();
}

float max_diff(std::span<const float> a, std::span<const float> b) {
  EXPECT_EQ(a.size(), b.size());
  float d = 0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, std::fabs(a[i] - b[i]));
  return d;
}

const std::vector<int32_t> kA = {1, 403, 407, 261, 378, 466, 259, 300, 267, 349, 431, 260};
const std::vector<int32_t> kB = {1, 320, 261, 431, 287, 278, 406, 373};
const std::vector<int32_t> kC = {290, 329, 268, 305, 471};

TEST(Context, MixedSequenceBatchMatchesSeparateRuns) {
  NURL_REQUIRE_TESTDATA();
  auto m = load("llama-tok512-Q4_K_M.gguf");
  ASSERT_TRUE(m);
  auto solo = make_ctx(m);
  auto ra = solo->eval(kA);
  ASSERT_TRUE(ra.ok());
  std::vector<float> la(ra->begin(), ra->end());
  solo->clear(0);
  auto rb = solo->eval(kB);
  std::vector<float> lb(rb->begin(), rb->end());

  // Interleave the two prompts in one batch, sequence 1 first, with logits at each end.
  auto both = make_ctx(m, 2);
  std::vector<BatchEntry> batch;
  size_t ia = 0, ib = 0;
  while (ia < kA.size() || ib < kB.size()) {
    if (ib < kB.size()) batch.push_back({kB[ib], int32_t(ib), 1, ib + 1 == kB.size()}), ++ib;
    if (ia < kA.size()) batch.push_back({kA[ia], int32_t(ia), 0, ia + 1 == kA.size()}), ++ia;
    if (ia < kA.size()) batch.push_back({kA[ia], int32_t(ia), 0, ia + 1 == kA.size()}), ++ia;
  }
  ASSERT_TRUE(both->decode(batch).ok());
  ASSERT_EQ(both->n_outputs(), 2);
  // Output rows follow batch order: A (two entries per round) ends before B here.
  EXPECT_LE(max_diff(both->logits(0), la), 1e-4f);
  EXPECT_LE(max_diff(both->logits(1), lb), 1e-4f);
  EXPECT_EQ(both->n_pos(0), int(kA.size()));
  EXPECT_EQ(both->n_pos(1), int(kB.size()));

  // One more step for both sequences in one batch equals separate single steps.
  std::vector<BatchEntry> step = {{kC[0], int32_t(kA.size()), 0, true}, {kC[1], int32_t(kB.size()), 1, true}};
  ASSERT_TRUE(both->decode(step).ok());
  solo->clear(0);
  (void)solo->eval(kA);
  auto sa = solo->eval(std::span<const int32_t>(&kC[0], 1));
  EXPECT_LE(max_diff(both->logits(0), *sa), 1e-4f);
  solo->clear(0);
  (void)solo->eval(kB);
  auto sb = solo->eval(std::span<const int32_t>(&kC[1], 1));
  EXPECT_LE(max_diff(both->logits(1), *sb), 1e-4f);
}

TEST(Context, TruncateReusesThePrefix) {
  NURL_REQUIRE_TESTDATA();
  auto m = load("qwen3-F16-embQ4_0.gguf");
  ASSERT_TRUE(m);
  auto ctx = make_ctx(m);
  std::vector<int32_t> ac = kA;
  ac.insert(ac.end(), kC.begin(), kC.end());
  auto r = ctx->eval(ac);
  std::vector<float> want(r->begin(), r->end());

  ctx->clear(0);
  ASSERT_TRUE(ctx->eval(kA).ok());
  ASSERT_TRUE(ctx->eval(kB).ok());
  ctx->truncate(0, int(kA.size()));
  EXPECT_EQ(ctx->n_pos(0), int(kA.size()));
  auto got = ctx->eval(kC);
  ASSERT_TRUE(got.ok());
  EXPECT_LE(max_diff(*got, want), 1e-4f);
}

TEST(Context, ChunkedPromptMatchesOneBatch) {
  NURL_REQUIRE_TESTDATA();
  auto m = load("gemma3-F16-embQ4_0.gguf");  // sliding window 64: the prompt crosses it
  ASSERT_TRUE(m);
  std::vector<int32_t> prompt;
  for (int i = 0; i < 150; ++i) prompt.push_back(2 + (i * 7919) % 5000);
  auto one = make_ctx(m);
  auto r1 = one->eval(prompt);
  std::vector<float> want(r1->begin(), r1->end());
  auto chunked = make_ctx(m, 1, 7);
  auto r2 = chunked->eval(prompt);
  ASSERT_TRUE(r2.ok());
  EXPECT_LE(max_diff(*r2, want), 1e-3f);
}

TEST(Context, HiddenStateIsWhatTheOutputMultiplies) {
  NURL_REQUIRE_TESTDATA();
  auto m = load("stories260K.gguf");  // all F32: logits = output · hidden exactly up to rounding
  ASSERT_TRUE(m);
  ContextOptions o;
  o.n_ctx = 64;
  o.embeddings = true;
  o.max_outputs = 16;
  auto ctx = Context::create(m, o);
  ASSERT_TRUE(ctx.ok());
  std::vector<BatchEntry> batch;
  for (size_t i = 0; i < kA.size(); ++i) batch.push_back({kA[i], int32_t(i), 0, i % 4 == 3});
  ASSERT_TRUE((*ctx)->decode(batch).ok());
  ASSERT_EQ((*ctx)->n_outputs(), 3);
  const WeightMatrix& out = m->weights().output;
  std::vector<float> row(static_cast<size_t>(out.n_in));
  for (int k = 0; k < 3; ++k) {
    auto h = (*ctx)->hidden(k);
    auto lg = (*ctx)->logits(k);
    for (int v = 0; v < m->n_vocab(); v += 37) {
      dequant_row(out, v, row.data());
      double s = 0;
      for (size_t j = 0; j < row.size(); ++j) s += double(row[j]) * h[j];
      EXPECT_NEAR(lg[static_cast<size_t>(v)], s, 1e-3) << "output " << k << " vocab " << v;
    }
  }
}

TEST(Context, InvalidBatchesAreRefusedWithoutStateChange) {
  NURL_REQUIRE_TESTDATA();
  auto m = load("stories260K.gguf");
  ASSERT_TRUE(m);
  auto ctx = make_ctx(m, 2, 512, 16);
  ASSERT_TRUE(ctx->eval(kB).ok());
  struct Case {
    std::vector<BatchEntry> batch;
    const char* needle;
  } cases[] = {
      {{{5, 8, 2, true}}, "sequence 2 out of range"},
      {{{512, 8, 0, true}}, "token 512 out of range"},
      {{{5, 9, 0, true}}, "position 9 of sequence 0, expected 8"},
      {{{5, 8, 0, false}, {6, 8, 0, true}}, "expected 9"},
      {{{5, 8, 0, true}, {6, 0, 1, true}, {7, 1, 1, true}}, "at most 2"},
  };
  for (const Case& c : cases) {
    auto r = ctx->decode(c.batch);
    ASSERT_FALSE(r.ok()) << c.needle;
    EXPECT_NE(r.error().msg.find(c.needle), std::string::npos) << r.error().msg;
    EXPECT_EQ(ctx->n_pos(0), int(kB.size()));
    EXPECT_EQ(ctx->n_pos(1), 0);
  }
  std::vector<int32_t> fill(8, 5);
  ASSERT_TRUE(ctx->eval(fill).ok());  // 16 positions: full
  auto full = ctx->eval(std::span<const int32_t>(fill.data(), 1));
  ASSERT_FALSE(full.ok());
  EXPECT_NE(full.error().msg.find("context full"), std::string::npos) << full.error().msg;
}

}  // namespace
}  // namespace nurl
