// Patterns: the JSON-encoded strings a pattern's grammar accepts are exactly those whose decoded
// text the ECMA-262 expression matches (anchored sides) or contains (unanchored sides).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "engine/grammar/json-schema.h"
#include "engine/grammar/matcher.h"
#include "support/param-name.h"

namespace nurl::grammar {
namespace {

std::shared_ptr<const Grammar> pattern_grammar(const std::string& pattern) {
  nlohmann::json schema{{"type", "string"}, {"pattern", pattern}};
  auto g = compile_format(schema.dump());
  EXPECT_TRUE(g.ok()) << pattern << ": " << (g.ok() ? "" : g.error().msg);
  if (!g.ok()) return nullptr;
  return std::make_shared<const Grammar>(std::move(*g));
}

// `text` is the decoded string; the document is its JSON encoding.
bool matches(const std::shared_ptr<const Grammar>& g, const std::string& text) {
  Matcher m(g);
  return m.advance(nlohmann::json(text).dump()) && m.can_finish();
}

struct P {
  std::string pattern;
  std::vector<std::string> yes, no;
};
// gtest prints a parameter through this (its bytes otherwise).
void PrintTo(const P& c, std::ostream* os) { *os << c.pattern; }

class Patterns : public ::testing::TestWithParam<P> {};

TEST_P(Patterns, MatchLikeEcmaScript) {
  auto g = pattern_grammar(GetParam().pattern);
  ASSERT_TRUE(g);
  for (const auto& s : GetParam().yes) EXPECT_TRUE(matches(g, s)) << GetParam().pattern << " ~ " << s;
  for (const auto& s : GetParam().no) EXPECT_FALSE(matches(g, s)) << GetParam().pattern << " !~ " << s;
}

INSTANTIATE_TEST_SUITE_P(
    Grammar, Patterns,
    ::testing::Values(P{"^a+b?$", {"a", "aaab", "ab"}, {"", "b", "aabb", "ba"}},
                      P{"^[^\"]*$", {"", "xyz", "é€", "a\\b"}, {"x\"y", "\""}},
                      P{"^\\d{3}-\\w+$", {"123-abc_9", "000-x"}, {"12-abc", "123-", "123-a b"}},
                      P{"^(foo|bar)+$", {"foo", "foobar", "barbarfoo"}, {"", "fob", "foob"}},
                      P{"^.$", {"a", "é", "\t", "😀"}, {"", "\n", "ab"}},
                      P{"^\\u00e9\\x41$", {"éA"}, {"e\u0301A", "é"}},
                      P{"^[a-c-]$", {"a", "-", "c"}, {"d", "ab"}},
                      P{"^\\s\\S$", {" x", "\tx", "\u00a0y"}, {"xx", "  "}},
                      P{"^\"\\\\$", {"\"\\"}, {"\"", "\\"}},
                      P{"^\\.(?:js|ts)$", {".js", ".ts"}, {"xjs", ".jst"}},
                      P{"^[\\d\\-]{2,4}$", {"12", "1-2", "----"}, {"1", "12345", "a1"}},
                      P{"^[^\\x00-\\x7f]+$", {"é", "日本"}, {"a", "éa", ""}},
                      P{"end$", {"end", "the end"}, {"ending", ""}},
                      P{"^ab|cd$", {"abx", "xcd", "ab"}, {"xab", "cdx"}},
                      P{"^x*?y{2}$", {"yy", "xxyy"}, {"y", "xyyy"}}),
    [](const auto& info) { return nurl::test::numbered_case_name(info.index, info.param.pattern); });

TEST(Patterns, UnsupportedSyntaxIsNamed) {
  struct Bad {
    const char* pattern;
    const char* says;
  };
  for (const Bad& b : {Bad{"(a)\\1", "backreference"}, Bad{"\\bword", "word boundar"}, Bad{"(?=a)b", "lookaround"},
                       Bad{"(?<!a)b", "lookaround"}, Bad{"\\p{L}", "property"}, Bad{"a{3,1}", "m < n"},
                       Bad{"(a*)*", "empty string"}, Bad{"[z-a]", "out of order"}, Bad{"(ab", "missing ')'"},
                       Bad{"a)", "unbalanced"}, Bad{"*a", "nothing to repeat"}, Bad{"a^b", "'^'"}, Bad{"a{20000}", "bound"}}) {
    nlohmann::json schema{{"type", "string"}, {"pattern", b.pattern}};
    auto r = compile_format(schema.dump());
    ASSERT_FALSE(r.ok()) << b.pattern;
    EXPECT_NE(r.error().msg.find(b.says), std::string::npos) << b.pattern << ": " << r.error().msg;
    EXPECT_NE(r.error().msg.find("pattern"), std::string::npos) << r.error().msg;
  }
}

}  // namespace
}  // namespace nurl::grammar
