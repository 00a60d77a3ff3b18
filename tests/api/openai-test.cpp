// The OpenAI request parsers against OpenAI's API reference: field names and shapes
// (messages with content parts, tool calls and tool results; response_format; tools and
// tool_choice; logprobs; stream_options), the ranges OpenAI enforces (temperature 0-2, top_p 0-1,
// penalties -2..2, top_logprobs 0-20, n = 1 here) and the Responses API's input items.
#include "api/openai.h"

#include <gtest/gtest.h>

namespace nurl::api::openai {
namespace {

ChatRequest chat_ok(const std::string& body) {
  auto r = parse_chat_request(body);
  EXPECT_TRUE(r.ok()) << body << ": " << (r.ok() ? "" : r.error().msg);
  return r.ok() ? *r : ChatRequest{};
}

std::string chat_error(const std::string& body) {
  auto r = parse_chat_request(body);
  EXPECT_FALSE(r.ok()) << body;
  if (r.ok()) return "";
  EXPECT_EQ(r.error().code, Code::invalid_argument) << body;
  return r.error().msg;
}

TEST(OpenAIChat, SamplingFieldsLandInOptions) {
  auto r = chat_ok(R"({"model":"m","messages":[{"role":"user","content":"hi"}],"temperature":0.5,"top_p":0.25,
    "seed":42,"stop":["a","b"],"presence_penalty":1.5,"frequency_penalty":-1,"max_tokens":7,"stream":true,
    "stream_options":{"include_usage":true}})");
  const auto& o = r.common.options;
  EXPECT_EQ(r.common.model, "m");
  EXPECT_EQ(*o.temperature, 0.5);
  EXPECT_EQ(*o.top_p, 0.25);
  EXPECT_EQ(*o.seed, 42);
  EXPECT_EQ(*o.stop, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(*o.presence_penalty, 1.5);
  EXPECT_EQ(*o.frequency_penalty, -1);
  EXPECT_EQ(*o.num_predict, 7);
  EXPECT_TRUE(r.common.stream);
  EXPECT_TRUE(r.common.include_usage);
  EXPECT_EQ(chat_ok(R"({"model":"m","messages":[{"role":"user","content":"x"}],"stop":"end"})").common.options.stop,
            std::vector<std::string>{"end"});
  EXPECT_EQ(*chat_ok(R"({"model":"m","messages":[{"role":"user","content":"x"}],"max_completion_tokens":3})")
                 .common.options.num_predict,
            3);
}

TEST(OpenAIChat, OptionsExtensionUnderTopLevelFields) {
  auto r = chat_ok(R"({"model":"m","messages":[{"role":"user","content":"x"}],"temperature":0.1,
    "options":{"num_ctx":8192,"temperature":0.9,"top_k":5,"mirostat":1},"keep_alive":"10m","truncate":false})");
  const auto& o = r.common.options;
  EXPECT_EQ(*o.num_ctx, 8192);
  EXPECT_EQ(*o.temperature, 0.1);  // the OpenAI field wins
  EXPECT_EQ(*o.top_k, 5);
  EXPECT_EQ(r.common.keep_alive->count(), 600'000'000'000);
  EXPECT_FALSE(r.common.truncate);
  EXPECT_EQ(r.common.ignored_options, std::vector<std::string>{"mirostat"});
}

TEST(OpenAIChat, MessagesWithPartsToolCallsAndResults) {
  auto r = chat_ok(R"({"model":"m","messages":[
    {"role":"developer","content":"be brief"},
    {"role":"user","content":[{"type":"text","text":"one"},{"type":"text","text":"two"}]},
    {"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function",
      "function":{"name":"weather","arguments":"{\"city\":\"Oslo\"}"}}]},
    {"role":"tool","tool_call_id":"call_1","content":"cold"},
    {"role":"assistant","content":"It is cold.","reasoning_content":"looked it up"}]})");
  ASSERT_EQ(r.messages.size(), 5u);
  EXPECT_EQ(r.messages[0].role, "system");
  EXPECT_EQ(r.messages[1].content, "one\ntwo");
  ASSERT_EQ(r.messages[2].tool_calls.size(), 1u);
  EXPECT_EQ(r.messages[2].tool_calls[0].id, "call_1");
  EXPECT_EQ(r.messages[2].tool_calls[0].name, "weather");
  EXPECT_EQ(r.messages[2].tool_calls[0].arguments, R"({"city":"Oslo"})");
  EXPECT_EQ(r.messages[3].role, "tool");
  EXPECT_EQ(r.messages[3].tool_call_id, "call_1");
  EXPECT_EQ(r.messages[3].tool_name, "weather");  // from the call it answers
  EXPECT_EQ(r.messages[4].thinking, "looked it up");
}

TEST(OpenAIChat, StructuredFields) {
  auto r = chat_ok(R"({"model":"m","messages":[{"role":"user","content":"x"}],
    "response_format":{"type":"json_schema","json_schema":{"name":"p","strict":true,
      "schema":{"type":"object","properties":{"a":{"type":"integer"}}}}},
    "tools":[{"type":"function","function":{"name":"f","description":"d","parameters":{"type":"object"}}}],
    "tool_choice":{"type":"function","function":{"name":"f"}},"parallel_tool_calls":false,
    "reasoning_effort":"high","logprobs":true,"top_logprobs":3})");
  const auto& s = r.common.structured;
  EXPECT_EQ(Json::parse(s.format), Json::parse(R"({"type":"object","properties":{"a":{"type":"integer"}}})"));
  EXPECT_EQ(Json::parse(s.tools), Json::parse(R"([{"type":"function","function":{"name":"f","description":"d",
    "parameters":{"type":"object"}}}])"));
  EXPECT_EQ(s.tool_choice, "f");
  EXPECT_FALSE(s.parallel_tool_calls);
  EXPECT_EQ(s.think, "high");
  EXPECT_EQ(s.top_logprobs, 3);
  auto j = chat_ok(R"({"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_object"},
    "logprobs":true,"reasoning_effort":"none"})");
  EXPECT_EQ(j.common.structured.format, "json");
  EXPECT_EQ(j.common.structured.top_logprobs, 0);
  EXPECT_EQ(j.common.structured.think, "false");
  auto plain = chat_ok(R"({"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"text"}})");
  EXPECT_EQ(plain.common.structured.format, "");
  EXPECT_EQ(plain.common.structured.top_logprobs, -1);
  EXPECT_EQ(plain.common.structured.tools, "");
}

// Schemas and tools reach the template and the grammar with their keys as the client wrote them
// (the exact text in, the exact text out), on chat and on the Responses API.
const std::string kSchema =
    R"({"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"integer","minimum":0},)"
    R"("mid":{"enum":["x","y"]}},"required":["zeta","alpha","mid"],"additionalProperties":false})";

TEST(OpenAIChat, SchemasAndToolsKeepTheirKeyOrder) {
  auto r = chat_ok(R"({"model":"m","messages":[{"role":"user","content":"x"}],
    "response_format":{"type":"json_schema","json_schema":{"schema":)" + kSchema + R"(,"name":"p"}},
    "tools":[{"type":"function","function":{"name":"f","description":"d","parameters":)" + kSchema + "}}]}");
  EXPECT_EQ(r.common.structured.format, kSchema);
  EXPECT_EQ(r.common.structured.tools,
            R"([{"type":"function","function":{"name":"f","description":"d","parameters":)" + kSchema + "}}]");
}

TEST(OpenAIResponses, SchemasAndToolsKeepTheirKeyOrder) {
  auto r = parse_responses_request(R"({"model":"m","input":"x",
    "text":{"format":{"type":"json_schema","schema":)" + kSchema + R"(,"name":"p"}},
    "tools":[{"type":"function","name":"f","parameters":)" + kSchema + "}]}");
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(r->common.structured.format, kSchema);
  EXPECT_EQ(r->common.structured.tools, R"([{"type":"function","function":{"name":"f","parameters":)" + kSchema + "}}]");
}

TEST(OpenAIChat, BadRequestsNameTheField) {
  const std::string msgs = R"("messages":[{"role":"user","content":"x"}])";
  struct Case {
    std::string body, part;
  };
  const std::vector<Case> cases = {
      {"", "missing request body"},
      {"[1]", "must be a JSON object"},
      {"{" + msgs + "}", "model is required"},
      {R"({"model":"m"})", "messages"},
      {R"({"model":"m","messages":[]})", "messages"},
      {R"({"model":"m","messages":[{"role":"wizard","content":"x"}]})", "messages[0].role"},
      {R"({"model":"m","messages":[{"role":"user"}]})", "messages[0].content"},
      {R"({"model":"m","messages":[{"role":"tool","content":"x"}]})", "tool_call_id"},
      {R"({"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]})",
       "not supported"},
      {R"({"model":"m",)" + msgs + R"(,"temperature":2.5})", "temperature"},
      {R"({"model":"m",)" + msgs + R"(,"temperature":"hot"})", "temperature"},
      {R"({"model":"m",)" + msgs + R"(,"top_p":1.5})", "top_p"},
      {R"({"model":"m",)" + msgs + R"(,"presence_penalty":-3})", "presence_penalty"},
      {R"({"model":"m",)" + msgs + R"(,"max_tokens":0})", "max_tokens"},
      {R"({"model":"m",)" + msgs + R"(,"n":2})", "\"n\""},
      {R"({"model":"m",)" + msgs + R"(,"stop":[1]})", "stop"},
      {R"({"model":"m",)" + msgs + R"(,"logprobs":true,"top_logprobs":21})", "top_logprobs"},
      {R"({"model":"m",)" + msgs + R"(,"top_logprobs":2})", "needs \"logprobs\""},
      {R"({"model":"m",)" + msgs + R"(,"stream_options":{"include_usage":true}})", "stream_options"},
      {R"({"model":"m",)" + msgs + R"(,"response_format":{"type":"yaml"}})", "response_format"},
      {R"({"model":"m",)" + msgs + R"(,"response_format":{"type":"json_schema","json_schema":{"name":"x"}}})",
       "schema"},
      {R"({"model":"m",)" + msgs + R"(,"tools":[{"type":"function","function":{"name":"bad name"}}]})", "tools[0]"},
      {R"({"model":"m",)" + msgs + R"(,"tools":[{"type":"retrieval"}]})", "tools[0]"},
      {R"({"model":"m",)" + msgs + R"(,"tool_choice":"required"})", "needs tools"},
      {R"({"model":"m",)" + msgs +
           R"(,"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":{"type":"function","function":{"name":"g"}}})",
       "\"g\""},
      {R"({"model":"m",)" + msgs + R"(,"reasoning_effort":"extreme"})", "reasoning_effort"},
      {R"({"model":"m",)" + msgs + R"(,"options":{"num_ctx":"big"}})", "num_ctx"},
  };
  for (const auto& c : cases) EXPECT_NE(chat_error(c.body).find(c.part), std::string::npos) << c.body;
}

TEST(OpenAICompletion, PromptEchoSuffixLogprobs) {
  auto r = parse_completion_request(R"({"model":"m","prompt":["Once"],"echo":true,"suffix":"end","logprobs":2,
    "max_tokens":5})");
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(r->prompt, "Once");
  EXPECT_TRUE(r->echo);
  EXPECT_EQ(r->suffix, "end");
  EXPECT_EQ(r->logprobs, 2);
  EXPECT_EQ(r->common.structured.top_logprobs, 2);
  EXPECT_EQ(*r->common.options.num_predict, 5);
  for (const char* bad : {R"({"model":"m"})", R"({"model":"m","prompt":["a","b"]})", R"({"model":"m","prompt":[1,2]})",
                          R"({"model":"m","prompt":"x","best_of":3})", R"({"model":"m","prompt":"x","logprobs":21})"})
    EXPECT_FALSE(parse_completion_request(bad).ok()) << bad;
}

TEST(OpenAIEmbedding, InputShapes) {
  auto one = parse_embedding_request(R"({"model":"m","input":"hello"})");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->inputs, std::vector<std::string>{"hello"});
  EXPECT_FALSE(one->base64);
  auto many = parse_embedding_request(R"({"model":"m","input":["a","b"],"encoding_format":"base64","dimensions":4})");
  ASSERT_TRUE(many.ok());
  EXPECT_EQ(many->inputs.size(), 2u);
  EXPECT_TRUE(many->base64);
  EXPECT_EQ(*many->dimensions, 4);
  auto ids = parse_embedding_request(R"({"model":"m","input":[1,2,3]})");
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(ids->token_inputs, (std::vector<std::vector<int32_t>>{{1, 2, 3}}));
  auto lists = parse_embedding_request(R"({"model":"m","input":[[1],[2,3]]})");
  ASSERT_TRUE(lists.ok());
  EXPECT_EQ(lists->token_inputs.size(), 2u);
  for (const char* bad : {R"({"model":"m"})", R"({"model":"m","input":[]})", R"({"model":"m","input":""})",
                          R"({"model":"m","input":["a",[1]]})", R"({"model":"m","input":[-1]})",
                          R"({"model":"m","input":"x","encoding_format":"int8"})",
                          R"({"model":"m","input":"x","dimensions":0})"})
    EXPECT_FALSE(parse_embedding_request(bad).ok()) << bad;
}

TEST(OpenAIResponses, InputItemsInstructionsAndFormat) {
  auto r = parse_responses_request(R"({"model":"m","instructions":"be kind","max_output_tokens":9,
    "input":[{"role":"user","content":[{"type":"input_text","text":"weather?"}]},
             {"type":"reasoning","summary":[{"type":"summary_text","text":"call the tool"}]},
             {"type":"function_call","call_id":"c1","name":"weather","arguments":"{}"},
             {"type":"function_call_output","call_id":"c1","output":"sunny"},
             {"type":"message","role":"assistant","content":[{"type":"output_text","text":"Sunny."}]}],
    "tools":[{"type":"function","name":"weather","parameters":{"type":"object"}}],"tool_choice":"required",
    "text":{"format":{"type":"json_schema","name":"x","schema":{"type":"string"}}},"reasoning":{"effort":"low"},
    "top_logprobs":2})");
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(r->instructions, "be kind");
  EXPECT_EQ(*r->common.options.num_predict, 9);
  ASSERT_EQ(r->input.size(), 4u);
  EXPECT_EQ(r->input[0].content, "weather?");
  EXPECT_EQ(r->input[1].role, "assistant");
  EXPECT_EQ(r->input[1].thinking, "call the tool");
  ASSERT_EQ(r->input[1].tool_calls.size(), 1u);
  EXPECT_EQ(r->input[1].tool_calls[0].name, "weather");
  EXPECT_EQ(r->input[2].role, "tool");
  EXPECT_EQ(r->input[2].tool_name, "weather");
  EXPECT_EQ(r->input[2].content, "sunny");
  EXPECT_EQ(r->input[3].content, "Sunny.");
  const auto& s = r->common.structured;
  EXPECT_EQ(Json::parse(s.tools)[0]["function"]["name"], "weather");  // flat tools become chat-shaped
  EXPECT_EQ(s.tool_choice, "required");
  EXPECT_EQ(s.format, R"({"type":"string"})");
  EXPECT_EQ(s.think, "low");
  EXPECT_EQ(s.top_logprobs, 2);
  auto text = parse_responses_request(R"({"model":"m","input":"hi"})");
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(text->input.at(0).role, "user");
  for (const char* bad : {R"({"model":"m"})", R"({"model":"m","input":[]})",
                          R"({"model":"m","input":"x","previous_response_id":"resp_1"})",
                          R"({"model":"m","input":[{"type":"item_reference","id":"x"}]})",
                          R"({"model":"m","input":"x","tools":[{"type":"web_search"}]})",
                          R"({"model":"m","input":"x","background":true})",
                          R"({"model":"m","input":"x","text":{"format":{"type":"xml"}}})"})
    EXPECT_FALSE(parse_responses_request(bad).ok()) << bad;
}

TEST(OpenAIErrors, ShapeAndTypes) {
  auto e = error_body(400, "bad");
  EXPECT_EQ(e, Json::parse(R"({"error":{"message":"bad","type":"invalid_request_error","param":null,"code":null}})"));
  EXPECT_EQ(error_body(404, "model 'x' not found")["error"]["code"], "model_not_found");
  EXPECT_EQ(error_body(503, "busy")["error"]["type"], "server_error");
  EXPECT_EQ(error_body(499, "server is shutting down")["error"]["type"], "server_error");
}

}  // namespace
}  // namespace nurl::api::openai
