// Structured output, forced tool calls and log-probabilities through the real engine and the
// worker, with the synthetic qwen2 model (random weights, the real 151,936-token Qwen vocabulary),
// whose unconstrained output is noise: whatever it "wants", the constraint must hold. Tool calls
// are forced through several template families (the families' own templates from testdata as
// overrides) and read back by the family's parser; a thinking budget ends qwen3's reasoning.
#include <gtest/gtest.h>

#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>

#include "scheduler/engine-loader.h"
#include "scheduler/scheduler.h"
#include "testdata.h"

namespace nurl::sched {
namespace {

using Json = nlohmann::ordered_json;

const char* kTools = R"([
  {"type":"function","function":{"name":"get_weather","description":"Weather for a city","parameters":{"type":"object",
    "properties":{"city":{"type":"string","maxLength":16},"days":{"type":"integer","minimum":1,"maximum":7}},"required":["city","days"]}}},
  {"type":"function","function":{"name":"add","description":"Adds two numbers","parameters":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}}}
])";

struct Reply {
  std::string text, thinking;
  std::vector<ToolCall> calls;
  std::vector<TokenLogprob> logprobs;
  std::optional<Error> error;
  std::optional<DoneInfo> done;
};

class EngineJobs : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    SchedulerConfig c;
    c.num_parallel = 2;
    sched_ = new Scheduler(c, engine_loader(), *log_);
  }
  static void TearDownTestSuite() {
    sched_->stop();
    delete sched_;
  }

  static std::shared_ptr<Job> job(const std::string& tmpl_file, const std::string& tools = "") {
    auto j = std::make_shared<Job>();
    j->model_name = "qwen2";
    j->spec.path = test::testdata("models/qwen2-F16-embQ4_0.gguf");
    j->spec.n_ctx = 2048;
    j->spec.n_parallel = 2;
    j->num_predict = 400;
    j->sampling.temperature = 1.0f;
    j->sampling.top_k = 0;
    j->sampling.top_p = 1.0f;
    j->sampling.seed_set = true;
    std::string tmpl;
    if (!tmpl_file.empty()) {
      Json t = Json::parse(std::ifstream(test::testdata("templates/" + tmpl_file + ".json")));
      tmpl = t["template"].get<std::string>();
    }
    j->tools = tools;
    j->prepare = [tmpl, tools](const LoadedModel& m) -> Result<PreparedPrompt> {
      ChatRender r;
      r.template_override = tmpl;
      r.tools = tools;
      PreparedPrompt p;
      NURL_ASSIGN(p.rendered, m.render_chat({{"user", "What is the weather in Paris for two days?"}}, r));
      p.template_override = tmpl;
      NURL_ASSIGN(p.tokens, m.tokenize(p.rendered, true));
      return p;
    };
    j->out = std::make_shared<Channel<Event>>(4096);
    return j;
  }

  static Reply run(const std::shared_ptr<Job>& j) {
    Reply r;
    EXPECT_TRUE(sched_->submit(j).ok());
    while (auto e = j->out->pop_blocking()) {
      switch (e->kind) {
        case Event::Kind::text: r.text += e->text; break;
        case Event::Kind::thinking: r.thinking += e->text; break;
        case Event::Kind::tool_call: r.calls.push_back(e->tool_call); break;
        case Event::Kind::error: r.error = e->error; break;
        case Event::Kind::done: r.done = e->done; break;
        default: break;
      }
      r.logprobs.insert(r.logprobs.end(), e->logprobs.begin(), e->logprobs.end());
    }
    return r;
  }

  static Scheduler* sched_;
  static Logger* log_;
};

Scheduler* EngineJobs::sched_ = nullptr;
Logger* EngineJobs::log_ = new Logger([](LogLevel, std::string_view) {}, LogLevel::error);

void expect_weather_or_add(const ToolCall& c, const std::string& family) {
  Json a = Json::parse(c.arguments, nullptr, false);
  ASSERT_TRUE(a.is_object()) << family << ": " << c.arguments;
  if (c.name == "add") {
    EXPECT_TRUE(a["a"].is_number() && a["b"].is_number()) << family << ": " << c.arguments;
    return;
  }
  ASSERT_EQ(c.name, "get_weather") << family;
  ASSERT_TRUE(a.contains("city") && a["city"].is_string()) << family << ": " << c.arguments;
  ASSERT_TRUE(a.contains("days") && a["days"].is_number_integer()) << family << ": " << c.arguments;
  EXPECT_GE(a["days"].get<int>(), 1);
  EXPECT_LE(a["days"].get<int>(), 7);
  EXPECT_FALSE(c.id.empty());
}

TEST_F(EngineJobs, FormatHoldsOnNoise) {
  NURL_REQUIRE_TESTDATA();
  const std::string schema =
      R"({"type":"object","properties":{"name":{"type":"string","maxLength":20},"n":{"type":"integer","minimum":0,"maximum":9},
          "tags":{"type":"array","items":{"enum":["a","b"]},"maxItems":3}},"required":["name","n","tags"]})";
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    auto j = job("");
    j->format = schema;
    j->sampling.seed = seed;
    Reply r = run(j);
    ASSERT_FALSE(r.error) << r.error->msg;
    ASSERT_TRUE(r.done);
    EXPECT_EQ(r.done->reason, "stop") << r.text;
    Json doc = Json::parse(r.text, nullptr, false);
    ASSERT_TRUE(doc.is_object()) << r.text;
    EXPECT_TRUE(doc["name"].is_string() && doc["name"].get<std::string>().size() <= 20 * 4) << r.text;
    EXPECT_TRUE(doc["n"].is_number_integer() && doc["n"].get<int>() >= 0 && doc["n"].get<int>() <= 9) << r.text;
    ASSERT_TRUE(doc["tags"].is_array()) << r.text;
    EXPECT_LE(doc["tags"].size(), 3u);
  }
}

// Noise never closes a string by itself: with a small num_predict the document must still end
// ("stop", not "length") and satisfy the schema, required parts and minimums included.
TEST_F(EngineJobs, FormatFinishesWithinASmallNumPredict) {
  NURL_REQUIRE_TESTDATA();
  const std::string schema =
      R"({"type":"object","properties":{"title":{"type":"string","minLength":3},"items":{"type":"array","items":{"type":"integer"},
          "minItems":2},"note":{"type":"string"}},"required":["title","items"]})";
  for (int num_predict : {30, 64}) {  // {"title":"xxx","items":[0,0]} is 29 bytes
    for (uint64_t seed = 1; seed <= 2; ++seed) {
      auto j = job("");
      j->format = schema;
      j->num_predict = num_predict;
      j->sampling.seed = seed;
      Reply r = run(j);
      ASSERT_FALSE(r.error) << r.error->msg;
      ASSERT_TRUE(r.done);
      EXPECT_EQ(r.done->reason, "stop") << r.text;
      EXPECT_LT(r.done->eval_count, num_predict);
      Json doc = Json::parse(r.text, nullptr, false);
      ASSERT_TRUE(doc.is_object()) << r.text;
      ASSERT_TRUE(doc.contains("title") && doc["title"].is_string()) << r.text;
      EXPECT_GE(doc["title"].get<std::string>().size(), 3u) << r.text;
      ASSERT_TRUE(doc.contains("items") && doc["items"].is_array()) << r.text;
      EXPECT_GE(doc["items"].size(), 2u) << r.text;
      for (const auto& v : doc["items"]) EXPECT_TRUE(v.is_number_integer()) << r.text;
    }
  }
}

TEST_F(EngineJobs, ABudgetBelowTheShortestDocumentIsRefused) {
  NURL_REQUIRE_TESTDATA();
  auto j = job("");
  j->format = R"({"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"string","minLength":8}},
                 "required":["b"]}},"required":["a"]})";
  j->num_predict = 3;
  Reply r = run(j);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->code, Code::invalid_argument);
  EXPECT_NE(r.error->msg.find("shortest document"), std::string::npos) << r.error->msg;
  EXPECT_NE(r.error->msg.find("num_predict 3"), std::string::npos) << r.error->msg;
  EXPECT_TRUE(r.text.empty());
}

TEST_F(EngineJobs, ForcedToolCallsRoundTripThroughFamilies) {
  NURL_REQUIRE_TESTDATA();
  for (const char* tmpl : {"Qwen-Qwen2.5-7B-Instruct", "meta-llama-Llama-3.1-8B-Instruct", "unsloth-mistral-Devstral-Small-2507",
                           "ibm-granite-granite-3.3-2B-Instruct", "meetkai-functionary-medium-v3.1",
                           "CohereForAI-c4ai-command-r7b-12-2024-tool_use", "GLM-4.6"}) {
    auto j = job(tmpl, kTools);
    j->tool_choice = "required";
    j->parallel_tool_calls = false;
    j->sampling.seed = 7;
    Reply r = run(j);
    ASSERT_FALSE(r.error) << tmpl << ": " << r.error->msg;
    ASSERT_EQ(r.calls.size(), 1u) << tmpl << ": text " << r.text;
    expect_weather_or_add(r.calls[0], tmpl);
    EXPECT_EQ(r.calls[0].index, 0);
    EXPECT_EQ(r.text, "") << tmpl;  // a forced reply is the call alone, not even whitespace before it
  }
}

// qwen3 (Qwen3 template: <think> blocks) never ends its reasoning by itself: the budget ends it,
// then the forced call follows. Without the budget the reply is reasoning to num_predict.
TEST_F(EngineJobs, ThinkingBudgetEndsTheReasoningThenTheCall) {
  NURL_REQUIRE_TESTDATA();
  for (int budget : {0, 40}) {
    auto j = job("", kTools);
    j->model_name = "qwen3";
    j->spec.path = test::testdata("models/qwen3-F16-embQ4_0.gguf");
    j->tool_choice = "required";
    j->think = "true";
    j->think_budget = budget;
    j->num_predict = 200;
    j->sampling.seed = 5;
    Reply r = run(j);
    ASSERT_FALSE(r.error) << r.error->msg;
    ASSERT_TRUE(r.done);
    EXPECT_FALSE(r.thinking.empty());
    EXPECT_EQ(r.text, "");
    if (budget == 0) {
      EXPECT_TRUE(r.calls.empty());
      EXPECT_EQ(r.done->reason, "length");
      continue;
    }
    ASSERT_GE(r.calls.size(), 1u) << r.thinking;
    for (const auto& c : r.calls) expect_weather_or_add(c, "qwen3");
    EXPECT_EQ(r.done->reason, "stop");
    EXPECT_GT(r.done->eval_count, budget);  // the budget's reasoning tokens, </think>, the call
  }
}

TEST_F(EngineJobs, NamedToolChoiceCallsThatFunction) {
  NURL_REQUIRE_TESTDATA();
  auto j = job("", kTools);  // the model's own Qwen2.5 template
  j->tool_choice = "add";
  j->sampling.seed = 3;
  Reply r = run(j);
  ASSERT_FALSE(r.error) << r.error->msg;
  ASSERT_GE(r.calls.size(), 1u) << r.text;
  for (const auto& c : r.calls) {
    EXPECT_EQ(c.name, "add");
    expect_weather_or_add(c, "qwen2");
  }
}

TEST_F(EngineJobs, LogprobsComeFromTheSampledDistribution) {
  NURL_REQUIRE_TESTDATA();
  auto j = job("");
  j->num_predict = 12;
  j->sampling.temperature = 0;  // greedy: the chosen token is the most likely one
  j->top_logprobs = 3;
  Reply r = run(j);
  ASSERT_FALSE(r.error);
  ASSERT_EQ(r.logprobs.size(), static_cast<size_t>(r.done->eval_count));
  for (const auto& lp : r.logprobs) {
    ASSERT_EQ(lp.top.size(), 3u);
    EXPECT_EQ(lp.top[0].first, lp.token);
    EXPECT_FLOAT_EQ(lp.top[0].second, lp.logprob);
    EXPECT_LE(lp.logprob, 0.0f);
    EXPECT_GE(lp.top[0].second, lp.top[1].second);
    EXPECT_GE(lp.top[1].second, lp.top[2].second);
  }
}

// The reply formats are chosen once from the model's own template and named in the load log:
// Qwen2.5 writes Hermes <tool_call> blocks and has no reasoning, Qwen3 adds <think> blocks, a model
// without a chat template has neither.
TEST(EngineLoad, LogsTheReplyFormatsChosenFromTheTemplate) {
  NURL_REQUIRE_TESTDATA();
  std::mutex mu;
  std::vector<std::string> lines;
  Logger log(
      [&](LogLevel, std::string_view line) {
        std::lock_guard g(mu);
        lines.emplace_back(line);
      },
      LogLevel::info);
  {
    Scheduler s(SchedulerConfig{}, engine_loader(), log);
    for (const char* m : {"qwen2-F16-embQ4_0", "qwen3-F16-embQ4_0", "stories260K"}) {
      auto j = std::make_shared<Job>();
      j->kind = Job::Kind::load;
      j->model_name = m;
      j->spec.path = test::testdata(std::string("models/") + m + ".gguf");
      j->spec.n_ctx = 256;
      j->spec.n_parallel = 1;
      j->out = std::make_shared<Channel<Event>>(16);
      ASSERT_TRUE(s.submit(j).ok());
      while (auto e = j->out->pop_blocking()) ASSERT_NE(e->kind, Event::Kind::error) << e->error.msg;
    }
    s.stop();
  }
  auto loaded = [&](const std::string& m) {
    for (const auto& l : lines)
      if (l.find("scheduler: loaded " + m + " in ") != std::string::npos) return l;
    return std::string();
  };
  EXPECT_NE(loaded("qwen2-F16-embQ4_0").find(" tools=hermes thinking=none)"), std::string::npos) << loaded("qwen2-F16-embQ4_0");
  EXPECT_NE(loaded("qwen3-F16-embQ4_0").find(" tools=hermes thinking=think)"), std::string::npos) << loaded("qwen3-F16-embQ4_0");
  EXPECT_NE(loaded("stories260K").find(" tools=none thinking=none)"), std::string::npos) << loaded("stories260K");
}

}  // namespace
}  // namespace nurl::sched
