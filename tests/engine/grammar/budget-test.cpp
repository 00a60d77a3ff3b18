// Finishing within a token budget: the matcher's distance (the fewest bytes to a complete
// document) against grammars and schemas whose shortest document is worked out by hand, and
// constrained generation on the random-weight Qwen test model (noise) with budgets down to the
// bare minimum, whose output must still parse and satisfy its schema.
#include "engine/runtime/budget.h"

#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>

#include "engine/grammar/json-schema.h"
#include "engine/grammar/matcher.h"
#include "engine/runtime/constraints.h"
#include "engine/runtime/context.h"
#include "engine/runtime/model.h"
#include "engine/tokenizer/tokenizer.h"
#include "testdata.h"
#include "support/param-name.h"

namespace nurl::grammar {
namespace {

// Distances along a path of bytes: want[k] after the first k bytes.
void expect_distances(const std::shared_ptr<const Grammar>& g, std::string_view path,
                      const std::vector<uint64_t>& want) {
  ASSERT_EQ(want.size(), path.size() + 1);
  Matcher m(g);
  EXPECT_EQ(m.distance(), want[0]);
  for (size_t k = 0; k < path.size(); ++k) {
    ASSERT_TRUE(m.advance(path.substr(k, 1))) << "byte " << k << " of " << path;
    EXPECT_EQ(m.distance(), want[k + 1]) << "after '" << path.substr(0, k + 1) << "'";
  }
}

TEST(Distance, CountsRepetitionsStillNeeded) {
  // root ::= "ab" x{2,5} "c"; x ::= "xy" | "z": the shortest document is "abzzc".
  Builder b;
  RuleId x = b.rule("x", {b.literal("xy"), b.literal("z")});
  Seq root = b.literal("ab");
  root.push_back(b.repeat(x, 2, 5));
  b.append(root, "c");
  auto g = b.build(b.rule("root", {root}));
  ASSERT_TRUE(g.ok()) << g.error().msg;
  auto gp = std::make_shared<const Grammar>(std::move(*g));
  EXPECT_EQ(gp->min_len(gp->root()), 5u);
  expect_distances(gp, "abxyzzc", {5, 4, 3, 3, 2, 1, 1, 0});
}

TEST(Distance, SumsAlongTheStackOfARecursiveRule) {
  // r ::= "(" r ")" | "x": every open parenthesis costs its closing one, plus the "x".
  Builder b;
  RuleId r = b.declare("r");
  Seq nest = b.literal("(");
  nest.push_back(b.ref(r));
  b.append(nest, ")");
  b.define(r, {nest, b.literal("x")});
  auto g = b.build(r);
  ASSERT_TRUE(g.ok()) << g.error().msg;
  auto gp = std::make_shared<const Grammar>(std::move(*g));
  expect_distances(gp, "((x))", {1, 2, 3, 2, 1, 0});
}

TEST(Distance, AnOptionalPartCostsNothingUntilItStarts) {
  // root ::= "a" opt "b"; opt ::= "long" | "".
  Builder b;
  Seq root = b.literal("a");
  root.push_back(b.optional(b.literal("long"), "opt"));
  b.append(root, "b");
  auto g = b.build(b.rule("root", {root}));
  ASSERT_TRUE(g.ok()) << g.error().msg;
  expect_distances(std::make_shared<const Grammar>(std::move(*g)), "alongb", {2, 1, 4, 3, 2, 1, 0});
}

struct Shortest {
  std::string schema;
  std::string doc;  // a shortest valid document, by hand from the schema
};
// gtest prints a parameter through this (its bytes otherwise).
void PrintTo(const Shortest& c, std::ostream* os) { *os << c.schema; }

class SchemaDistance : public ::testing::TestWithParam<Shortest> {};

// The distance at the start is the shortest document's length, and along it every byte takes
// one off (so the document is accepted, and every prefix of it is on a shortest way).
TEST_P(SchemaDistance, IsTheShortestDocumentsLength) {
  auto g = compile_format(GetParam().schema);
  ASSERT_TRUE(g.ok()) << g.error().msg;
  const std::string& doc = GetParam().doc;
  std::vector<uint64_t> want;
  for (size_t k = 0; k <= doc.size(); ++k) want.push_back(doc.size() - k);
  expect_distances(std::make_shared<const Grammar>(std::move(*g)), doc, want);
}

INSTANTIATE_TEST_SUITE_P(
    Grammar, SchemaDistance,
    ::testing::Values(
        Shortest{R"({"type":"object","properties":{"a":{"type":"string","minLength":3},
                   "b":{"type":"array","items":{"type":"integer"},"minItems":2},"c":{"type":"boolean"}},"required":["a","b"]})",
                 R"({"a":"xxx","b":[0,0]})"},
        Shortest{R"({"type":"array","items":{"enum":["long-word","ab"]},"minItems":3})", R"(["ab","ab","ab"])"},
        Shortest{R"({"type":"integer","minimum":100})", "100"},
        Shortest{R"({"$defs":{"n":{"type":"object","properties":{"v":{"type":"null"},
                   "k":{"type":"array","items":{"$ref":"#/$defs/n"},"minItems":1,"maxItems":2}},"required":["v"]}},
                   "$ref":"#/$defs/n"})",
                 R"({"v":null})"},
        Shortest{R"({"$defs":{"n":{"type":"object","properties":{"k":{"type":"array","items":{"$ref":"#/$defs/n"},
                   "minItems":1}, "leaf":{"type":"boolean"}},"required":["leaf"]}},
                   "type":"array","items":{"$ref":"#/$defs/n"},"minItems":2})",
                 R"([{"leaf":true},{"leaf":true}])"},
        Shortest{R"({"anyOf":[{"type":"boolean"},{"type":"null"}]})", "null"},
        Shortest{R"({"type":"string","format":"date"})", R"("2000-01-01")"},
        Shortest{R"({"type":"object","properties":{"é":{"const":1}},"required":["é"]})", R"({"é":1})"},
        Shortest{"json", "{}"}),
    [](const auto& info) { return nurl::test::numbered_case_name(info.index, info.param.schema); });

// Qwen's vocabulary and the random-weight model on it, once for the suite.
struct Noise {
  std::shared_ptr<const Model> model;
  std::unique_ptr<Context> ctx;
  std::unique_ptr<Tokenizer> tok;
  std::unique_ptr<ConstraintCompiler> cc;
};

Noise load_noise() {
  Noise out;
  auto m = Model::load(test::testdata("models/qwen2-F16-embQ4_0.gguf"));
  if (!m.ok()) return out;
  out.model = *m;
  auto tok = Tokenizer::from_gguf(out.model->file());
  if (!tok.ok()) return out;
  out.tok = std::make_unique<Tokenizer>(std::move(*tok));
  ContextOptions co;
  co.n_ctx = 512;
  auto ctx = Context::create(out.model, co);
  if (!ctx.ok()) return out;
  out.ctx = std::move(*ctx);
  out.cc = std::make_unique<ConstraintCompiler>(*out.tok);
  return out;
}

Noise* noise() {
  static Noise n = load_noise();
  return &n;
}

struct Generated {
  std::string text;
  std::vector<int32_t> tokens;
  bool ended = false;  // with end-of-generation, the document complete
};

// Constrained generation at temperature 1 with `draws` tokens at most (the last can only end it;
// -1: no limit, up to max_tokens).
Generated generate(Noise& n, const std::shared_ptr<TokenFilter>& f, int64_t draws, uint64_t seed, int max_tokens) {
  Generated run;
  Constraint c(f);
  std::vector<uint64_t> mask(f->n_words()), scratch(f->n_words());
  Options o;
  o.temperature = 1.0f;
  o.top_k = 0;
  o.top_p = 1.0f;
  o.repeat_penalty = 1.0f;
  o.seed = static_cast<int64_t>(seed);
  Sampler sampler(o, n.model->n_vocab());
  n.ctx->clear(0);
  const std::vector<int32_t> prompt = n.tok->encode("Reply with JSON.", true, true);
  std::vector<BatchEntry> batch;
  for (size_t i = 0; i < prompt.size(); ++i)
    batch.push_back({prompt[i], static_cast<int32_t>(i), 0, i + 1 == prompt.size()});
  EXPECT_TRUE(n.ctx->decode(batch).ok());
  for (int step = 0; step < max_tokens && (draws < 0 || step < draws); ++step) {
    c.mask(mask);
    const Sample s = sample_within(sampler, c, n.ctx->logits(0), mask, scratch, draws < 0 ? -1 : draws - step);
    if (f->is_eog(s.id)) {
      run.ended = c.can_finish();
      break;
    }
    EXPECT_TRUE(c.accept(s.id));
    run.tokens.push_back(s.id);
    run.text += f->bytes_of(s.id);
    sampler.accept(s.id);
    BatchEntry e{s.id, n.ctx->n_pos(0), 0, true};
    EXPECT_TRUE(n.ctx->decode(std::span<const BatchEntry>(&e, 1)).ok());
  }
  return run;
}

struct Budgeted {
  std::string schema;
  // The schema's rules, checked on the parsed document (an oracle apart from the grammar).
  std::function<bool(const nlohmann::json&)> valid;
};

std::vector<Budgeted> budgeted_cases() {
  using J = nlohmann::json;
  auto str_min = [](const J& v, size_t n) { return v.is_string() && v.get<std::string>().size() >= n; };
  auto at = [](const J& d, const char* k) { return d.is_object() && d.contains(k) ? d.at(k) : J(); };
  return {
      {R"({"type":"object","properties":{"name":{"type":"string","minLength":4},"nick":{"type":"string"},
          "tags":{"type":"array","items":{"type":"string"},"minItems":2},"n":{"type":"integer"}},"required":["name","tags","n"]})",
       [=](const J& d) {
         return d.is_object() && str_min(at(d, "name"), 4) && at(d, "tags").is_array() && at(d, "tags").size() >= 2 &&
                at(d, "n").is_number_integer() && (!d.contains("nick") || at(d, "nick").is_string());
       }},
      {R"({"type":"array","items":{"type":"object","properties":{"k":{"type":"string"},"v":{"type":"number"}},"required":["k","v"]},
          "minItems":1})",
       [=](const J& d) {
         if (!d.is_array() || d.empty()) return false;
         for (const J& e : d)
           if (!at(e, "k").is_string() || !at(e, "v").is_number()) return false;
         return true;
       }},
      {R"({"$defs":{"t":{"type":"object","properties":{"label":{"type":"string"},"kids":{"type":"array","items":{"$ref":"#/$defs/t"}}},
          "required":["label"]}},"$ref":"#/$defs/t"})",
       [=](const J& d) { return at(d, "label").is_string(); }},
      {"json", [](const J& d) { return d.is_object(); }},
  };
}

TEST(Budget, NoiseFinishesAValidDocumentWithinTheBudget) {
  NURL_REQUIRE_TESTDATA();
  Noise& n = *noise();
  ASSERT_TRUE(n.ctx && n.cc);
  int n_runs = 0;
  for (const auto& bc : budgeted_cases()) {
    auto f = n.cc->format(bc.schema);
    ASSERT_TRUE(f.ok()) << f.error().msg;
    const auto bytes = static_cast<int64_t>(Constraint(*f).distance());
    // The bare minimum at one byte per token (and one more draw to end), then some room.
    for (int64_t draws : {bytes + 1, bytes + 4, bytes + 24}) {
      for (uint64_t seed : {1u, 2u}) {
        const Generated r = generate(n, *f, draws, seed * 7 + static_cast<uint64_t>(draws), 1 << 20);
        ++n_runs;
        ASSERT_TRUE(r.ended) << bc.schema << " with " << draws << " draws: cut after " << r.tokens.size()
                             << " tokens: " << r.text;
        EXPECT_LE(static_cast<int64_t>(r.tokens.size()), draws - 1);
        auto doc = nlohmann::json::parse(r.text, nullptr, false);
        ASSERT_FALSE(doc.is_discarded()) << r.text;
        EXPECT_TRUE(bc.valid(doc)) << bc.schema << ": " << r.text;
      }
    }
  }
  EXPECT_EQ(n_runs, 24);
}

TEST(Budget, WithRoomToSpareNoDrawIsReplaced) {
  NURL_REQUIRE_TESTDATA();
  Noise& n = *noise();
  ASSERT_TRUE(n.ctx && n.cc);
  auto f = n.cc->format("json");
  ASSERT_TRUE(f.ok());
  for (uint64_t seed : {3u, 4u}) {
    const Generated plain = generate(n, *f, -1, seed, 40);
    const Generated roomy = generate(n, *f, 100000, seed, 40);
    EXPECT_EQ(plain.tokens, roomy.tokens);
    EXPECT_GT(plain.tokens.size(), 0u);
  }
}

TEST(Budget, ShortestDocumentTokensUseTheLongestTokens) {
  NURL_REQUIRE_TESTDATA();
  Noise& n = *noise();
  ASSERT_TRUE(n.cc);
  auto f = n.cc->format(
      R"({"type":"object","properties":{"alpha":{"type":"integer"},"beta":{"type":"boolean"}},"required":["alpha","beta"]})");
  ASSERT_TRUE(f.ok());
  Constraint c(*f);
  const uint64_t bytes = c.distance();
  EXPECT_EQ(bytes, std::string(R"({"alpha":0,"beta":true})").size());
  const int64_t tokens = shortest_document_tokens(c, 1000);
  EXPECT_GT(tokens, 0);
  EXPECT_LT(tokens, static_cast<int64_t>(bytes));  // Qwen has tokens such as `{"` and `true`
  EXPECT_EQ(c.distance(), bytes);                  // the caller's constraint is untouched
  EXPECT_EQ(shortest_document_tokens(c, 2), 3);    // counting stops past the cap
}

}  // namespace
}  // namespace nurl::grammar
