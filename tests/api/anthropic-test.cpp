// The Anthropic Messages request parser against Anthropic's API reference: required model and
// max_tokens, system as a string or text blocks, content blocks (text, tool_use, tool_result,
// thinking), tools with input_schema, tool_choice auto/any/tool/none, thinking, stop_sequences,
// the ranges Anthropic enforces (temperature and top_p 0-1) and its error object.
#include "api/anthropic.h"

#include <gtest/gtest.h>

namespace nurl::api::anthropic {
namespace {

TEST(AnthropicMessages, FieldsAndBlocks) {
  auto r = parse_messages_request(R"({"model":"claude-x","max_tokens":4096,"temperature":0.3,"top_p":0.5,"top_k":7,
    "stop_sequences":["\n\nHuman:"],"stream":true,
    "system":[{"type":"text","text":"You are terse."}],
    "messages":[
      {"role":"user","content":"weather in Oslo?"},
      {"role":"assistant","content":[{"type":"thinking","thinking":"use the tool","signature":"s"},
        {"type":"text","text":"Checking."},
        {"type":"tool_use","id":"toolu_1","name":"weather","input":{"city":"Oslo"}}]},
      {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"-3C"}]},
        {"type":"text","text":"thanks"}]}],
    "tools":[{"name":"weather","description":"current weather","input_schema":{"type":"object"}}],
    "tool_choice":{"type":"tool","name":"weather","disable_parallel_tool_use":true},
    "thinking":{"type":"enabled","budget_tokens":2048}})");
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(r->model, "claude-x");
  EXPECT_TRUE(r->stream);
  EXPECT_EQ(*r->options.num_predict, 4096);
  EXPECT_EQ(*r->options.temperature, 0.3);
  EXPECT_EQ(*r->options.top_p, 0.5);
  EXPECT_EQ(*r->options.top_k, 7);
  EXPECT_EQ(*r->options.stop, std::vector<std::string>{"\n\nHuman:"});
  ASSERT_EQ(r->messages.size(), 5u);
  EXPECT_EQ(r->messages[0].role, "system");
  EXPECT_EQ(r->messages[0].content, "You are terse.");
  EXPECT_EQ(r->messages[2].role, "assistant");
  EXPECT_EQ(r->messages[2].thinking, "use the tool");
  EXPECT_EQ(r->messages[2].content, "Checking.");
  ASSERT_EQ(r->messages[2].tool_calls.size(), 1u);
  EXPECT_EQ(r->messages[2].tool_calls[0].id, "toolu_1");
  EXPECT_EQ(Json::parse(r->messages[2].tool_calls[0].arguments), Json::parse(R"({"city":"Oslo"})"));
  EXPECT_EQ(r->messages[3].role, "tool");
  EXPECT_EQ(r->messages[3].tool_call_id, "toolu_1");
  EXPECT_EQ(r->messages[3].tool_name, "weather");
  EXPECT_EQ(r->messages[3].content, "-3C");
  EXPECT_EQ(r->messages[4].role, "user");
  EXPECT_EQ(r->messages[4].content, "thanks");
  const auto& s = r->structured;
  EXPECT_EQ(Json::parse(s.tools), Json::parse(R"([{"type":"function","function":{"name":"weather",
    "description":"current weather","parameters":{"type":"object"}}}])"));
  EXPECT_EQ(s.tool_choice, "weather");
  EXPECT_FALSE(s.parallel_tool_calls);
  EXPECT_EQ(s.think, "true");
  EXPECT_EQ(s.think_budget, 2048);
}

// The tool schemas reach the template and the grammar with their keys as the client wrote them.
TEST(AnthropicMessages, ToolSchemasKeepTheirKeyOrder) {
  const std::string schema =
      R"({"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"integer","minimum":0}},)"
      R"("required":["zeta","alpha"],"additionalProperties":false})";
  auto r = parse_messages_request(R"({"model":"m","max_tokens":8,"messages":[{"role":"user","content":"x"}],
    "tools":[{"name":"t","description":"d","input_schema":)" + schema + "}]}");
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(r->structured.tools,
            R"([{"type":"function","function":{"name":"t","description":"d","parameters":)" + schema + "}}]");
}

// budget_tokens as Anthropic checks it: required, at least 1024, below max_tokens.
TEST(AnthropicMessages, ThinkingBudget) {
  auto with = [](const std::string& max_tokens, const std::string& thinking) {
    return R"({"model":"m",)" + max_tokens + R"("messages":[{"role":"user","content":"x"}],"thinking":)" + thinking + "}";
  };
  auto r = parse_messages_request(with(R"("max_tokens":1025,)", R"({"type":"enabled","budget_tokens":1024})"));
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(r->structured.think_budget, 1024);
  EXPECT_EQ(r->structured.think, "true");
  auto counted = parse_count_tokens_request(with("", R"({"type":"enabled","budget_tokens":5000})"));
  ASSERT_TRUE(counted.ok()) << counted.error().msg;  // no max_tokens to compare with
  EXPECT_EQ(counted->structured.think_budget, 5000);
  struct Case {
    std::string body, part;
  };
  const std::vector<Case> cases = {
      {with(R"("max_tokens":2000,)", R"({"type":"enabled","budget_tokens":1023})"), "at least 1024"},
      {with(R"("max_tokens":2000,)", R"({"type":"enabled"})"), "budget_tokens: Field required"},
      {with(R"("max_tokens":2000,)", R"({"type":"enabled","budget_tokens":"many"})"), "budget_tokens"},
      {with(R"("max_tokens":1024,)", R"({"type":"enabled","budget_tokens":1024})"),
       "max_tokens must be greater than thinking.budget_tokens"},
      {with("", R"({"type":"enabled","budget_tokens":100})"), "at least 1024"},
  };
  for (const auto& c : cases) {
    auto e = c.body.find("max_tokens") == std::string::npos ? parse_count_tokens_request(c.body)
                                                            : parse_messages_request(c.body);
    ASSERT_FALSE(e.ok()) << c.body;
    EXPECT_EQ(e.error().code, Code::invalid_argument);
    EXPECT_NE(e.error().msg.find(c.part), std::string::npos) << c.body << " → " << e.error().msg;
  }
}

TEST(AnthropicMessages, ToolChoiceAnyAndThinkingDisabled) {
  auto r = parse_messages_request(R"({"model":"m","max_tokens":1,"messages":[{"role":"user","content":"x"}],
    "tools":[{"name":"t","input_schema":{"type":"object"}}],"tool_choice":{"type":"any"},"thinking":{"type":"disabled"}})");
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(r->structured.tool_choice, "required");
  EXPECT_EQ(r->structured.think, "false");
}

TEST(AnthropicMessages, CountTokensNeedsNoMaxTokens) {
  const char* body = R"({"model":"m","messages":[{"role":"user","content":"x"}]})";
  EXPECT_TRUE(parse_count_tokens_request(body).ok());
  auto r = parse_messages_request(body);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().msg.find("max_tokens"), std::string::npos);
}

TEST(AnthropicMessages, BadRequestsNameTheField) {
  const std::string m = R"("model":"m","max_tokens":5,)";
  struct Case {
    std::string body, part;
  };
  const std::vector<Case> cases = {
      {R"({"max_tokens":5,"messages":[{"role":"user","content":"x"}]})", "model"},
      {"{" + m + R"("messages":[]})", "messages"},
      {"{" + m + R"("messages":[{"role":"system","content":"x"}]})", "messages.0.role"},
      {"{" + m + R"("messages":[{"role":"user","content":[{"type":"image","source":{}}]}]})", "text models"},
      {"{" + m + R"("messages":[{"role":"user","content":[{"type":"tool_use","id":"a","name":"b"}]}]})", "tool_use"},
      {"{" + m + R"("messages":[{"role":"user","content":"x"}],"temperature":1.5})", "temperature"},
      {"{" + m + R"("messages":[{"role":"user","content":"x"}],"stop_sequences":"x"})", "stop_sequences"},
      {"{" + m + R"("messages":[{"role":"user","content":"x"}],"tools":[{"name":"t"}]})", "input_schema"},
      {"{" + m + R"("messages":[{"role":"user","content":"x"}],"tools":[{"type":"web_search_20250305","name":"w"}]})",
       "not supported"},
      {"{" + m + R"("messages":[{"role":"user","content":"x"}],"tool_choice":{"type":"tool","name":"nope"}})",
       "needs tools"},
      {"{" + m + R"("messages":[{"role":"user","content":"x"}],"thinking":{"type":"maybe"}})", "thinking.type"},
      {R"({"model":"m","max_tokens":0,"messages":[{"role":"user","content":"x"}]})", "max_tokens"},
  };
  for (const auto& c : cases) {
    auto r = parse_messages_request(c.body);
    ASSERT_FALSE(r.ok()) << c.body;
    EXPECT_EQ(r.error().code, Code::invalid_argument);
    EXPECT_NE(r.error().msg.find(c.part), std::string::npos) << c.body << " → " << r.error().msg;
  }
}

TEST(AnthropicErrors, ShapeAndTypes) {
  EXPECT_EQ(error_body(400, "bad"),
            Json::parse(R"({"type":"error","error":{"type":"invalid_request_error","message":"bad"}})"));
  EXPECT_EQ(error_body(404, "x")["error"]["type"], "not_found_error");
  EXPECT_EQ(error_body(413, "x")["error"]["type"], "request_too_large");
  EXPECT_EQ(error_body(503, "x")["error"]["type"], "overloaded_error");
  EXPECT_EQ(error_body(500, "x")["error"]["type"], "api_error");
}

}  // namespace
}  // namespace nurl::api::anthropic
