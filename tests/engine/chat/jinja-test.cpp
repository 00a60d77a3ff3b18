// The interpreter against the reference engine, case by case: jinja-cases.inc holds small
// templates and what Python Jinja2 (Hugging Face's configuration) printed or raised for them
// (regenerate with make-jinja-cases.py). Then what the reference cannot show: our documented
// choices, error positions and the execution bounds.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "engine/chat/chat-template.h"

namespace nurl::chat {
namespace {

using ojson = nlohmann::ordered_json;

struct Case {
  const char* name;
  const char* tmpl;
  const char* context;
  const char* expected;  // output, or the reference's error text
  bool error;
};
// gtest prints a parameter through this (its bytes otherwise).
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

const Case kCases[] = {
#include "jinja-cases.inc"
};

// The reference cases were rendered with strftime_now at 2024-07-26 12:00 (a Friday).
std::tm reference_time() {
  std::tm t{};
  t.tm_year = 124;
  t.tm_mon = 6;
  t.tm_mday = 26;
  t.tm_hour = 12;
  t.tm_wday = 5;
  t.tm_yday = 207;
  return t;
}

Result<std::string> render(std::string_view tmpl, const ojson& ctx = ojson::object(), RenderOptions opts = {}) {
  if (!opts.clock) opts.clock = reference_time;
  NURL_ASSIGN(ChatTemplate t, ChatTemplate::parse(tmpl));
  return t.render(ctx, opts);
}

class JinjaReference : public ::testing::TestWithParam<Case> {};

TEST_P(JinjaReference, MatchesPythonJinja2) {
  const Case& c = GetParam();
  auto out = render(c.tmpl, ojson::parse(c.context));
  if (c.error) {
    ASSERT_FALSE(out.ok()) << "the reference raised \"" << c.expected << "\" but we rendered: " << *out;
    EXPECT_NE(out.error().msg.find("line "), std::string::npos) << out.error().msg;
  } else {
    ASSERT_TRUE(out.ok()) << out.error().msg;
    EXPECT_EQ(*out, c.expected);
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, JinjaReference, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& i) { return std::string(i.param.name); });

// ---- errors name where -----------------------------------------------------------------------

TEST(JinjaErrors, SyntaxErrorsNameLineAndColumn) {
  const std::pair<const char*, const char*> cases[] = {
      {"line one\n{% if x %}\nno end", "line 3"},       // missing endif: reported at end of template
      {"{{ 1 + }}", "line 1, column 8"},                 // unexpected '}}'
      {"ok\n  {% frobnicate %}", "line 2, column 6"},    // unknown tag
      {"{{ 'unterminated }}", "line 1, column 4"},
      {"{# never closed", "line 1, column 1"},
      {"{% for x in y %}{% endif %}", "line 1"},
      {"{{ (1 }}", "line 1"},
      {"{{ a.1b }}", "line 1"},
  };
  for (const auto& [tmpl, where] : cases) {
    auto r = ChatTemplate::parse(tmpl);
    ASSERT_FALSE(r.ok()) << tmpl;
    EXPECT_NE(r.error().msg.find(where), std::string::npos) << tmpl << " -> " << r.error().msg;
  }
}

TEST(JinjaErrors, RuntimeErrorsNameLineAndColumn) {
  auto r = render("first line\n{{ 'ok' }} {{ foo.bar }}");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().msg.find("line 2, column 15"), std::string::npos) << r.error().msg;
  EXPECT_NE(r.error().msg.find("'foo' is undefined"), std::string::npos) << r.error().msg;

  auto e = render("{% if x %}\n  {{ raise_exception('Roles must alternate') }}\n{% endif %}", {{"x", true}});
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().msg.find("Roles must alternate"), std::string::npos) << e.error().msg;
  EXPECT_NE(e.error().msg.find("line 2"), std::string::npos) << e.error().msg;
}

// ---- our choices where the reference differs ---------------------------------------------

TEST(JinjaChoices, GenerationBlockIsAPassThrough) {
  auto r = render("{% generation %}kept {{ 1 + 1 }}{% endgeneration %}!");
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(*r, "kept 2!");
}

// Hugging Face's immutable sandbox refuses list.append/pop (the Kimi-K2 reference cases fail
// that way); like llama.cpp we let such templates render.
TEST(JinjaChoices, ListsAndDictsAreMutable) {
  auto r = render("{% set q = [] %}{% set _ = q.append(1) %}{% set _ = q.append(2) %}{{ q.pop(0) }}{{ q }}"
                  "{% set d = {} %}{% set _ = d.update({'k': 1}) %}{{ d }}");
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(*r, "1[2]{'k': 1}");
}

TEST(JinjaChoices, FromJsonParsesArguments) {
  auto r = render("{% set a = s | from_json %}{{ a.x }} {{ a | tojson }}", {{"s", "{\"x\": [1, 2], \"b\": null}"}});
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(*r, "[1, 2] {\"x\": [1, 2], \"b\": null}");
}

TEST(JinjaChoices, ContextKeyOrderIsKept) {
  const ojson ctx = ojson::parse(R"({"tools": [{"z": 1, "a": {"y": 2, "b": 3}}]})");
  auto r = render("{{ tools[0] | tojson }}", ctx);
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(*r, R"({"z": 1, "a": {"y": 2, "b": 3}})");
}

TEST(JinjaChoices, InjectableClock) {
  RenderOptions opts;
  opts.clock = [] {
    std::tm t{};
    t.tm_year = 125;
    t.tm_mon = 0;
    t.tm_mday = 5;
    t.tm_wday = 0;
    return t;
  };
  auto r = render("{{ strftime_now('%a %d %B %Y') }}", ojson::object(), opts);
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(*r, "Sun 05 January 2025");
}

// ---- bounds: a template cannot hang, recurse without end or exhaust memory -------------------

TEST(JinjaBounds, StepLimitStopsEndlessWork) {
  RenderOptions opts;
  opts.limits.max_steps = 100000;
  auto r = render("{% for a in range(100000) %}{% for b in range(1000) %}{% endfor %}{% endfor %}", ojson::object(), opts);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().msg.find("step limit"), std::string::npos) << r.error().msg;
}

// Time is bounded, not only the number of steps: copying a big string costs in proportion.
TEST(JinjaBounds, WorkOnBigStringsCountsAgainstTheStepLimit) {
  auto r = render("{% set s = 'x' * 10000000 %}{% for i in range(100000) %}{% set t = s %}{% endfor %}");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().msg.find("step limit"), std::string::npos) << r.error().msg;
}

TEST(JinjaBounds, RecursionDepthIsBounded) {
  auto r = render("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().msg.find("nesting"), std::string::npos) << r.error().msg;
}

TEST(JinjaBounds, OutputAndStringSizeAreBounded) {
  RenderOptions opts;
  opts.limits.max_output = 64 << 10;
  auto a = render("{{ 'x' * 100000000 }}", ojson::object(), opts);
  EXPECT_FALSE(a.ok());
  auto b = render("{% set ns = namespace(s='xxxxxxxx') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
                  ojson::object(), opts);
  EXPECT_FALSE(b.ok());
  auto c = render("{% for i in range(10000) %}{{ 'yyyyyyyyyyyyyyyyyyyy' }}{% endfor %}", ojson::object(), opts);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().msg.find("output"), std::string::npos) << c.error().msg;
}

TEST(JinjaBounds, MemoryIsBounded) {
  RenderOptions opts;
  opts.limits.max_heap = 256 << 10;
  auto r = render("{% set l = [] %}{% for i in range(100000) %}{% set _ = l.append('abcdefghijklmnop' ~ i) %}{% endfor %}",
                  ojson::object(), opts);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().msg.find("memory"), std::string::npos) << r.error().msg;
}

TEST(JinjaBounds, SelfContainingListIsAnErrorNotACrash) {
  auto r = render("{% set l = [] %}{% set _ = l.append(l) %}{{ l }}");
  EXPECT_FALSE(r.ok());
  auto j = render("{% set l = [] %}{% set _ = l.append(l) %}{{ l|tojson }}");
  EXPECT_FALSE(j.ok());
}

TEST(JinjaBounds, DeepNestingInTheSourceIsRefused) {
  std::string deep = "{{ " + std::string(5000, '(') + "1" + std::string(5000, ')') + " }}";
  EXPECT_FALSE(ChatTemplate::parse(deep).ok());
  std::string ifs;
  for (int i = 0; i < 5000; ++i) ifs += "{% if true %}";
  EXPECT_FALSE(ChatTemplate::parse(ifs).ok());
  std::string chain = "{{ 1";
  for (int i = 0; i < 100000; ++i) chain += " + 1";
  EXPECT_FALSE(ChatTemplate::parse(chain + " }}").ok());
}

// ---- render_chat: llama.cpp's conventions ----------------------------------------------------

const char* kNoSystemTemplate =
    "{{ bos_token }}{% for m in messages %}{% if m.role == 'user' %}<|user|>{{ m.content }}<|end|>"
    "{% elif m.role == 'assistant' %}<|assistant|>{{ m.content }}<|end|>{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}";

TEST(RenderChat, SystemPolyfillForTemplatesWithoutSystemRole) {
  auto t = ChatTemplate::parse(kNoSystemTemplate);
  ASSERT_TRUE(t.ok());
  EXPECT_FALSE(t->supports_system_role());
  const ojson messages = ojson::parse(R"([{"role": "system", "content": "S1"}, {"role": "system", "content": "S2"},
      {"role": "user", "content": "U"}, {"role": "assistant", "content": "A"}, {"role": "system", "content": "late"}])");
  ChatOptions opts;
  opts.bos_token = "<s>";
  auto r = render_chat(*t, messages, opts);
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(*r, "<s><|user|>S1\nS2\nU<|end|><|assistant|>A<|end|><|user|>late<|end|><|assistant|>");
  opts.strip_leading_bos = true;
  opts.add_generation_prompt = false;
  auto s = render_chat(*t, messages, opts);
  ASSERT_TRUE(s.ok()) << s.error().msg;
  EXPECT_EQ(*s, "<|user|>S1\nS2\nU<|end|><|assistant|>A<|end|><|user|>late<|end|>");
}

TEST(RenderChat, TemplatesThatRefuseSystemAreDetected) {
  auto t = ChatTemplate::parse(
      "{% for m in messages %}{% if m.role == 'system' %}{{ raise_exception('System role not supported') }}"
      "{% endif %}[{{ m.role }}:{{ m.content }}]{% endfor %}");
  ASSERT_TRUE(t.ok());
  EXPECT_FALSE(t->supports_system_role());
  auto r = render_chat(*t, ojson::parse(R"([{"role": "system", "content": "S"}, {"role": "user", "content": "U"}])"), {});
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(*r, "[user:S\nU]");
}

TEST(RenderChat, SystemCapableTemplatesAreLeftAlone) {
  auto t = ChatTemplate::parse("{% for m in messages %}[{{ m.role }}:{{ m.content }}]{% endfor %}{{ eos_token }}");
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(t->supports_system_role());
  ChatOptions opts;
  opts.eos_token = "</s>";
  opts.strip_trailing_eos = true;
  auto r = render_chat(*t, ojson::parse(R"([{"role": "system", "content": "S"}, {"role": "user", "content": "U"}])"), opts);
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(*r, "[system:S][user:U]");
}

TEST(RenderChat, ToolsAndExtraVariables) {
  auto t = ChatTemplate::parse(
      "{{ tools is defined }}{% if tools %}{{ tools|length }}{% endif %}"
      "{% if enable_thinking is defined and enable_thinking is false %}/no_think{% endif %}");
  ASSERT_TRUE(t.ok());
  auto none = render_chat(*t, ojson::array(), {});
  ASSERT_TRUE(none.ok()) << none.error().msg;
  EXPECT_EQ(*none, "False");
  ChatOptions opts;
  opts.tools = ojson::parse(R"([{"type": "function", "function": {"name": "f"}}])");
  opts.extra = {{"enable_thinking", false}};
  auto r = render_chat(*t, ojson::array(), opts);
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(*r, "True1/no_think");
}

}  // namespace
}  // namespace nurl::chat
