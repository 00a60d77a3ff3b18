// Forced tool calls: random outputs drawn from each family's call grammar (a byte-level
// vocabulary, random choices, so nothing cooperates) always parse back, with the reply parser
// of the same family, into calls of the given tools whose arguments satisfy the schema, and
// nothing else (no text part, not even whitespace).
#include <gtest/gtest.h>

#include <random>

#include "engine/chat/reply-format.h"
#include "engine/chat/reply-parser.h"
#include "engine/chat/tool-grammar.h"
#include "engine/grammar/token-filter.h"

namespace nurl::chat {
namespace {

using Json = nlohmann::ordered_json;

const Json kTools = Json::parse(R"([
  {"type":"function","function":{"name":"get_weather","parameters":{"type":"object",
    "properties":{"city":{"type":"string","maxLength":12},"days":{"type":"integer","minimum":1,"maximum":7},
                  "units":{"enum":["c","f"]}},"required":["city","days"]}}},
  {"type":"function","function":{"name":"noop","parameters":{"type":"object","properties":{}}}},
  {"type":"function","function":{"name":"plan","parameters":{"type":"object","properties":{
    "stops":{"type":"array","items":{"type":"object","properties":{"city":{"type":"string","maxLength":6},
      "n":{"type":"integer","minimum":0,"maximum":9}},"required":["city","n"]},"minItems":1,"maxItems":2},
    "opts":{"type":"object","properties":{"fast":{"type":"boolean"}},"required":["fast"]}},"required":["stops"]}}}
])");

// A random document of the grammar, byte by byte (ending when only the end is allowed or by chance).
std::string sample(const std::shared_ptr<grammar::TokenFilter>& f, std::mt19937& rng) {
  grammar::Constraint c(f);
  std::vector<uint64_t> mask(f->n_words());
  std::string out;
  for (int i = 0; i < 4000; ++i) {
    c.mask(mask);
    std::vector<int32_t> ok;
    for (int32_t id = 0; id <= 256; ++id)
      if ((mask[static_cast<size_t>(id) >> 6] >> (id & 63)) & 1) ok.push_back(id);
    EXPECT_FALSE(ok.empty());
    if (ok.empty()) break;
    int32_t t = ok[rng() % ok.size()];
    if (t == 256 && ok.size() > 1 && rng() % 3) t = ok[rng() % (ok.size() - 1)];
    if (t == 256) return out;
    EXPECT_TRUE(c.accept(t));
    out += static_cast<char>(t);
  }
  ADD_FAILURE() << "no end after 4000 bytes: " << out.substr(0, 200);
  return out;
}

void check_call(const ParsedCall& c) {
  Json args = Json::parse(c.arguments);
  ASSERT_TRUE(args.is_object());
  if (c.name == "noop") return;
  if (c.name == "plan") {  // nested objects and arrays (elements inside elements in minimax-m3)
    ASSERT_TRUE(args.contains("stops") && args["stops"].is_array()) << c.arguments;
    EXPECT_GE(args["stops"].size(), 1u) << c.arguments;
    EXPECT_LE(args["stops"].size(), 2u) << c.arguments;
    for (const auto& s : args["stops"]) {
      ASSERT_TRUE(s.is_object() && s.contains("city") && s["city"].is_string()) << c.arguments;
      ASSERT_TRUE(s.contains("n") && s["n"].is_number_integer()) << c.arguments;
    }
    if (args.contains("opts")) {
      EXPECT_TRUE(args["opts"].is_object() && args["opts"]["fast"].is_boolean()) << c.arguments;
    }
    return;
  }
  ASSERT_EQ(c.name, "get_weather");
  ASSERT_TRUE(args.contains("city") && args["city"].is_string()) << c.arguments;
  EXPECT_LE(args["city"].get<std::string>().size(), 12u * 4);
  ASSERT_TRUE(args.contains("days") && args["days"].is_number_integer()) << c.arguments;
  EXPECT_GE(args["days"].get<int>(), 1);
  EXPECT_LE(args["days"].get<int>(), 7);
  if (args.contains("units")) {
    EXPECT_TRUE(args["units"] == "c" || args["units"] == "f");
  }
}

class ForcedCalls : public ::testing::TestWithParam<std::string> {};

TEST_P(ForcedCalls, GeneratedCallsParseBack) {
  const ToolFormat* f = nullptr;
  for (const auto& r : tool_formats())
    if (r.family == GetParam()) f = &r;
  ASSERT_NE(f, nullptr);
  std::vector<std::string> bytes(257);
  for (int b = 0; b < 256; ++b) bytes[static_cast<size_t>(b)] = std::string(1, static_cast<char>(b));
  auto vocab = std::make_shared<const grammar::VocabTrie>(bytes);
  for (bool parallel : {false, true}) {
    ToolGrammarOptions o;
    o.parallel = parallel;
    auto g = tool_call_grammar(*f, kTools, o);
    ASSERT_TRUE(g.ok()) << g.error().msg;
    auto filter = std::make_shared<grammar::TokenFilter>(std::make_shared<const grammar::Grammar>(std::move(*g)), vocab,
                                                         std::vector<int32_t>{256}, std::vector<grammar::SpecialToken>{});
    std::mt19937 rng(42);
    for (int n = 0; n < 25; ++n) {
      const std::string out = sample(filter, rng);
      ParserOptions po;
      po.tools = f;
      po.tool_defs = kTools;
      ReplyParser p(po);
      std::vector<ReplyPart> parts;
      p.push(out, parts);
      p.finish(parts);
      size_t calls = 0;
      for (const auto& part : parts) {
        if (part.kind == ReplyPart::Kind::tool_call) {
          ++calls;
          check_call(part.call);
        } else {  // calls only: not even whitespace before, between or after them
          ADD_FAILURE() << GetParam() << ": text " << ::testing::PrintToString(part.text) << " in " << out;
        }
      }
      EXPECT_GE(calls, 1u) << GetParam() << ": " << out;
      if (!parallel) {
        EXPECT_EQ(calls, 1u) << out;
      }
    }
  }
  ToolGrammarOptions named;
  named.only = "nope";
  EXPECT_FALSE(tool_call_grammar(*f, kTools, named).ok());
}

INSTANTIATE_TEST_SUITE_P(Chat, ForcedCalls,
                         ::testing::Values("hermes", "llama3", "mistral", "mistral-v11", "granite", "command-r7b",
                                           "deepseek-v3.1", "kimi-k2", "functionary-v3.1", "solar", "apriel", "glm",
                                           "qwen3-coder", "minimax-m2", "minimax-m3", "deepseek-dsml", "hunyuan", "minicpm",
                                           "gigachat"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

TEST(ForcedCalls, UnsupportedSyntaxesAreErrors) {
  for (const auto& r : tool_formats()) {
    if (r.syntax != CallSyntax::pythonic && r.syntax != CallSyntax::gemma) continue;
    auto g = tool_call_grammar(r, kTools, {});
    ASSERT_FALSE(g.ok()) << r.family;
    EXPECT_NE(g.error().msg.find(std::string(r.family)), std::string::npos);
  }
}

}  // namespace
}  // namespace nurl::chat
