// Anthropic's Messages wire shapes from synthetic scheduler Events (no engine), as Anthropic's
// streaming reference describes them: message_start, then per block content_block_start /
// content_block_delta (text_delta, thinking_delta, input_json_delta) / content_block_stop,
// message_delta with stop_reason and usage, message_stop; and the `message` object.
#include <gtest/gtest.h>

#include "routes/anthropic.h"
#include "sse-harness.h"

namespace nurl::anthropic {
namespace {

using Json = nlohmann::json;
using namespace nurl::test;

const MessageInfo kInfo{"msg_test", "claude-x"};

std::vector<Json> events(const std::vector<sched::Event>& evs) {
  auto d = drain(evs, messages_format(kInfo, true), sse_event_framing(), false);
  EXPECT_FALSE(d.error);
  std::vector<Json> out;
  for (const auto& f : sse_frames(d.bytes())) {
    auto j = f.json();
    EXPECT_EQ(f.event, j["type"]);
    out.push_back(std::move(j));
  }
  return out;
}

std::vector<std::string> types(const std::vector<Json>& evs) {
  std::vector<std::string> t;
  for (const auto& e : evs) t.push_back(e["type"]);
  return t;
}

TEST(MessagesStream, TextThenToolUse) {
  auto evs = events({text_event("Let me "), text_event("check."), tool_event("toolu_1", "weather", R"({"city":"Oslo"})", 0),
                     done_event("stop", 11, 7)});
  EXPECT_EQ(types(evs), (std::vector<std::string>{"message_start", "content_block_start", "content_block_delta",
                                                  "content_block_delta", "content_block_stop", "content_block_start",
                                                  "content_block_delta", "content_block_stop", "message_delta",
                                                  "message_stop"}));
  const auto& start = evs[0]["message"];
  EXPECT_EQ(start["id"], "msg_test");
  EXPECT_EQ(start["role"], "assistant");
  EXPECT_EQ(start["model"], "claude-x");
  EXPECT_EQ(start["content"], Json::array());
  EXPECT_TRUE(start["stop_reason"].is_null());
  EXPECT_EQ(evs[1]["index"], 0);
  EXPECT_EQ(evs[1]["content_block"], Json::parse(R"({"type":"text","text":""})"));
  EXPECT_EQ(evs[2]["delta"], Json::parse(R"({"type":"text_delta","text":"Let me "})"));
  EXPECT_EQ(evs[4]["index"], 0);
  EXPECT_EQ(evs[5]["index"], 1);
  EXPECT_EQ(evs[5]["content_block"], Json::parse(R"({"type":"tool_use","id":"toolu_1","name":"weather","input":{}})"));
  EXPECT_EQ(evs[6]["delta"], Json::parse(R"({"type":"input_json_delta","partial_json":"{\"city\":\"Oslo\"}"})"));
  EXPECT_EQ(evs[8]["delta"], Json::parse(R"({"stop_reason":"tool_use","stop_sequence":null})"));
  EXPECT_EQ(evs[8]["usage"], Json::parse(R"({"input_tokens":11,"output_tokens":7})"));
}

TEST(MessagesStream, ThinkingBlockStopSequenceAndMaxTokens) {
  auto evs = events({thinking_event("hm"), text_event("A"), done_event("stop", 1, 2, "###")});
  EXPECT_EQ(evs[1]["content_block"]["type"], "thinking");
  EXPECT_EQ(evs[2]["delta"], Json::parse(R"({"type":"thinking_delta","thinking":"hm"})"));
  EXPECT_EQ(evs[3]["type"], "content_block_stop");
  EXPECT_EQ(evs[4]["index"], 1);
  auto md = evs[evs.size() - 2];
  EXPECT_EQ(md["delta"], Json::parse(R"({"stop_reason":"stop_sequence","stop_sequence":"###"})"));
  auto len = events({text_event("A"), done_event("length", 1, 1)});
  EXPECT_EQ(len[len.size() - 2]["delta"]["stop_reason"], "max_tokens");
  auto eog = events({text_event("A"), done_event("stop", 1, 1)});
  EXPECT_EQ(eog[eog.size() - 2]["delta"]["stop_reason"], "end_turn");
}

TEST(MessagesStream, NoEventsStillOneBlock) {
  auto evs = events({done_event("stop", 4, 0)});
  EXPECT_EQ(types(evs), (std::vector<std::string>{"message_start", "content_block_start", "content_block_stop",
                                                  "message_delta", "message_stop"}));
}

TEST(MessagesSingle, MessageObject) {
  auto one = Json::parse(drain({thinking_event("plan"), text_event("Sure."), tool_event("toolu_9", "f", R"({"a":[1]})", 0),
                                done_event("stop", 5, 3)},
                               messages_format(kInfo, false), sse_event_framing(), true)
                             .chunks.at(0));
  EXPECT_EQ(one, Json::parse(R"({"id":"msg_test","type":"message","role":"assistant","model":"claude-x",
    "content":[{"type":"thinking","thinking":"plan","signature":""},{"type":"text","text":"Sure."},
               {"type":"tool_use","id":"toolu_9","name":"f","input":{"a":[1]}}],
    "stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":3}})"));
}

TEST(MessagesStream, ErrorAfterTheFirstByteIsAnErrorEvent) {
  auto ch = std::make_shared<sched::Channel<sched::Event>>(1);
  auto s = sse_stream(ch, messages_format(kInfo, true), sse_event_framing(), false,
                      [](int, const std::string& m) { return nlohmann::json{{"type", "error"}, {"error", {{"message", m}}}}.dump(); });
  auto frames = sse_frames(s.error_chunk(Error(Code::busy, "overloaded")));
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].event, "error");
  EXPECT_EQ(frames[0].json()["error"]["message"], "overloaded");
}

}  // namespace
}  // namespace nurl::anthropic
