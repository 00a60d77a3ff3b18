// The worker's side of structured output and reasoning, with the fake model: the 400s for
// templates without tools or thinking, compile errors before any work, the reasoning block first
// and the constraint from the token after it, a thinking budget that closes the block, and
// log-probabilities riding on their events.
#include <gtest/gtest.h>

#include "fake-model.h"
#include "scheduler/reply-stream.h"
#include "scheduler/scheduler.h"

namespace nurl::sched {
namespace {

using test::FakeModel;
using test::FakeStats;

struct Collected {
  std::string text, thinking;
  std::optional<Error> error;
  bool done = false;
};

class ReplyJobs : public ::testing::Test {
 protected:
  Collected run(const std::function<void(Job&)>& set) {
    ModelLoader l;
    l.estimate = [](const LoadSpec&) -> Result<uint64_t> { return uint64_t{100}; };
    l.load = [this](const LoadSpec&) -> Result<std::shared_ptr<LoadedModel>> {
      return std::shared_ptr<LoadedModel>(std::make_shared<FakeModel>(&stats_, std::chrono::milliseconds(0), 0));
    };
    SchedulerConfig c;
    Scheduler s(c, l, log_);
    auto j = std::make_shared<Job>();
    j->model_name = "m";
    j->spec.path = "m.gguf";
    j->spec.n_ctx = 256;
    j->num_predict = 64;
    j->prepare = [](const LoadedModel& m) -> Result<PreparedPrompt> {
      PreparedPrompt p;
      p.rendered = "<user>hi";
      NURL_ASSIGN(p.tokens, m.tokenize(p.rendered, true));
      return p;
    };
    j->out = std::make_shared<Channel<Event>>(1024);
    set(*j);
    EXPECT_TRUE(s.submit(j).ok());
    Collected out;
    while (auto e = j->out->pop_blocking()) {
      if (e->kind == Event::Kind::text) out.text += e->text;
      if (e->kind == Event::Kind::thinking) out.thinking += e->text;
      if (e->kind == Event::Kind::error) out.error = e->error;
      if (e->kind == Event::Kind::done) out.done = true;
    }
    s.stop();
    return out;
  }

  FakeStats stats_;
  Logger log_{[](LogLevel, std::string_view) {}, LogLevel::error};
};

TEST_F(ReplyJobs, ToolsOrThinkingWithoutTemplateSupportAre400) {
  auto t = run([](Job& j) { j.tools = R"([{"type":"function","function":{"name":"f"}}])"; });
  ASSERT_TRUE(t.error);
  EXPECT_EQ(t.error->code, Code::invalid_argument);
  EXPECT_EQ(t.error->msg, "\"m\" does not support tools");
  auto k = run([](Job& j) { j.think = "true"; });
  ASSERT_TRUE(k.error);
  EXPECT_EQ(k.error->msg, "\"m\" does not support thinking");
  // Switching them off is always fine.
  auto off = run([](Job& j) {
    j.think = "false";
    j.tools = R"([{"type":"function","function":{"name":"f"}}])";
    j.tool_choice = "none";
  });
  EXPECT_FALSE(off.error);
  EXPECT_TRUE(off.done);
}

TEST_F(ReplyJobs, FormatErrorsComeBeforeAnyOutput) {
  auto r = run([](Job& j) { j.format = "bad"; });
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->code, Code::invalid_argument);
  EXPECT_TRUE(r.text.empty());
  EXPECT_EQ(stats_.constrained, 0);
}

TEST_F(ReplyJobs, ReasoningFirstThenTheConstrainedAnswer) {
  stats_.thinking = true;
  stats_.script = "ab</think>{\"x\":1}";
  auto r = run([](Job& j) {
    j.format = "json";
    j.think = "true";
  });
  ASSERT_FALSE(r.error) << r.error->msg;
  EXPECT_EQ(r.thinking, "ab");
  EXPECT_EQ(r.text, "{\"x\":1}");
  EXPECT_EQ(stats_.constrained, 1);
  EXPECT_FALSE(stats_.constrained_now);   // armed: reasoning comes first
  EXPECT_EQ(stats_.activated_at, 9);      // right after the '>' that closes </think>
}

// The script never closes its reasoning: at the budget the worker writes </think> itself (in place
// of what the model sampled), the constraint starts after it and the answer follows.
TEST_F(ReplyJobs, ThinkingBudgetClosesTheBlockThenTheAnswer) {
  stats_.thinking = true;
  stats_.script = "abcdefghijk{\"x\":1}";  // d..k are sampled while </think> is written: dropped
  auto r = run([](Job& j) {
    j.format = "json";
    j.think = "true";
    j.think_budget = 3;
  });
  ASSERT_FALSE(r.error) << r.error->msg;
  EXPECT_EQ(r.thinking, "abc");
  EXPECT_EQ(r.text, "{\"x\":1}");
  EXPECT_EQ(stats_.activated_at, 10);  // after 3 reasoning tokens and the 8 of </think>
  // Without a budget the same script is reasoning to the end.
  stats_.activated_at = -1;
  auto free = run([](Job& j) {
    j.format = "json";
    j.think = "true";
  });
  EXPECT_EQ(free.thinking, "abcdefghijk{\"x\":1}");
  EXPECT_EQ(free.text, "");
  EXPECT_EQ(stats_.activated_at, -1);
}

TEST_F(ReplyJobs, ConstraintFromTheFirstTokenWhenThinkingIsOff) {
  stats_.thinking = true;
  stats_.script = "{\"x\":1}";
  auto r = run([](Job& j) {
    j.format = "json";
    j.think = "false";
  });
  ASSERT_FALSE(r.error);
  EXPECT_EQ(r.text, "{\"x\":1}");
  EXPECT_TRUE(r.thinking.empty());
  EXPECT_TRUE(stats_.constrained_now);
  EXPECT_EQ(stats_.activated_at, -1);
}

TEST_F(ReplyJobs, ReasoningSplitAcrossTokensNeverReachesTheText) {
  stats_.thinking = true;
  stats_.script = "<think>deep</think>answer <thin";
  auto r = run([](Job&) {});
  EXPECT_EQ(r.thinking, "deep");
  EXPECT_EQ(r.text, "answer <thin");  // an unfinished tag at the end is text after all
}

TEST(ReplyStream, LogprobsRideOnTheEventThatPrintsTheirText) {
  ReplyStream s({"STOP"}, nullptr);
  std::vector<Event> ev;
  auto lp = [](const char* t) { return TokenLogprob{t, -0.5f, {}}; };
  s.push("\xc3", lp("\xc3"), ev);  // half a UTF-8 character: held back with its logprob
  EXPECT_TRUE(ev.empty());
  s.push("\xa9!", lp("\xa9!"), ev);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].text, "\xc3\xa9!");
  EXPECT_EQ(ev[0].logprobs.size(), 2u);
  ev.clear();
  s.push("ST", lp("ST"), ev);  // may be the start of a stop string
  EXPECT_TRUE(ev.empty());
  s.push("OP", lp("OP"), ev);
  EXPECT_TRUE(s.stopped());
  s.finish(ev);
  ASSERT_EQ(ev.size(), 1u);  // nothing printed, the logprobs still arrive
  EXPECT_TRUE(ev[0].text.empty());
  EXPECT_EQ(ev[0].logprobs.size(), 2u);
}

}  // namespace
}  // namespace nurl::sched
