// JSON schema → grammar: documents the schema allows are accepted whole, documents it forbids
// are rejected (as a prefix, or as incomplete), and schemas we cannot honour are errors that name
// the keyword. The expectations come from the JSON Schema specification, case by case.
#include <gtest/gtest.h>

#include <chrono>

#include "engine/grammar/json-schema.h"
#include "engine/grammar/matcher.h"
#include "support/param-name.h"

namespace nurl::grammar {
namespace {

// A complete document of the grammar (not just a prefix).
bool accepts(const std::shared_ptr<const Grammar>& g, std::string_view doc) {
  Matcher m(g);
  return m.advance(doc) && m.can_finish();
}

std::shared_ptr<const Grammar> compile(const std::string& schema) {
  auto g = compile_format(schema);
  EXPECT_TRUE(g.ok()) << schema << ": " << (g.ok() ? "" : g.error().msg);
  if (!g.ok()) return nullptr;
  return std::make_shared<const Grammar>(std::move(*g));
}

struct Case {
  std::string schema;
  std::vector<std::string> good, bad;
};
// gtest prints a parameter through this (its bytes otherwise).
void PrintTo(const Case& c, std::ostream* os) { *os << c.schema; }

class SchemaCases : public ::testing::TestWithParam<Case> {};

TEST_P(SchemaCases, AcceptsExactlyTheValidDocuments) {
  auto g = compile(GetParam().schema);
  ASSERT_TRUE(g);
  for (const auto& d : GetParam().good) EXPECT_TRUE(accepts(g, d)) << GetParam().schema << " should accept " << d;
  for (const auto& d : GetParam().bad) EXPECT_FALSE(accepts(g, d)) << GetParam().schema << " should reject " << d;
}

INSTANTIATE_TEST_SUITE_P(
    Grammar, SchemaCases,
    ::testing::Values(
        Case{R"({"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"}},"required":["name"]})",
             {R"({"name": "a"})", R"({"name":"a","age":3})", "{\n  \"name\": \"\\u00e9\",\n  \"age\": -7\n}"},
             {R"({"age": 3})", R"({"name": 1})", R"({"name":"a","age":3.5})", R"({"name":"a","x":1})", "{}"}},
        Case{R"({"type":"array","items":{"type":"boolean"},"minItems":1,"maxItems":3})",
             {"[true]", "[true, false, true]", "[ false ]"},
             {"[]", "[true,true,true,true]", "[1]", "[true,]"}},
        Case{R"({"type":"string","minLength":2,"maxLength":3})",
             {R"("ab")", R"("abc")", R"("é\n")", R"("\u00e9x")"},
             {R"("a")", R"("abcd")", R"("é")"}},
        Case{R"({"type":"integer","minimum":-12,"maximum":305})",
             {"-12", "-1", "0", "9", "10", "99", "100", "299", "305"},
             {"-13", "306", "400", "-100", "1000", "1.5", "01"}},
        Case{R"({"type":"number","exclusiveMinimum":0,"maximum":1.5})",
             {"0.001", "1", "1.5", "1.49999", "0.5", "1.50"},
             {"0", "0.0", "-0.1", "1.51", "2", "1.5000001"}},
        Case{R"({"type":"number","minimum":-0.25,"exclusiveMaximum":-0.125})",
             {"-0.25", "-0.2", "-0.126", "-0.13"}, {"-0.125", "-0.1", "-0.26", "0", "-1"}},
        Case{R"({"enum":["red","green",3,null,{"a":[1]}]})",
             {R"("red")", R"("green")", "3", "null", R"({"a":[1]})"},
             {R"("blue")", R"("gree")", "4", R"({"a":[2]})"}},
        Case{R"({"const":"x"})", {R"("x")"}, {R"("y")", "1"}},
        Case{R"({"type":["string","null"]})", {R"("s")", "null"}, {"1", "true"}},
        Case{R"({"anyOf":[{"type":"integer","minimum":10},{"type":"string","maxLength":1}]})",
             {"10", "99", R"("a")", R"("")"}, {"9", R"("ab")"}},
        Case{R"({"allOf":[{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]},
                          {"properties":{"b":{"type":"boolean"}},"required":["b"]}]})",
             {R"({"a":1,"b":true})"}, {R"({"a":1})", R"({"b":true})"}},
        Case{R"({"$defs":{"node":{"type":"object","properties":{"v":{"type":"integer"},
                 "next":{"$ref":"#/$defs/node"}},"required":["v"]}},"$ref":"#/$defs/node"})",
             {R"({"v":1})", R"({"v":1,"next":{"v":2,"next":{"v":3}}})"}, {R"({"next":{"v":2}})"}},
        Case{R"({"type":"object","properties":{"id":{"type":"string"}},"additionalProperties":{"type":"integer"}})",
             {R"({"id":"a","n":1})", R"({"n":1,"m":2})", R"({"idx":3})"}, {R"({"id":1})", R"({"id":"a","id":2})", R"({"n":"x"})"}},
        Case{R"({"type":"string","pattern":"^[A-Z][a-z]+-\\d{2,3}$"})",
             {R"("Ab-12")", R"("Xyz-123")"}, {R"("ab-12")", R"("Ab-1")", R"("Ab-1234")", R"("Ab-12x")"}},
        Case{R"({"type":"string","pattern":"cat"})", {R"("cat")", R"("concatenate")"}, {R"("ca")", R"("dog")"}},
        Case{R"({"type":"string","format":"date"})",
             {R"("2024-02-28")", R"("1999-12-31")"}, {R"("2024-02-30")", R"("2024-13-01")", R"("24-01-01")"}},
        Case{R"({"type":"string","format":"date-time"})",
             {R"("2024-07-26T12:00:00Z")", R"("2024-07-26T23:59:59.123+02:00")"},
             {R"("2024-07-26 12:00:00Z")", R"("2024-07-26T24:00:00Z")", R"("2024-07-26T12:00:00")"}},
        Case{R"({"type":"string","format":"uuid"})",
             {R"("123e4567-e89b-12d3-a456-426614174000")"}, {R"("123e4567e89b12d3a456426614174000")"}},
        Case{R"({"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"items":false})",
             {R"(["a", 1])", R"(["a"])", "[]"}, {R"([1])", R"(["a", 1, 2])"}},
        Case{R"({"type":"array","prefixItems":[{"const":1}],"minItems":2,"items":{"type":"string"}})",
             {R"([1, "x"])", R"([1,"x","y"])"}, {"[1]", R"([1, 2])"}}),
    [](const auto& info) { return nurl::test::numbered_case_name(info.index, info.param.schema); });

// "json" is an object of any values (ollama's format "json", OpenAI's json_object), never a bare value.
TEST(Grammar, JsonFormatIsAnObject) {
  auto g = std::make_shared<const Grammar>(std::move(*compile_format("json")));
  for (const char* d : {"{}", " {\"a\" : 1}", "{\"a\":[1,{\"b\":[null,true]}],\"c\":\"x\"}", "{\"n\":-0.5e+3}"})
    EXPECT_TRUE(accepts(g, d)) << d;
  for (const char* d : {"1", "\"x\"", "true", "null", "[]", "[1,{\"a\":[null]}]", "{\"a\"}", "{a:1}", "{\"a\":01}",
                        "{\"a\":\"\\x\"}"})
    EXPECT_FALSE(accepts(g, d)) << d;
}

TEST(Grammar, WhitespaceIsBounded) {
  auto g = std::make_shared<const Grammar>(std::move(*compile_format("json")));
  EXPECT_TRUE(accepts(g, "{\"a\":[1,\n" + std::string(20, ' ') + "2]}"));
  EXPECT_FALSE(accepts(g, "{\"a\":[1,\n" + std::string(21, ' ') + "2]}"));
  EXPECT_FALSE(accepts(g, "{\"a\":[1,   2]}"));
}

// What we cannot honour is refused, naming the keyword: never a silent fall-back.
TEST(Grammar, UnsupportedKeywordsAreNamed) {
  for (const char* kw : {"not", "if", "patternProperties", "propertyNames", "dependentRequired", "contains",
                         "unevaluatedProperties"}) {
    auto r = compile_format(std::string(R"({"type":"object",")") + kw + R"(":{}})");
    ASSERT_FALSE(r.ok()) << kw;
    EXPECT_NE(r.error().msg.find(kw), std::string::npos) << r.error().msg;
  }
  auto u = compile_format(R"({"type":"array","uniqueItems":true})");
  ASSERT_FALSE(u.ok());
  EXPECT_NE(u.error().msg.find("uniqueItems"), std::string::npos);
  auto m = compile_format(R"({"type":"integer","multipleOf":3})");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().msg.find("multipleOf"), std::string::npos);
  auto f = compile_format(R"({"type":"string","format":"iri-reference"})");
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.error().msg.find("iri-reference"), std::string::npos);
  auto p = compile_format(R"({"type":"string","pattern":"(?=a)b"})");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().msg.find("lookaround"), std::string::npos);
  auto ref = compile_format(R"({"$ref":"https://example.com/s.json"})");
  ASSERT_FALSE(ref.ok());
  EXPECT_NE(ref.error().msg.find("$ref"), std::string::npos);
  EXPECT_FALSE(compile_format("not json").ok());
  EXPECT_EQ(compile_format(R"({"not":{}})").error().code, Code::invalid_argument);
}

TEST(Grammar, ContradictionsAreErrors) {
  for (const char* s : {R"({"type":"string","minLength":5,"maxLength":2})", R"({"type":"array","minItems":3,"maxItems":1})",
                        R"({"type":"integer","minimum":5,"maximum":4})", R"({"type":"number","minimum":1,"exclusiveMaximum":1})",
                        R"({"allOf":[{"type":"string"},{"type":"integer"}]})", R"({"enum":[]})",
                        R"({"type":"object","required":["a"],"additionalProperties":false})"}) {
    auto r = compile_format(s);
    EXPECT_FALSE(r.ok()) << s;
  }
}

TEST(Grammar, RecursionWithoutABaseCaseIsAnError) {
  auto r = compile_format(R"({"type":"object","properties":{"a":{"$ref":"#"}},"required":["a"]})");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().msg.find("no finite document"), std::string::npos) << r.error().msg;
  // An optional recursive branch is fine: it is simply never forced.
  EXPECT_TRUE(compile_format(R"({"type":"object","properties":{"a":{"$ref":"#"}}})").ok());
  // A $ref cycle that consumes nothing cannot be matched at all.
  EXPECT_FALSE(compile_format(R"({"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"})").ok());
}

// Hostile schemas: bounded work, then either a grammar or a clear error.
TEST(Grammar, HostileSchemasCompileBounded) {
  const auto t0 = std::chrono::steady_clock::now();
  std::string deep = R"({"type":"integer"})";
  for (int i = 0; i < 200; ++i) deep = R"({"type":"array","items":)" + deep + "}";
  auto d = compile_format(deep);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.error().msg.find("nested too deeply"), std::string::npos);

  std::string big = R"({"enum":[)";
  for (int i = 0; i < 20000; ++i) big += (i ? "," : "") + std::string("\"value-") + std::to_string(i) + "\"";
  big += "]}";
  auto e = compile_format(big);
  ASSERT_TRUE(e.ok()) << e.error().msg;
  auto g = std::make_shared<const Grammar>(std::move(*e));
  EXPECT_TRUE(accepts(g, "\"value-19999\""));
  EXPECT_FALSE(accepts(g, "\"value-20000\""));
  Matcher m(g);
  ASSERT_TRUE(m.advance("\"value-1"));
  EXPECT_LE(m.state().size(), 16u);  // a prefix tree: one live path, not 20000

  std::string huge = R"({"enum":[)";
  for (int i = 0; i < 3000; ++i) huge += (i ? "," : "") + std::string("\"") + std::to_string(i) + std::string(1000, 'a') + "\"";
  huge += "]}";
  auto h = compile_format(huge);
  ASSERT_FALSE(h.ok());
  EXPECT_NE(h.error().msg.find("too large"), std::string::npos) << h.error().msg;

  EXPECT_TRUE(compile_format(R"({"type":"string","maxLength":4000000000})").ok());  // a counter, not unrolled
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20));
}

}  // namespace
}  // namespace nurl::grammar
