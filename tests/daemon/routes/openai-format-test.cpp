// OpenAI's wire shapes from synthetic scheduler Events (no engine): chat.completion and
// chat.completion.chunk (the first delta carries the role, a separate chunk the finish_reason,
// include_usage adds a usage chunk with choices: [], then data: [DONE]), tool-call deltas with
// index/id/type and arguments as a JSON string, reasoning_content, logprobs in OpenAI's shape,
// legacy completions with echo and logprobs, and the Responses API's event sequence. The shapes
// follow OpenAI's API reference.
#include <gtest/gtest.h>

#include "routes/openai.h"
#include "sse-harness.h"

namespace nurl::v1 {
namespace {

using Json = nlohmann::json;
using namespace nurl::test;

ReplyInfo info(bool include_usage = false, bool logprobs = false) {
  return ReplyInfo{"chatcmpl-test", "m", 1700000000, include_usage, logprobs};
}

sched::TokenLogprob lp(std::string tok, float v, std::vector<std::pair<std::string, float>> top = {}) {
  return sched::TokenLogprob{std::move(tok), v, std::move(top)};
}

TEST(ChatStream, RoleFirstFinishSeparateUsageChunkThenDone) {
  auto d = drain({text_event("Hel"), text_event("lo"), done_event("stop", 5, 2)}, chat_format(info(true), true),
                 sse_data_framing(), false);
  ASSERT_FALSE(d.error);
  auto frames = sse_frames(d.bytes());
  ASSERT_EQ(frames.size(), 5u);
  EXPECT_EQ(frames.back().data, "[DONE]");
  auto c0 = frames[0].json(), c1 = frames[1].json(), fin = frames[2].json(), use = frames[3].json();
  for (const auto& c : {c0, c1, fin, use}) {
    EXPECT_EQ(c["id"], "chatcmpl-test");
    EXPECT_EQ(c["object"], "chat.completion.chunk");
    EXPECT_EQ(c["created"], 1700000000);
    EXPECT_EQ(c["model"], "m");
  }
  EXPECT_EQ(c0["choices"][0]["delta"], Json::parse(R"({"role":"assistant","content":"Hel"})"));
  EXPECT_TRUE(c0["choices"][0]["finish_reason"].is_null());
  EXPECT_TRUE(c0["usage"].is_null());
  EXPECT_EQ(c1["choices"][0]["delta"], Json::parse(R"({"content":"lo"})"));
  EXPECT_EQ(fin["choices"][0]["delta"], Json::object());
  EXPECT_EQ(fin["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(use["choices"], Json::array());
  EXPECT_EQ(use["usage"], Json::parse(R"({"prompt_tokens":5,"completion_tokens":2,"total_tokens":7})"));
}

TEST(ChatStream, WithoutUsageNoUsageChunkAndLengthFinish) {
  auto frames = sse_frames(
      drain({text_event("a"), done_event("length", 1, 1)}, chat_format(info(), true), sse_data_framing(), false)
          .bytes());
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_FALSE(frames[0].json().contains("usage"));
  EXPECT_EQ(frames[1].json()["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(frames[2].data, "[DONE]");
}

TEST(ChatStream, NoEventsStillSendsTheRole) {
  auto frames = sse_frames(drain({done_event("stop", 3, 0)}, chat_format(info(), true), sse_data_framing(), false).bytes());
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].json()["choices"][0]["delta"]["role"], "assistant");
  EXPECT_EQ(frames[0].json()["choices"][0]["finish_reason"], "stop");
}

TEST(ChatStream, ToolCallsThinkingAndLogprobs) {
  auto frames = sse_frames(drain({thinking_event("hmm"), text_event("x", {lp("x", -0.5f, {{"x", -0.5f}, {"y", -1.5f}})}),
                                  tool_event("call_a", "weather", R"({"city":"Oslo"})", 0),
                                  tool_event("call_b", "time", "{}", 1), done_event("stop", 4, 6)},
                                 chat_format(info(false, true), true), sse_data_framing(), false)
                               .bytes());
  ASSERT_EQ(frames.size(), 6u);
  EXPECT_EQ(frames[0].json()["choices"][0]["delta"], Json::parse(R"({"role":"assistant","reasoning_content":"hmm"})"));
  auto lpj = frames[1].json()["choices"][0]["logprobs"]["content"];
  EXPECT_EQ(lpj, Json::parse(R"([{"token":"x","logprob":-0.5,"bytes":[120],
    "top_logprobs":[{"token":"x","logprob":-0.5,"bytes":[120]},{"token":"y","logprob":-1.5,"bytes":[121]}]}])"));
  EXPECT_EQ(frames[2].json()["choices"][0]["delta"]["tool_calls"],
            Json::parse(R"([{"index":0,"id":"call_a","type":"function",
              "function":{"name":"weather","arguments":"{\"city\":\"Oslo\"}"}}])"));
  EXPECT_EQ(frames[3].json()["choices"][0]["delta"]["tool_calls"][0]["index"], 1);
  EXPECT_EQ(frames[4].json()["choices"][0]["finish_reason"], "tool_calls");
}

TEST(ChatSingle, MessageUsageToolCallsLogprobs) {
  auto d = drain({text_event("Hi", {lp("Hi", -0.25f)}), text_event("!", {lp("!", -1.0f)}), done_event("stop", 3, 2)},
                 chat_format(info(false, true), false), sse_data_framing(), true);
  ASSERT_EQ(d.chunks.size(), 1u);
  auto j = Json::parse(d.chunks[0]);
  EXPECT_EQ(j["object"], "chat.completion");
  EXPECT_EQ(j["choices"][0]["message"], Json::parse(R"({"role":"assistant","content":"Hi!"})"));
  EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(j["choices"][0]["logprobs"]["content"].size(), 2u);
  EXPECT_EQ(j["usage"]["total_tokens"], 5);

  auto t = Json::parse(drain({thinking_event("plan"), tool_event("call_1", "f", R"({"a":1})", 0), done_event("stop", 1, 1)},
                             chat_format(info(), false), sse_data_framing(), true)
                           .chunks.at(0));
  const auto& msg = t["choices"][0]["message"];
  EXPECT_TRUE(msg["content"].is_null());  // only calls: content is null, as OpenAI sends it
  EXPECT_EQ(msg["reasoning_content"], "plan");
  EXPECT_EQ(msg["tool_calls"], Json::parse(R"([{"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}])"));
  EXPECT_EQ(t["choices"][0]["finish_reason"], "tool_calls");
  EXPECT_TRUE(t["choices"][0]["logprobs"].is_null());
}

TEST(SseFraming, ErrorsBeforeAndAfterTheFirstByte) {
  auto ch = std::make_shared<sched::Channel<sched::Event>>(1);
  auto s = sse_stream(ch, chat_format(info(), true), sse_data_framing(), false, [](int status, const std::string& m) {
    return nlohmann::json{{"error", {{"message", m}, {"status", status}}}}.dump();
  });
  EXPECT_EQ(s.content_type, "text/event-stream");
  auto before = s.error_reply(Error(Code::not_found, "model 'x' not found"));
  EXPECT_EQ(before.status, 404);
  EXPECT_EQ(Json::parse(before.body)["error"]["message"], "model 'x' not found");
  EXPECT_EQ(s.error_chunk(Error(Code::busy, "gone")), R"(data: {"error":{"message":"gone","status":503}})" "\n\n");
  auto named = sse_event_framing();
  EXPECT_EQ(named.frame(R"({"type":"a","x":1})" "\n" R"({"type":"b"})"),
            "event: a\ndata: {\"type\":\"a\",\"x\":1}\n\nevent: b\ndata: {\"type\":\"b\"}\n\n");
  EXPECT_EQ(named.terminator, "");
  // The error after the first byte ends the stream without [DONE].
  auto d = drain({text_event("a"), error_event(Error(Code::internal, "boom"))}, chat_format(info(), true),
                 sse_data_framing(), false);
  ASSERT_TRUE(d.error);
  EXPECT_EQ(d.error->msg, "boom");
  EXPECT_EQ(d.bytes().find("[DONE]"), std::string::npos);
}

TEST(Completions, StreamEchoLogprobsAndSingle) {
  ReplyInfo ci{"cmpl-test", "m", 1, true, true};
  auto frames = sse_frames(drain({text_event("ab", {lp("a", -1), lp("b", -2, {{"b", -2}})}), text_event("c", {lp("c", -3)}),
                                  done_event("length", 2, 3)},
                                 completion_format(ci, true, "Once ", 1), sse_data_framing(), false)
                               .bytes());
  ASSERT_EQ(frames.size(), 5u);
  auto c0 = frames[0].json();
  EXPECT_EQ(c0["object"], "text_completion");
  EXPECT_EQ(c0["choices"][0]["text"], "Once ab");  // echo: the prompt in front of the first piece
  EXPECT_EQ(c0["choices"][0]["logprobs"]["tokens"], Json::parse(R"(["a","b"])"));
  EXPECT_EQ(c0["choices"][0]["logprobs"]["token_logprobs"], Json::parse("[-1.0,-2.0]"));
  EXPECT_EQ(c0["choices"][0]["logprobs"]["text_offset"], Json::parse("[5,6]"));
  EXPECT_EQ(c0["choices"][0]["logprobs"]["top_logprobs"][1], Json::parse(R"({"b":-2.0})"));
  EXPECT_EQ(frames[1].json()["choices"][0]["text"], "c");
  EXPECT_EQ(frames[1].json()["choices"][0]["logprobs"]["text_offset"], Json::parse("[7]"));
  EXPECT_EQ(frames[2].json()["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(frames[3].json()["choices"], Json::array());
  EXPECT_EQ(frames[3].json()["usage"]["completion_tokens"], 3);
  EXPECT_EQ(frames[4].data, "[DONE]");

  auto one = Json::parse(drain({text_event("ab"), done_event("stop", 2, 2)}, completion_format(ci, false, "P", -1),
                               sse_data_framing(), true)
                             .chunks.at(0));
  EXPECT_EQ(one["choices"][0]["text"], "Pab");
  EXPECT_TRUE(one["choices"][0]["logprobs"].is_null());
  EXPECT_EQ(one["usage"]["prompt_tokens"], 2);
}

std::vector<std::string> types_of(const std::vector<Frame>& frames) {
  std::vector<std::string> out;
  for (const auto& f : frames) {
    EXPECT_EQ(f.event, f.json()["type"]);  // the event name is the object's type
    out.push_back(f.event);
  }
  return out;
}

TEST(Responses, EventSequenceForReasoningTextAndACall) {
  ResponseInfo ri{{"resp_test", "m", 7, false, false}, Json{{"instructions", "be kind"}}};
  auto frames = sse_frames(drain({thinking_event("think"), text_event("Hel"), text_event("lo"),
                                  tool_event("call_1", "f", R"({"x":2})", 0), done_event("stop", 3, 4)},
                                 responses_format(ri, true), sse_event_framing(), false)
                               .bytes());
  const std::vector<std::string> want = {
      "response.created",        "response.in_progress",     "response.output_item.added",
      "response.reasoning_text.delta", "response.reasoning_text.done", "response.output_item.done",
      "response.output_item.added", "response.content_part.added", "response.output_text.delta",
      "response.output_text.delta", "response.output_text.done", "response.content_part.done",
      "response.output_item.done", "response.output_item.added", "response.function_call_arguments.delta",
      "response.function_call_arguments.done", "response.output_item.done", "response.completed"};
  EXPECT_EQ(types_of(frames), want);
  for (size_t i = 0; i < frames.size(); ++i) EXPECT_EQ(frames[i].json()["sequence_number"], i);
  EXPECT_EQ(frames[0].json()["response"]["status"], "in_progress");
  EXPECT_EQ(frames[8].json()["delta"], "Hel");
  EXPECT_EQ(frames[8].json()["output_index"], 1);
  EXPECT_EQ(frames[10].json()["text"], "Hello");
  auto done = frames.back().json()["response"];
  EXPECT_EQ(done["id"], "resp_test");
  EXPECT_EQ(done["status"], "completed");
  EXPECT_EQ(done["instructions"], "be kind");
  ASSERT_EQ(done["output"].size(), 3u);
  EXPECT_EQ(done["output"][0]["type"], "reasoning");
  EXPECT_EQ(done["output"][1]["content"][0], Json::parse(R"({"type":"output_text","text":"Hello","annotations":[]})"));
  EXPECT_EQ(done["output"][2]["type"], "function_call");
  EXPECT_EQ(done["output"][2]["call_id"], "call_1");
  EXPECT_EQ(done["output"][2]["arguments"], R"({"x":2})");
  EXPECT_EQ(done["usage"]["input_tokens"], 3);
  EXPECT_EQ(done["usage"]["output_tokens"], 4);
}

TEST(Responses, IncompleteAtMaxOutputTokensAndSingle) {
  ResponseInfo ri{{"resp_t", "m", 7, false, false}, Json::object()};
  auto frames = sse_frames(
      drain({text_event("a"), done_event("length", 1, 1)}, responses_format(ri, true), sse_event_framing(), false).bytes());
  auto last = frames.back().json();
  EXPECT_EQ(last["type"], "response.incomplete");
  EXPECT_EQ(last["response"]["incomplete_details"], Json::parse(R"({"reason":"max_output_tokens"})"));

  auto one = Json::parse(
      drain({text_event("Hi"), done_event("stop", 2, 1)}, responses_format(ri, false), sse_event_framing(), true)
          .chunks.at(0));
  EXPECT_EQ(one["object"], "response");
  EXPECT_EQ(one["status"], "completed");
  EXPECT_EQ(one["output"][0]["type"], "message");
  EXPECT_EQ(one["output"][0]["role"], "assistant");
  EXPECT_EQ(one["output"][0]["content"][0]["text"], "Hi");
  EXPECT_EQ(one["usage"]["total_tokens"], 3);
}

}  // namespace
}  // namespace nurl::v1
