// The token filter's masks against the definition: a token is allowed exactly when the matcher
// accepts all of its bytes (end-of-generation exactly when the document is complete). Checked
// token by token over the whole vocabulary along random constrained walks, on a small vocabulary
// with many steps and on the real Qwen vocabulary for a few.
#include <gtest/gtest.h>

#include <random>

#include "engine/gguf/gguf.h"
#include "engine/grammar/json-schema.h"
#include "engine/grammar/token-filter.h"
#include "engine/runtime/constraints.h"
#include "engine/tokenizer/tokenizer.h"
#include "testdata.h"

namespace nurl::grammar {
namespace {

bool bit(const std::vector<uint64_t>& m, int32_t id) { return (m[static_cast<size_t>(id) >> 6] >> (id & 63)) & 1; }

// Walks `steps` random allowed tokens; every `check_every` steps compares the whole mask with
// brute force (the matcher on each token's bytes).
void check_walk(const std::shared_ptr<TokenFilter>& f, int steps, uint32_t seed, int check_every) {
  Constraint c(f);
  std::vector<uint64_t> mask(f->n_words());
  std::mt19937 rng(seed);
  const int32_t n = f->vocab().n_vocab();
  for (int step = 0; step < steps; ++step) {
    c.mask(mask);
    std::vector<int32_t> allowed;
    const bool check = step % check_every == 0;
    for (int32_t id = 0; id < n; ++id) {
      if (check) {
        const bool want = f->is_eog(id) ? c.can_finish() : !f->bytes_of(id).empty() && c.matcher().accepts(f->bytes_of(id));
        ASSERT_EQ(bit(mask, id), want) << "step " << step << " token " << id << " '" << f->bytes_of(id) << "'";
      }
      if (bit(mask, id)) allowed.push_back(id);
    }
    ASSERT_FALSE(allowed.empty()) << "empty mask at step " << step;
    // Prefer continuing: end-of-generation only sometimes.
    int32_t t = allowed[rng() % allowed.size()];
    if (f->is_eog(t) && allowed.size() > 1 && rng() % 4) t = allowed[(rng() % (allowed.size() - 1) + 1) % allowed.size()];
    if (f->is_eog(t)) {
      c = Constraint(f);
      continue;
    }
    ASSERT_TRUE(c.accept(t));
  }
}

const char* kSchemas[] = {
    R"({"type":"object","properties":{"name":{"type":"string","maxLength":6},"n":{"type":"integer","minimum":-5,"maximum":120},
        "tags":{"type":"array","items":{"enum":["a","bc","d e"]},"maxItems":3},"ok":{"type":"boolean"}},"required":["name","n"]})",
    R"({"type":"array","items":{"type":"number","minimum":0,"exclusiveMaximum":10}})",
    R"({"$defs":{"t":{"type":"object","properties":{"v":{"type":"string","pattern":"^[a-c]{1,3}$"},"kids":{"type":"array","items":{"$ref":"#/$defs/t"},"maxItems":2}},"required":["v"]}},"$ref":"#/$defs/t"})",
    "json",
};

// A vocabulary of short random byte strings plus every single byte (so any document is reachable).
std::vector<std::string> random_vocab(uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::string> v;
  for (int b = 0; b < 256; ++b) v.push_back(std::string(1, static_cast<char>(b)));
  const std::string alphabet = "{}[]\":, \n0123456789-.eEabcdtrufnlsxyz\\é";
  for (int i = 0; i < 1500; ++i) {
    std::string s;
    const int len = 1 + static_cast<int>(rng() % 7);
    for (int k = 0; k < len; ++k) s += alphabet[rng() % alphabet.size()];
    v.push_back(s);
  }
  v.push_back("");  // a token that prints nothing: never allowed
  return v;
}

TEST(TokenFilter, MatchesBruteForceOnASmallVocabulary) {
  auto vocab = std::make_shared<const VocabTrie>(random_vocab(7));
  const int32_t eog = vocab->n_vocab() - 1;  // the empty token doubles as end-of-generation
  for (const char* schema : kSchemas) {
    auto g = compile_format(schema);
    ASSERT_TRUE(g.ok()) << g.error().msg;
    auto f = std::make_shared<TokenFilter>(std::make_shared<const Grammar>(std::move(*g)), vocab, std::vector<int32_t>{eog},
                                           std::vector<SpecialToken>{});
    for (uint32_t seed = 1; seed <= 2; ++seed) check_walk(f, 80, seed, 1);
  }
}

TEST(TokenFilter, MatchesBruteForceOnTheQwenVocabulary) {
  NURL_REQUIRE_TESTDATA();
  auto f = gguf::File::open(test::testdata("models/qwen2-F16-embQ4_0.gguf"));
  ASSERT_TRUE(f.ok()) << f.error().msg;
  auto tok = Tokenizer::from_gguf(*f);
  ASSERT_TRUE(tok.ok());
  ConstraintCompiler cc(*tok);
  for (const char* schema : {kSchemas[0], kSchemas[3]}) {
    auto filter = cc.format(schema);
    ASSERT_TRUE(filter.ok()) << filter.error().msg;
    check_walk(*filter, 40, 11, 10);
  }
}

TEST(TokenFilter, SpecialTokensAreAllowedAsTheirText) {
  auto vocab = std::make_shared<const VocabTrie>(std::vector<std::string>{"a", "<", "call", ">", "", "{}", ""});
  Builder b;
  RuleId root = b.rule("root", {b.literal("<call>{}")});
  auto g = b.build(root);
  ASSERT_TRUE(g.ok());
  // Token 4 prints nothing in the trie but is a control token whose text is "<call>".
  auto f = std::make_shared<TokenFilter>(std::make_shared<const Grammar>(std::move(*g)), vocab, std::vector<int32_t>{6},
                                         std::vector<SpecialToken>{{4, "<call>"}});
  Constraint c(f);
  std::vector<uint64_t> m(f->n_words());
  c.mask(m);
  EXPECT_TRUE(bit(m, 4));
  EXPECT_TRUE(bit(m, 1));
  EXPECT_FALSE(bit(m, 0));
  EXPECT_FALSE(bit(m, 6));
  ASSERT_TRUE(c.accept(4));
  c.mask(m);
  EXPECT_TRUE(bit(m, 5));
  ASSERT_TRUE(c.accept(5));
  c.mask(m);
  EXPECT_TRUE(bit(m, 6));  // complete: only end-of-generation
  EXPECT_FALSE(bit(m, 5));
}

}  // namespace
}  // namespace nurl::grammar
